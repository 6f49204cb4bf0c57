"""One run end to end: load -> compute -> results/errors/manifest (+ plots, workbook, report)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pyarrow as pa

from pipeline import __version__, workbook_job
from pipeline.csvout import write_csv
from pipeline.errors import OutputError, RejectedRows, RowProblem
from pipeline.excel import workbook_cap_notices
from pipeline.hardware import Catalog, catalog_records
from pipeline.limits import (
    DEFAULT_MAX_CHARTS,
    DEFAULT_MAX_ROWS,
    DEFAULT_TABLE_ROWS,
    DEFAULT_WORKBOOK_INPUT_ROWS,
    DEFAULT_WORKBOOK_ROWS,
)
from pipeline.meta import Chart, RunMeta
from pipeline.outdir import TOOL, OutputFolder, temp_name
from pipeline.parquetout import write_parquet
from pipeline.report import render_index, render_report, table_cap_notices
from pipeline.roofline import compute_roofline
from pipeline.scenarios import Loaded, load_scenarios
from pipeline.workbook_process import Spawned

BOUNDS = ("compute", "memory", "network")
STAGES = ("load", "compute", "plots", "results", "report", "workbook", "manifest")
Progress = Callable[[str], None]


@dataclass(frozen=True)
class RunOptions:
    """What a run writes and its limits."""

    plots: bool = True
    workbook: bool = True
    report: bool = True
    strict: bool = False
    max_rows: int = DEFAULT_MAX_ROWS
    max_charts: int = DEFAULT_MAX_CHARTS
    workbook_rows: int = DEFAULT_WORKBOOK_ROWS
    workbook_input_rows: int = DEFAULT_WORKBOOK_INPUT_ROWS
    report_rows: int = DEFAULT_TABLE_ROWS
    chart_workers: int | None = None  # None: every core when it pays
    force: bool = False  # replace an output folder of ours even if it holds other files


@dataclass
class RunSummary:
    """What one input produced: counts for the summary line and the paths written."""

    input_path: Path
    out_dir: Path | None
    scenarios: int = 0
    bounds: dict[str, int] = field(default_factory=dict)
    rejected: int = 0
    not_fitting: int = 0
    written: list[Path] = field(default_factory=list)
    problems: list[RowProblem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)


def sanitize_name(text: str) -> str:
    """A file-system-safe name: only [a-z0-9._-], never empty, never a dot-file or '..'."""
    name = re.sub(r"[^a-z0-9._-]+", "-", text.lower()).strip("-.")
    return name or "run"


def file_sha256(path: Path) -> str:
    """Hex SHA-256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def validate_file(path: Path, catalog: Catalog, max_rows: int = DEFAULT_MAX_ROWS) -> Loaded:
    """Load and validate only (for `pipeline validate`)."""
    return load_scenarios(path, catalog, max_rows=max_rows)


def planned_stages(options: RunOptions) -> list[str]:
    """The stages a run goes through, in the order they finish (for progress bars)."""
    optional = {"plots": options.plots, "workbook": options.workbook, "report": options.report}
    return [s for s in STAGES if optional.get(s, True)]


def run_file(
    path: Path,
    out_root: Path,
    catalog: Catalog,
    options: RunOptions = RunOptions(),
    *,
    out_name: str | None = None,
    progress: Progress | None = None,
    spawned: Spawned | None = None,
    inputs: tuple[Path, ...] = (),
) -> RunSummary:
    """Run one scenario file and write its output folder atomically; returns what was done.

    The output stages overlap: for big inputs the workbook is written by another process,
    started before the file is loaded (see workbook_job; `spawned` is one started already),
    while the charts, results.csv/.parquet and the report are written here, on the other
    core. Small inputs draw their charts in worker processes on every core.

    `inputs` are every file the command reads (besides `path`): an output folder holding one
    of them is never replaced (see outdir).
    """
    try:
        return _run_file(path, out_root, catalog, options, out_name, progress, spawned, inputs)
    finally:
        if spawned is not None:  # stopped here whether or not the run got as far as using it
            spawned.stop()


