"""Writing an analysis's outputs into its folder (docs/outputs.md): results.csv and
results.parquet, errors.csv, the charts, workbook.xlsx, report.html and manifest.json, built in
a temporary folder and swapped in whole (run.folder).

The outputs are independent jobs: each chart, the tables, then the workbook and the report
(which embed the charts). On Linux they run in worker processes forked from this one, so
every worker already holds the analysis and only job names travel; elsewhere, or for one
worker, they run here. Either way each job writes its own file, so the outputs are the same.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import suppress
from dataclasses import dataclass, field, replace
from pathlib import Path

from pipeline.errors import OutputError, described
from pipeline.i18n import _
from pipeline.limits import (
    DEFAULT_MAX_CHARTS,
    DEFAULT_TABLE_ROWS,
    DEFAULT_WORKBOOK_INPUT_ROWS,
    DEFAULT_WORKBOOK_ROWS,
)
from pipeline.record import Record
from pipeline.render import format as fmt
from pipeline.render.charts import PlannedChart, fleet_cap_notice, left_out_notice, plan_charts
from pipeline.render.charts import load as load_charts
from pipeline.render.charts.step_sweep_data import model_cap_notice, model_frame
from pipeline.render.report.page import table_cap_notices
from pipeline.render.workbook.book import cap_notices
from pipeline.run import stages
from pipeline.run.baseline import Baseline
from pipeline.run.children import held_signals, init_worker
from pipeline.run.folder import OutputFolder
from pipeline.run.manifest import file_entries, write_manifest
from pipeline.run.summary_file import write_summary
from pipeline.summary.grids import chart_frame
from pipeline.summary.turns import sweep_lines

PARALLEL_MIN_JOBS = 4  # fewer jobs run faster here than with worker start-up
Progress = Callable[[str], None]


@dataclass(frozen=True)
class Options:
    """What a run writes, and its caps (docs/outputs.md#caps)."""

    plots: bool = True
    workbook: bool = True
    report: bool = True
    max_charts: int = DEFAULT_MAX_CHARTS
    workbook_rows: int = DEFAULT_WORKBOOK_ROWS
    workbook_input_rows: int = DEFAULT_WORKBOOK_INPUT_ROWS
    report_rows: int = DEFAULT_TABLE_ROWS
    force: bool = False
    workers: int | None = None  # None: every core when there are enough jobs


@dataclass(frozen=True)
class Written:
    """What `Record.write` wrote: the folder, its files, what the caps left out, seconds."""

    folder: Path
    files: tuple[Path, ...]
    notices: tuple[str, ...]
    timings: dict = field(default_factory=dict)
    changes: dict | None = None  # manifest.json's "changes", when compared with a baseline


@dataclass
class _Job:
    """A planned output: what the worker needs besides the analysis (small, pickled)."""

    stage: str  # "plots", "results", "workbook" or "report"
    args: tuple = ()


def write_outputs(
    analysis: Record,
    target: Path,
    options: Options,
    protect: Sequence[Path] = (),
    progress: Progress | None = None,
    read: Sequence[Path] = (),
    baseline: Baseline | None = None,
) -> Written:
    """Write every output of `analysis` into `target` (see the module). The folder may hold
    none of `protect` (files the caller names) nor of `read` (every file the analysis read,
    by the absolute path it had when read). `baseline`: the changes since an earlier run,
    shown by changes.csv, the report, the workbook and the manifest."""
    target, protect = check_arguments(target, options, protect)
    protect = [*protect, *read]
    name = Path(os.path.abspath(target)).name
    step = progress or (lambda stage: None)
    t0 = time.perf_counter()
    with OutputFolder(target, inputs=protect, force=options.force) as tmp:
        seconds, notices, entries = write_views(analysis, tmp, options, name, step, baseline)
        files = [tmp / e["path"] for e in entries]
        timings = {**analysis.timings, **seconds, "total": time.perf_counter() - t0}
        changes = baseline.counts() if baseline is not None else None
        files.append(write_manifest(tmp, analysis, name, notices, entries, timings, changes))
        step("manifest")
    return Written(
        target,
        tuple(target / p.relative_to(tmp) for p in files),
        tuple(notices),
        timings,
        changes,
    )


def write_views(
    analysis: Record,
    tmp: Path,
    options: Options,
    name: str,
    step: Progress,
    baseline: Baseline | None = None,
    tables: bool = True,
    notices: Sequence[str] = (),
) -> tuple[dict[str, float], list[str], list[dict]]:
    """Write the outputs of `analysis` into the temp folder `tmp`: summary.json, the charts,
    the workbook and the report (as `options` say), and with `tables` results.csv/.parquet
    and errors.csv.
    Returns the seconds per stage, every notice (`notices`, known before, first) and the
    manifest entries of the files written, in the manifest's order."""
    planned = _charts(analysis, options)
    kept = planned[: options.max_charts]
    caps = _cap_notices(analysis, options, planned, kept)
    notices = [*notices, *derated_notices(analysis.summary), *(text for _, text in caps)]
    about = {text: output for output, text in caps if output}  # shown by that output only
    ctx = stages.Context(analysis, tmp, options, tuple(kept), tuple(notices), name, about, baseline)
    # the biggest charts first, so that the last one to finish is a small one
    plots = [_Job("plots", (p.chart,)) for p in sorted(kept, key=lambda p: -p.cost)]
    seconds, later, entries = _run_jobs(ctx, plots, step, tables)
    entries += file_entries(tmp, [write_summary(tmp, analysis)])
    order = ["results.csv", "results.parquet", "errors.csv", "changes.csv", "summary.json",
             *(c.path for c in ctx.charts), "workbook.xlsx", "report.html"]  # fmt: skip
    entries.sort(key=lambda e: order.index(e["path"]))
    return seconds, [*notices, *later], entries


def check_arguments(target, options: Options, protect) -> tuple[Path, list[Path]]:
    """`write()`'s arguments as the run uses them, or a TypeError / ValueError saying which
    argument is wrong and what it takes (a notebook passes anything)."""
    if not isinstance(target, str | os.PathLike) or isinstance(target, bytes):
        raise TypeError(f"out_dir must be a folder path (str or Path), not {described(target)}")
    _check_path("out_dir", target)
    for flag in ("plots", "workbook", "report", "force"):
        if not isinstance(getattr(options, flag), bool):
            raise TypeError(
                f"{flag} must be True or False, not {described(getattr(options, flag))}"
            )
    for cap in ("max_charts", "workbook_rows", "workbook_input_rows", "report_rows"):
        value = getattr(options, cap)
        if not _whole(value) or value < 0:
            raise (ValueError if _whole(value) else TypeError)(
                f"{cap} must be a whole number, 0 or more, not {described(value)}"
            )
    if options.workers is not None and (not _whole(options.workers) or options.workers < 1):
        raise (ValueError if _whole(options.workers) else TypeError)(
            f"workers must be a whole number, 1 or more (or None), not {described(options.workers)}"
        )
    if isinstance(protect, str | bytes | os.PathLike):
        protect = [protect]
    elif not isinstance(protect, list | tuple | set | frozenset):
        raise TypeError(f"protect must list file paths, not {described(protect)}")
    paths = []
    for path in protect:
        if not isinstance(path, str | os.PathLike) or isinstance(path, bytes):
            raise TypeError(f"protect must list file paths, not {described(path)}")
        _check_path("protect", path)
        paths.append(Path(path))
    return Path(target), paths


def _check_path(argument: str, path) -> None:
    text = os.fspath(path)
    if not isinstance(text, str) or text == "" or "\x00" in text:
        raise ValueError(
            f"{argument} must be a non-empty path without NUL bytes, not {described(path)}"
        )


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _charts(analysis: Record, options: Options) -> list[PlannedChart]:
    """Every chart the run could draw (none with plots off)."""
    if not options.plots:
        return []
    s = analysis.summary
    frame = chart_frame(analysis)
    grids = getattr(s, "grids", None)  # a Dask run's: every scenario's points, binned
    return plan_charts(frame, list(analysis.hardware), s.per_hardware, s.overrides, grids=grids,
                       fleet=s.fleet, curves=s.fleet_curves, steps=model_frame(analysis),
                       roofs=s.roofs, lines=sweep_lines(frame), serving=s.serving,
                       serving_curves=s.serving_curves, training=s.training)  # fmt: skip


def derated_notices(summary) -> list[str]:
    """Say that rows are timed at less than the nominal rates, and where it shows."""
    derated = summary.chips[summary.chips["derated_rows"] > 0]
    if derated.empty:
        return []
    n = int(derated["derated_rows"].sum())
    chips = ", ".join(sorted(derated.index.astype(str)))
    return [
        _(
            "{n} of {total} scenarios are timed at derated rates (an efficiency below 1, on "
            "{chips}); the Hardware sheet and the report show derated rates beside the nominal "
            "ones, and a roofline draws derated ops with FLOPs under a dashed roof.",
            n=fmt.count(n),
            total=fmt.count(summary.scenarios),
            chips=chips,
        )
    ]


def _cap_notices(analysis, options, planned, kept) -> list[tuple[str | None, str]]:
    """What the caps leave out, known before anything is drawn: (the output it is about, or
    None for every output that shows the charts, the notice)."""
    notices: list[tuple[str | None, str]] = []
    if len(kept) < len(planned):
        left_out = left_out_notice(planned[len(kept) :], options.max_charts, len(planned))
        notices.append((None, left_out))
    if options.plots and (fleet := fleet_cap_notice(analysis.summary.fleet)):
        notices.append((None, fleet))
    if options.plots and (model := model_cap_notice(model_frame(analysis))):
        notices.append((None, model))
    if options.workbook:
        s = analysis.summary
        notices += [
            ("workbook", text)
            for text in cap_notices(
                options.workbook_rows,
                options.workbook_input_rows,
                len(analysis.results) if analysis.sampled else s.scenarios,
                s.source_rows,
                len(analysis.problem_list),
                analysis.rows_in,
            )
        ]
    if options.report:
        notices += [("report", text) for text in table_cap_notices(analysis, options.report_rows)]
    return notices


def _run_jobs(ctx: stages.Context, plots: list[_Job], step: Progress, tables: bool = True):
    """Run the jobs; seconds per stage, the notices the jobs return, their manifest entries.

    In one queue, taken in order by every worker: the tables (they need no chart), the charts,
    then the workbook (its data sheets written while the last charts are drawn; it embeds
    them) and the report (it embeds them too)."""
    options = ctx.options
    jobs = [*([_Job("results")] if tables else []), *plots]
    jobs += [*([_Job("workbook")] if options.workbook else []),
             *([_Job("report")] if options.report else [])]  # fmt: skip
    count = _worker_count(options.workers, len(jobs))
    seconds: dict[str, float] = {}
    notices: list[str] = []
    entries: list[dict] = []

    def note(done: tuple) -> None:
        nonlocal notices
        notices += _note(seconds, step, entries, done)

    if count <= 1:
        for job in jobs:
            note(run_job(ctx, job))
        return seconds, notices, entries
    # A pool that notices a worker's death: every job still waiting then fails at once
    # (BrokenProcessPool) instead of waiting forever. Its processes are forked before its
    # manager thread starts, from this (the main) thread, so they die with the run
    # (init_worker); each inherits this write's context through the fork, never pickled.
    fork = multiprocessing.get_context("fork")
    ctx = replace(ctx, drawn=stages.ChartsDrawn(len(plots), fork))
    pool = None
    try:
        if plots:  # matplotlib imported here, once, not in each worker
            load_charts()
        # Ctrl-C and SIGTERM wait while the pool starts: one landing between its forks would
        # be lost in an at-fork handler (the run would go on) or leave it half started
        with held_signals():
            pool = ProcessPoolExecutor(
                count, mp_context=fork, initializer=_init_worker, initargs=(os.getpid(), ctx)
            )
            pending = [pool.submit(_run_in_worker, job) for job in jobs]  # starts them
        for future in pending:  # a failed chart is met before the jobs waiting for it
            note(future.result())
    except BrokenProcessPool as exc:
        raise OutputError(
            "writing the outputs failed: a worker process died (out of memory, or killed)"
        ) from exc
    except BaseException:
        # Ctrl-C, SIGTERM or a failed job: stop the workers now, not after their jobs
        if pool is not None:
            _kill_workers(pool)
        raise
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
    return seconds, notices, entries


def _kill_workers(pool: ProcessPoolExecutor) -> None:
    """Kill a pool's worker processes (Python 3.14's kill_workers(), else its process table)."""
    kill = getattr(pool, "kill_workers", None)
    if kill is not None:
        kill()
        return
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        with suppress(OSError, ValueError, AttributeError):
            process.kill()


def _note(seconds: dict[str, float], step: Progress, entries: list, done: tuple) -> list[str]:
    stage, spent, notices, files = done
    seconds[stage] = seconds.get(stage, 0.0) + spent
    entries += files
    step(stage)
    return notices


def _worker_count(workers: int | None, jobs: int) -> int:
    """Worker processes: fork only (Linux, no other Python thread running), else none."""
    forkable = sys.platform.startswith("linux") and threading.active_count() == 1
    if workers is not None:  # a whole number from 1 (check_arguments)
        return min(workers, jobs) if forkable else 1
    if not forkable or jobs < PARALLEL_MIN_JOBS:
        return 1
    return max(1, min(os.cpu_count() or 1, jobs))


# The context of the write a worker process serves: set once in each worker, by the pool's
# initializer, in a process that serves that one write only (the parent never sets it).
_worker_context: list[stages.Context] = []


def _init_worker(parent_pid: int, ctx: stages.Context) -> None:
    init_worker(parent_pid)
    # what the worker inherits lives as long as it does: its collector never walks it (every
    # walk wrote to each object, copying the parent's pages, the analysis' among them)
    gc.freeze()
    _worker_context.append(ctx)


def _run_in_worker(job: _Job) -> tuple[str, float, list[str], list[dict]]:
    return run_job(_worker_context[0], job)


def run_job(ctx: stages.Context, job: _Job) -> tuple[str, float, list[str], list[dict]]:
    """One output job of the write `ctx`: (stage, seconds, notices, the manifest entries of its
    files, hashed here, in parallel with the other jobs). A write the system refuses (a full
    disk, a file-size limit) is an OutputError naming the file (the workbook writer names its
    own, panics included)."""
    start = time.perf_counter()
    try:
        notices, files = stages.STAGES[job.stage](ctx, *job.args)
        entries = file_entries(ctx.tmp, files)
    except OSError as exc:
        raise OutputError(f"writing {_output(job)} failed: {exc.strerror or exc}") from None
    return job.stage, time.perf_counter() - start, list(notices), entries


_OUTPUTS = {"results": "results.csv", "workbook": "workbook.xlsx", "report": "report.html"}


def _output(job: _Job) -> str:
    """The file a job writes, as its message names it."""
    return job.args[0].path if job.stage == "plots" else _OUTPUTS[job.stage]
