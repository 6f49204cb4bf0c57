"""engines/dask/views.py: a Dask run's report, workbook and charts. A run small enough to show
whole draws the local engine's charts byte for byte and its report word for word, but for
saying it ran on Dask; a sampled one summarizes every scenario (the local Summary's counts,
series, critical batches and findings) and says how many partitions and scenarios."""

from __future__ import annotations

import re
from pathlib import Path

import openpyxl
import pandas as pd
import pytest

distributed = pytest.importorskip("distributed")

import pipeline  # noqa: E402
from pipeline.engines.dask import run as dask_run  # noqa: E402
from pipeline.engines.dask.run import run_dask  # noqa: E402
from pipeline.engines.dask.views import ROWS_IN  # noqa: E402
from tests.helpers import ROOT, write_scenarios  # noqa: E402

SAMPLED = """
name,op,hardware,B,D,F,bytes,chips,measured_seconds
grid,matmul,h100|mi300x,1..20000,256..4096*2,4096,,,
tp,matmul,b200,1..2000,8192,8192,,,1e-4
ag,all_gather,tpu-v5e,,,,1000..100000000000*10,16,
"""
TEXT_COLUMNS = {c: str for c in ("name", "series", "hardware", "bound")}


def _text(html: str) -> str:
    """The report without its embedded images and start time (as written, not as run)."""
    html = re.sub(r"data:image/png;base64,[^\"]+", "IMG", html)
    return re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", "TIME", html)


def test_a_small_run_draws_what_the_local_engine_draws(tmp_path, cluster, monkeypatch):
    monkeypatch.setattr(dask_run, "MIN_PARTITION_ROWS", 1)  # partitions cut inside series
    source = ROOT / "scenarios" / "q1-q5.csv"
    local = pipeline.analyze(source).write(tmp_path / "local" / "q1-q5").folder
    got = run_dask(source, tmp_path / "dask", scheduler=cluster.scheduler_address,
                   partition_rows=300)  # fmt: skip
    assert got.partitions == 4 and not got.record.sampled
    pngs = sorted(p.relative_to(local) for p in (local / "plots").glob("*.png"))
    assert pngs and pngs == sorted(
        p.relative_to(got.folder) for p in (got.folder / "plots").glob("*.png")
    )
    for png in pngs:
        assert (got.folder / png).read_bytes() == (local / png).read_bytes(), png
    mine = _text((got.folder / "report.html").read_text(encoding="utf-8"))
    theirs = _text((local / "report.html").read_text(encoding="utf-8"))
    note = "Computed by the Dask engine in 4 partitions: 1,035 scenarios, every one in " + ROWS_IN
    assert note in mine and note not in theirs
    notes = r'<div class="notices compact">.*?</div>'
    mine = re.sub(notes, "", mine.replace(ROWS_IN, "results.csv"), count=1, flags=re.S)
    assert mine == re.sub(notes, "", theirs, count=1, flags=re.S)  # word for word
    answer = openpyxl.load_workbook(got.folder / "workbook.xlsx", read_only=True)["Answer"]
    local_answer = openpyxl.load_workbook(local / "workbook.xlsx", read_only=True)["Answer"]
    cells = [[c for c in row if c is not None] for row in answer.iter_rows(values_only=True)]
    want = [[c for c in row if c is not None] for row in local_answer.iter_rows(values_only=True)]
    assert [r for r in want if r not in cells] == []
    assert [r for r in cells if r not in want] == [
        ["See the Summary sheet: 1 notice about this run."]
    ]


def test_a_sampled_run_summarizes_every_scenario(tmp_path, cluster):
    path = write_scenarios(tmp_path, SAMPLED)
    local = pipeline.analyze(path)
    got = run_dask(path, tmp_path / "out", scheduler=cluster.scheduler_address,
                   partition_rows=33_333)  # fmt: skip
    n = len(local.results)
    assert got.scenarios == n == 2 * 20_000 * 5 + 2_000 + 9 and got.partitions == 7
    record = got.record
    assert record.sampled and len(record.results) < 60_000 < n
    s, want = record.summary, local.summary
    assert s.scenarios == n and dict(s.bounds) == dict(want.bounds)
    assert s.not_fitting == want.not_fitting
    for table in ("per_hardware", "per_op", "derated", "chips"):
        pd.testing.assert_frame_equal(getattr(s, table), getattr(want, table), check_dtype=False,
                                      check_categorical=False, check_index_type=False)  # fmt: skip
    pd.testing.assert_frame_equal(s.lines, want.lines, check_dtype=False, check_categorical=False)
    assert dict(s.bottom) == dict(want.bottom)
    for key, table in want.findings.items():
        if isinstance(table, pd.DataFrame):
            pd.testing.assert_frame_equal(
                s.findings[key].astype(TEXT_COLUMNS).reset_index(drop=True),
                table.astype(TEXT_COLUMNS).reset_index(drop=True), check_dtype=False)  # fmt: skip
        else:
            assert s.findings[key] == table, key
    report = (got.folder / "report.html").read_text(encoding="utf-8")
    assert f"Computed by the Dask engine in 7 partitions: {n:,} scenarios" in report
    assert f"a sample of {len(record.results):,}" in report
    assert "results.csv" not in report  # every mention names the partitions instead
    book = openpyxl.load_workbook(got.folder / "workbook.xlsx", read_only=True)
    assert book["Results"].max_row == len(record.results) + 1
    text = "\n".join(
        str(c) for row in book["Summary"].iter_rows(values_only=True) for c in row if c
    )
    assert "Computed by the Dask engine in 7 partitions" in text
    answer = "\n".join(
        str(c) for row in book["Answer"].iter_rows(values_only=True) for c in row if c
    )
    assert f"Results: a sample of the scenarios (all are in {ROWS_IN})" in answer
    plots = {p.name for p in Path(got.folder, "plots").glob("*.png")}
    assert {"summary.png", "roofline-h100.png", "roofline-mi300x.png", "fleet-grid.png"} <= plots
