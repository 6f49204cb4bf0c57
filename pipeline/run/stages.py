"""The output jobs of a run, each writing its own file(s) into the run's temp folder from
the context `run.write` hands it: a chart, the tables, the workbook, the report. Each returns
the notices it has to add (what it had to leave out) and the files it wrote."""

from __future__ import annotations

import gc
import shutil
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.record import Record
from pipeline.render.charts import Chart, PlannedChart, png
from pipeline.render.report.budget import render_report_within
from pipeline.render.workbook.book import write_workbook
from pipeline.run.baseline import Baseline
from pipeline.run.tables import write_changes_csv, write_csv, write_parquet

Done = tuple[list[str], list[Path]]  # (notices, files written)


@dataclass(frozen=True, eq=False)
class Context:
    """What every job of one write reads: the record, the temp folder, the options, the charts
    kept and the notices known before the jobs (passed explicitly: no module state, so two
    writes at once, in two threads, never see each other's)."""

    record: Record
    tmp: Path
    options: object  # run.write.Options
    planned: tuple[PlannedChart, ...]
    notices: tuple[str, ...]
    name: str
    about: dict[str, str] = field(default_factory=dict)  # notice -> the one output it is about
    baseline: Baseline | None = None  # the run compared with an earlier one (run --baseline)
    drawn: ChartsDrawn | None = None  # on forked workers: when every chart's file is whole

    @property
    def charts(self) -> list[Chart]:
        return [p.chart for p in self.planned]

    def notices_for(self, output: str) -> list[str]:
        """The notices `output` shows: those about it, and those about every output."""
        return [n for n in self.notices if self.about.get(n, output) == output]


class ChartsDrawn:
    """How many of a write's charts are drawn, shared by the worker processes forked after it
    is made: the workbook and the report, which embed the charts, wait for the last one (the
    jobs are queued charts first, so every chart is being drawn by then)."""

    def __init__(self, total: int, context) -> None:
        self.total, self._count, self._all = total, context.Value("i", 0), context.Event()
        if not total:
            self._all.set()

    def one_more(self) -> None:
        with self._count.get_lock():
            self._count.value += 1
            if self._count.value == self.total:
                self._all.set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._all.wait(timeout)


def plots(ctx: Context, chart: Chart) -> Done:
    """One chart's PNG."""
    planned = next(p for p in ctx.planned if p.chart == chart)
    path = ctx.tmp / chart.path
    path.parent.mkdir(parents=True, exist_ok=True)
    with _no_cycle_collection():
        drawn = png(planned.build())
    path.write_bytes(drawn)
    if ctx.drawn is not None:
        ctx.drawn.one_more()
    return [], [path]


@contextmanager
def _no_cycle_collection():
    """Python's cycle collector off while a chart is built and drawn, then one pass over what
    it allocated: a matplotlib Figure is tens of thousands of objects, and the collector's
    passes (one per 700 new objects, and now and then over the older ones too) took about a
    tenth of a chart's time. That one pass frees the Figure (every object of it is younger
    than the pass), so a run of many charts holds one Figure at a time, as before."""
    if not gc.isenabled():  # the caller's own choice (a notebook's): left as it is
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect(0)


def _charts_drawn(ctx: Context) -> None:
    if ctx.drawn is not None:
        ctx.drawn.wait()


def results(ctx: Context) -> Done:
    """results.csv, results.parquet and (when rows were rejected) errors.csv."""
    analysis, tmp = ctx.record, ctx.tmp
    frame = analysis.results
    files = [write_csv(frame, tmp / "results.csv"), write_parquet(frame, tmp / "results.parquet")]
    if len(analysis.problem_list):
        files.append(write_csv(analysis.problems, tmp / "errors.csv"))
    if ctx.baseline is not None:
        write_changes_csv(ctx.baseline.changes, tmp / "changes.csv")
        files.append(tmp / "changes.csv")
    return [], files


def workbook(ctx: Context) -> Done:
    """workbook.xlsx, its Charts sheet embedding the charts drawn (its data sheets written
    while they are drawn)."""
    options, tmp = ctx.options, ctx.tmp

    def charts() -> list[tuple[Chart, Path]]:
        _charts_drawn(ctx)
        return [(c, tmp / c.path) for c in ctx.charts]

    # the writer's spool lives in the run's temp folder: never left in TMPDIR, and a full
    # disk there is this run's failure, not another program's
    spool = tmp / ".workbook-spool"
    spool.mkdir()
    try:
        own = write_workbook(
            ctx.record,
            tmp / "workbook.xlsx",
            ctx.name,
            charts,
            ctx.notices_for("workbook"),
            max_rows=options.workbook_rows,
            max_input_rows=options.workbook_input_rows,
            spool=spool,
            baseline=ctx.baseline,
        )
    finally:
        shutil.rmtree(spool, ignore_errors=True)
    return own, [tmp / "workbook.xlsx"]


def report(ctx: Context) -> Done:
    """report.html, the charts embedded, within its size budget (render.report.budget)."""
    options, tmp = ctx.options, ctx.tmp
    _charts_drawn(ctx)
    charts = [(c, (tmp / c.path).read_bytes()) for c in ctx.charts]
    notices = ctx.notices_for("report")
    html, thinned = render_report_within(
        ctx.record, ctx.name, charts, notices, options.report_rows, baseline=ctx.baseline
    )
    (tmp / "report.html").write_text(html, encoding="utf-8", newline="\n")
    return thinned, [tmp / "report.html"]


STAGES = {"plots": plots, "results": results, "workbook": workbook, "report": report}