def _run_file(path, out_root, catalog, options, out_name, progress, spawned, inputs):
    step = progress or (lambda stage: None)
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    started = datetime.now(UTC).isoformat(timespec="seconds")
    run_name = out_name or sanitize_name(Path(path).stem)
    target = Path(out_root) / run_name
    folder = OutputFolder(target, inputs=(Path(path), *inputs), force=options.force)
    with folder as tmp:
        workbook = None
        if options.workbook:
            job = workbook_job.Job(
                Path(path), tmp / "workbook.xlsx", tmp, catalog, options.max_rows,
                options.workbook_rows, options.workbook_input_rows,
            )  # fmt: skip
            workbook = workbook_job.start(job, spawned)
        try:
            loaded = load_scenarios(path, catalog, max_rows=options.max_rows)
            timings["load"] = time.perf_counter() - t0
            step("load")
            summary = RunSummary(
                input_path=Path(path),
                out_dir=target,
                problems=loaded.problems,
                warnings=loaded.warnings,
                rejected=loaded.rejected_lines,
            )
            if options.strict and loaded.problems:
                raise RejectedRows(
                    f"{path}: {loaded.rejected_lines} row(s) rejected and --strict is set; "
                    "nothing written",
                    loaded.problems,
                    loaded.warnings,
                )
            if workbook is not None:  # a small file whose sweeps expand to many scenarios
                workbook = workbook_job.for_run(workbook, len(loaded.frame))
            written, meta, results, files = _run_outputs(
                tmp, loaded, catalog, options, run_name, started, step, timings, summary,
                workbook,
            )  # fmt: skip
        finally:
            if workbook is not None:
                workbook.stop()
        timings["total"] = time.perf_counter() - t0
        written.append(_write_manifest(tmp, meta, loaded, results, files, timings))
        step("manifest")
    summary.written = [target / p.relative_to(tmp) for p in written]
    summary.timings = timings
    return summary


def _run_outputs(
    tmp, loaded, catalog, options, run_name, started, step, timings, summary, workbook
) -> tuple[list[Path], RunMeta, pd.DataFrame, dict[Path, dict]]:
    """Compute, then write every output of one run into `tmp`; the paths written, the run's
    metadata, its results and the manifest entries of the files written."""

    def timed(stage: str, fn, *args, **kwargs):
        start = time.perf_counter()
        out = fn(*args, **kwargs)
        timings[stage] = time.perf_counter() - start
        step(stage)
        return out

    results = timed("compute", compute_roofline, loaded.frame)
    path = loaded.path
    summary.scenarios = len(results)
    counts = results["bound"].value_counts()
    summary.bounds = {b: int(counts.get(b, 0)) for b in BOUNDS}
    summary.not_fitting = int((~results["fits"].fillna(True)).sum())
    errors = errors_frame(loaded.problems)
    hardware = catalog_records(catalog, sorted(results["hardware"].astype(str).unique()))
    notices: list[str] = []  # what the caps leave out, known before any output is written
    if options.workbook:
        notices += workbook_cap_notices(
            options.workbook_rows,
            options.workbook_input_rows,
            len(results),
            loaded.source_rows,
            len(errors),
        )
    if options.report:
        notices += table_cap_notices(results, options.report_rows)
    meta = RunMeta(
        run_name=run_name,
        input_path=str(path),
        input_sha256=file_sha256(Path(path)),
        started=started,
        tool_version=__version__,
        catalog_version=catalog.version,
        source_rows=loaded.source_rows,
        scenarios=len(results),
        rejected_rows=loaded.rejected_lines,
        notices=tuple(notices),
        warnings=tuple(loaded.warnings),
    )
    if workbook is not None:
        workbook.submit(meta, results, loaded.inputs, errors, hardware, loaded.frame["line"])
    # charts first, from this single-threaded process, so their workers can fork. matplotlib
    # is imported here, not at the top: a third of a second the workbook process does not wait
    from pipeline.plots import render_charts

    chart_objs: list[Chart] = []
    chart_notices: list[str] = []
    if options.plots:
        chart_set = timed(
            "plots",
            render_charts,
            results,
            hardware,
            tmp / "plots",
            max_charts=options.max_charts,
            workers=_chart_workers(options, workbook),
        )
        chart_objs, chart_notices = chart_set.charts, chart_set.notices
    if workbook is not None:
        workbook.send_charts(chart_objs, chart_notices)
    separate = workbook is not None and workbook.process is not None
    with _one_arrow_thread(separate):
        written = timed("results", _write_tables, tmp, results, errors)
    written += [tmp / c.path for c in chart_objs]
    notices = list(dict.fromkeys([*chart_notices, *notices]))
    meta = replace(meta, notices=tuple(notices))
    if options.report:  # while the workbook process is still writing
        notices += timed(
            "report",
            render_report,
            tmp / "report.html",
            meta,
            results,
            errors,
            hardware,
            chart_objs,
            tmp,
            max_table_rows=options.report_rows,
        )
        written.append(tmp / "report.html")
    hashed = _file_entries(tmp, written)  # while the workbook process is still writing
    if workbook is not None:
        notices += workbook.finish()
        timings["workbook"] = workbook.seconds
        step("workbook")
        written.append(tmp / "workbook.xlsx")
    summary.notices = list(dict.fromkeys(notices))
    return written, meta, results, _file_entries(tmp, written, hashed)


