"""One run end to end: load -> compute -> results/errors/manifest (+ plots, workbook, report)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from pipeline import __version__
from pipeline.csvout import write_csv
from pipeline.errors import OutputError, RejectedRows, RowProblem
from pipeline.excel import DEFAULT_WORKBOOK_ROWS, write_workbook
from pipeline.hardware import Catalog, catalog_records
from pipeline.meta import Chart, RunMeta
from pipeline.parquetout import write_parquet
from pipeline.plots import DEFAULT_MAX_CHARTS, render_charts
from pipeline.report import DEFAULT_TABLE_ROWS, render_index, render_report, table_cap_notices
from pipeline.roofline import compute_roofline
from pipeline.scenarios import DEFAULT_MAX_ROWS, Loaded, load_scenarios

BOUNDS = ("compute", "memory", "network")
STAGES = ("load", "compute", "results", "plots", "workbook", "report", "manifest")
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
    report_rows: int = DEFAULT_TABLE_ROWS
    chart_workers: int | None = None  # None: every core when it pays


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
) -> RunSummary:
    """Run one scenario file and write its output folder atomically; returns what was done.

    After load and compute, the output stages overlap: charts render in worker processes and
    the CSV/Parquet writes run in a thread (Arrow releases the GIL) while the workbook is
    written here; the report follows once the charts exist.
    """
    step = progress or (lambda stage: None)
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    started = datetime.now(UTC).isoformat(timespec="seconds")
    loaded = load_scenarios(path, catalog, max_rows=options.max_rows)
    timings["load"] = time.perf_counter() - t0
    step("load")
    summary = RunSummary(
        input_path=Path(path),
        out_dir=None,
        problems=loaded.problems,
        warnings=loaded.warnings,
        rejected=loaded.rejected_lines,
    )
    if options.strict and loaded.problems:
        raise RejectedRows(
            f"{path}: {loaded.rejected_lines} row(s) rejected and --strict is set; nothing written"
        )
    t = time.perf_counter()
    results = compute_roofline(loaded.frame)
    timings["compute"] = time.perf_counter() - t
    step("compute")
    summary.scenarios = len(results)
    counts = results["bound"].value_counts()
    summary.bounds = {b: int(counts.get(b, 0)) for b in BOUNDS}
    summary.not_fitting = int((~results["fits"].fillna(True)).sum())
    errors = errors_frame(loaded.problems)
    hardware = catalog_records(catalog, sorted(results["hardware"].astype(str).unique()))
    notices: list[str] = []  # what the caps leave out; the workbook says its own
    if options.report:
        notices += table_cap_notices(results, options.report_rows)
    meta = RunMeta(
        run_name=out_name or sanitize_name(Path(path).stem),
        input_path=str(path),
        input_sha256=file_sha256(Path(path)),
        started=started,
        tool_version=__version__,
        catalog_version=catalog.version,
        source_rows=loaded.source_rows,
        scenarios=len(results),
        rejected_rows=loaded.rejected_lines,
        notices=tuple(notices),
    )
    target = Path(out_root) / meta.run_name
    summary.out_dir = target

    def timed(stage: str, fn, *args, **kwargs):
        start = time.perf_counter()
        out = fn(*args, **kwargs)
        timings[stage] = time.perf_counter() - start
        step(stage)
        return out

    with _atomic_dir(target) as tmp, ThreadPoolExecutor(max_workers=2) as pool:
        tables = pool.submit(timed, "results", _write_tables, tmp, results, errors)
        charts = None
        if options.plots:
            charts = pool.submit(
                timed,
                "plots",
                render_charts,
                results,
                hardware,
                tmp / "plots",
                max_charts=options.max_charts,
                workers=options.chart_workers,
            )

        def chart_list() -> tuple[list[Chart], list[str]]:
            if charts is None:
                return [], []
            chart_set = charts.result()
            return chart_set.charts, chart_set.notices

        written: list[Path] = []
        if options.workbook:
            notices += timed(
                "workbook",
                write_workbook,
                tmp / "workbook.xlsx",
                meta,
                results,
                loaded.inputs,
                errors,
                hardware,
                chart_list if options.plots else [],
                tmp,
                max_rows=options.workbook_rows,
            )
            written.append(tmp / "workbook.xlsx")
        chart_objs, chart_notices = chart_list()
        written[:0] = [tmp / c.path for c in chart_objs]
        notices = list(dict.fromkeys([*chart_notices, *notices]))
        meta = replace(meta, notices=tuple(notices))
        if options.report:
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
        written[:0] = tables.result()
        summary.notices = list(dict.fromkeys(notices))
        timings["total"] = time.perf_counter() - t0
        written.append(_write_manifest(tmp, meta, loaded, results, written, timings))
        step("manifest")
    summary.written = [target / p.relative_to(tmp) for p in written]
    summary.timings = timings
    return summary


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
    tmp = out_root / f".index.html.tmp-{os.getpid()}"
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


def _write_manifest(tmp: Path, meta: RunMeta, loaded: Loaded, results, written, timings) -> Path:
    counts = results["bound"].value_counts()
    manifest = {
        **meta.as_dict(),
        "rows": {
            "source_rows": loaded.source_rows,
            "scenarios": len(results),
            "rejected_rows": loaded.rejected_lines,
            "problems": len(loaded.problems),
            **{f"{b}_bound": int(counts.get(b, 0)) for b in BOUNDS},
        },
        "files": [
            {"path": str(p.relative_to(tmp)), "bytes": p.stat().st_size, "sha256": file_sha256(p)}
            for p in written
        ],
        "timings_seconds": {k: round(v, 6) for k, v in timings.items()},
    }
    path = tmp / "manifest.json"
    path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return path


class _atomic_dir:
    """Build a folder beside `target`, then swap it in; on failure leave target untouched."""

    def __init__(self, target: Path):
        self.target = target
        self.tmp = target.parent / f".{target.name}.tmp-{os.getpid()}"

    def __enter__(self) -> Path:
        try:
            self.target.parent.mkdir(parents=True, exist_ok=True)
            if self.tmp.exists():
                shutil.rmtree(self.tmp)
            self.tmp.mkdir()
        except OSError as exc:
            raise OutputError(f"cannot create output folder {self.target.parent}: {exc}") from exc
        return self.tmp

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc_type is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)
            if isinstance(exc, OSError):
                raise OutputError(f"writing {self.target} failed: {exc}") from exc
            return False
        old = self.target.parent / f".{self.target.name}.old-{os.getpid()}"
        try:
            if self.target.exists():
                os.replace(self.target, old)
            os.replace(self.tmp, self.target)
        except OSError as exc:
            if old.exists() and not self.target.exists():
                os.replace(old, self.target)
            shutil.rmtree(self.tmp, ignore_errors=True)
            raise OutputError(f"cannot move outputs into {self.target}: {exc}") from exc
        shutil.rmtree(old, ignore_errors=True)
        return False
