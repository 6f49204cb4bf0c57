"""One run end to end: load -> compute -> results/errors/manifest (+ plots, workbook, report)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from pipeline import __version__
from pipeline.csvout import write_csv
from pipeline.errors import OutputError, RejectedRows, RowProblem
from pipeline.hardware import Catalog
from pipeline.meta import RunMeta
from pipeline.roofline import compute_roofline
from pipeline.scenarios import DEFAULT_MAX_ROWS, Loaded, load_scenarios

BOUNDS = ("compute", "memory", "network")
Progress = Callable[[str], None]


@dataclass(frozen=True)
class RunOptions:
    """What a run writes and its limits."""

    plots: bool = True
    workbook: bool = True
    report: bool = True
    strict: bool = False
    max_rows: int = DEFAULT_MAX_ROWS


@dataclass
class RunSummary:
    """What one input produced: counts for the summary line and the paths written."""

    input_path: Path
    out_dir: Path | None
    scenarios: int = 0
    bounds: dict[str, int] = field(default_factory=dict)
    rejected: int = 0
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


def run_file(
    path: Path,
    out_root: Path,
    catalog: Catalog,
    options: RunOptions = RunOptions(),
    *,
    out_name: str | None = None,
    progress: Progress | None = None,
) -> RunSummary:
    """Run one scenario file and write its output folder atomically; returns what was done."""
    step = progress or (lambda stage: None)
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    started = datetime.now(UTC).isoformat(timespec="seconds")
    step("load")
    loaded = load_scenarios(path, catalog, max_rows=options.max_rows)
    timings["load"] = time.perf_counter() - t0
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
    step("compute")
    results = compute_roofline(loaded.frame)
    timings["compute"] = time.perf_counter() - t
    summary.scenarios = len(results)
    counts = results["bound"].value_counts()
    summary.bounds = {b: int(counts.get(b, 0)) for b in BOUNDS}
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
    )
    target = Path(out_root) / meta.run_name
    summary.out_dir = target
    with _atomic_dir(target) as tmp:
        t = time.perf_counter()
        step("results.csv")
        written = [write_csv(results, tmp / "results.csv")]
        if loaded.problems:
            written.append(write_csv(errors_frame(loaded.problems), tmp / "errors.csv"))
        timings["results"] = time.perf_counter() - t
        timings["total"] = time.perf_counter() - t0
        written.append(_write_manifest(tmp, meta, loaded, results, written, timings))
    summary.written = [target / p.relative_to(tmp) for p in written]
    summary.timings = timings
    return summary


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