@contextmanager
def _one_arrow_thread(active: bool):
    """While the workbook process holds one of the cores, keep Arrow's writers to the other."""
    if not active:
        yield
        return
    before = pa.cpu_count()
    pa.set_cpu_count(1)
    try:
        yield
    finally:
        pa.set_cpu_count(before)


def _chart_workers(options: RunOptions, workbook) -> int | None:
    """Chart processes: while a workbook process holds one core, draw on the other only."""
    if options.chart_workers is not None:
        return options.chart_workers
    if workbook is not None and workbook.process is not None:
        return 1
    return None


def _write_tables(tmp: Path, results: pd.DataFrame, errors: pd.DataFrame) -> list[Path]:
    written = [write_csv(results, tmp / "results.csv")]
    written.append(write_parquet(results, tmp / "results.parquet"))
    if len(errors):
        written.append(write_csv(errors, tmp / "errors.csv"))
    return written


def index_entry(summary: RunSummary, run_name: str) -> dict:
    """One run's line on the batch index page."""
    b = summary.bounds
    has_report = any(p.name == "report.html" for p in summary.written)
    return {
        "run_name": run_name,
        "input_path": str(summary.input_path),
        "report_href": f"{run_name}/report.html" if has_report else f"{run_name}/",
        "scenarios": summary.scenarios,
        "compute": b.get("compute", 0),
        "memory": b.get("memory", 0),
        "network": b.get("network", 0),
        "not_fitting": summary.not_fitting,
        "rejected": summary.rejected,
        "status": "rows rejected" if summary.rejected else "ok",
    }


def failed_entry(path: Path, run_name: str, message: str) -> dict:
    """The index line of an input that produced nothing."""
    return {
        "run_name": run_name,
        "input_path": str(path),
        "report_href": "",
        "scenarios": 0,
        "compute": 0,
        "memory": 0,
        "network": 0,
        "not_fitting": 0,
        "rejected": 0,
        "status": f"failed: {message}",
    }


def write_index(out_root: Path, runs: list[dict]) -> Path:
    """OUTPUT_DIR/index.html linking each run's report with its headline counts (atomic)."""
    out_root = Path(out_root)
    out_root.mkdir(parents=True, exist_ok=True)
    tmp = out_root / temp_name("index.html")
    try:
        render_index(tmp, runs)
        os.replace(tmp, out_root / "index.html")
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise OutputError(f"cannot write {out_root / 'index.html'}: {exc}") from exc
    return out_root / "index.html"


def errors_frame(problems: list[RowProblem]) -> pd.DataFrame:
    """Rejected rows as a table: line, name, column, reason."""
    return pd.DataFrame(
        {
            "line": [p.line for p in problems],
            "name": [p.name for p in problems],
            "column": [p.column for p in problems],
            "reason": [p.reason for p in problems],
        },
        columns=["line", "name", "column", "reason"],
    ).astype({"line": "int64"})


def _file_entries(tmp: Path, paths: list[Path], known: dict | None = None) -> dict[Path, dict]:
    """Each file's manifest entry (path, bytes, SHA-256); those in `known` are not read again."""
    known = known or {}
    return {
        p: known.get(p)
        or {"path": str(p.relative_to(tmp)), "bytes": p.stat().st_size, "sha256": file_sha256(p)}
        for p in paths
    }


def _write_manifest(tmp: Path, meta: RunMeta, loaded: Loaded, results, files, timings) -> Path:
    counts = results["bound"].value_counts()
    manifest = {
        "tool": TOOL,
        **meta.as_dict(),
        "rows": {
            "source_rows": loaded.source_rows,
            "scenarios": len(results),
            "rejected_rows": loaded.rejected_lines,
            "problems": len(loaded.problems),
            **{f"{b}_bound": int(counts.get(b, 0)) for b in BOUNDS},
        },
        "files": list(files.values()),
        "timings_seconds": {k: round(v, 6) for k, v in timings.items()},
    }
    path = tmp / "manifest.json"
    path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return path
