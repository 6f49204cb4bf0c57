"""The output jobs of a run, one by one: each writes its own file(s) into the temp folder from
the context it is handed, and returns only the notices it adds."""

from __future__ import annotations

import gc
import multiprocessing

import openpyxl
import pytest
from matplotlib.figure import Figure

from pipeline.run import stages
from pipeline.run.write import Options
from tests.helpers import analyze_rows, assert_png, planned_charts

ROWS = [
    {"name": "sweep", "op": "matmul", "B": "1..8", "D": 4096, "F": 4096, "hardware": "v5e",
     "notes": "n" * 40_000},
    {"name": "typo", "op": "matmul", "B": 1, "D": 2, "F": 3, "hardware": "h10"},
]  # fmt: skip


@pytest.fixture(scope="module")
def analysis():
    return analyze_rows(ROWS)


def context(analysis, tmp, notices=(), charts=True, **options) -> stages.Context:
    """What run.write hands each job; `charts` False: none kept (--no-plots)."""
    planned = tuple(planned_charts(analysis)) if charts else ()
    return stages.Context(analysis, tmp, Options(**options), planned, tuple(notices), "run")


def test_each_chart_is_its_own_png(analysis, tmp_path):
    ctx = context(analysis, tmp_path)
    chart = ctx.charts[1]
    notices, files = stages.plots(ctx, chart)
    assert notices == [] and files == [tmp_path / chart.path]
    assert_png(files[0].read_bytes())
    assert [p.name for p in (tmp_path / "plots").iterdir()] == [files[0].name]


def test_a_chart_job_frees_its_figure_and_leaves_the_collector_as_it_was(analysis, tmp_path):
    """The cycle collector is off while a chart is drawn (a tenth of its time), and its
    Figure is freed when the job ends all the same; a collector turned off by the caller
    stays off."""
    ctx = context(analysis, tmp_path)
    gc.collect()
    stages.plots(ctx, ctx.charts[1])
    assert gc.isenabled()
    assert not [o for o in gc.get_objects() if isinstance(o, Figure)]
    gc.disable()
    try:
        stages.plots(ctx, ctx.charts[0])
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_results_write_the_tables_and_errors_only_when_rows_were_rejected(analysis, tmp_path):
    notices, files = stages.results(context(analysis, tmp_path))
    assert notices == []
    assert [f.name for f in files] == ["results.csv", "results.parquet", "errors.csv"]
    clean = analyze_rows(ROWS[:1])
    (tmp_path / "clean").mkdir()
    _, files = stages.results(context(clean, tmp_path / "clean"))
    assert [f.name for f in files] == ["results.csv", "results.parquet"]


def test_the_workbook_adds_only_notices_not_known_before_and_leaves_no_spool(analysis, tmp_path):
    known = "Results sheet holds the first 4 of 8 rows; results.csv has them all."
    ctx = context(analysis, tmp_path, [known], charts=False, workbook_rows=4)
    notices, files = stages.workbook(ctx)
    assert files == [tmp_path / "workbook.xlsx"]
    assert len(notices) == 2 and all("held more than Excel's 32,767" in n for n in notices)
    assert known not in notices  # the cap's notice was known already: said once
    assert sorted(p.name for p in tmp_path.iterdir()) == ["workbook.xlsx"]  # spool removed
    wb = openpyxl.load_workbook(files[0], read_only=True)
    assert wb.sheetnames == ["Answer", "Summary", "Results", "Hardware", "Inputs", "Errors"]


def test_the_report_embeds_the_charts_drawn(analysis, tmp_path):
    ctx = context(analysis, tmp_path, report_rows=3)
    for chart in ctx.charts:
        stages.plots(ctx, chart)
    notices, files = stages.report(ctx)
    assert notices == [] and files == [tmp_path / "report.html"]
    html = files[0].read_text(encoding="utf-8")
    assert html.count("data:image/png;base64,") == len(ctx.charts)
    assert "4 more rows in results.csv." in html  # 3 shown, and the sweep's slowest past them


def test_each_output_gets_the_notices_about_it_and_those_about_every_output(analysis, tmp_path):
    ctx = stages.Context(analysis, tmp_path, Options(), (), ("all", "wb", "rep"), "run",
                         {"wb": "workbook", "rep": "report"})  # fmt: skip
    assert ctx.notices_for("workbook") == ["all", "wb"]
    assert ctx.notices_for("report") == ["all", "rep"]


def test_the_workbook_and_report_wait_for_the_last_chart_whichever_process_draws_it():
    fork = multiprocessing.get_context("fork")
    drawn = stages.ChartsDrawn(3, fork)
    worker = fork.Process(target=lambda: [drawn.one_more() for _ in range(2)])
    worker.start()
    worker.join()
    assert worker.exitcode == 0
    assert drawn.wait(timeout=0) is False  # two of three drawn
    drawn.one_more()
    assert drawn.wait(timeout=0) is True
    assert stages.ChartsDrawn(0, fork).wait(timeout=0) is True  # no chart to wait for
