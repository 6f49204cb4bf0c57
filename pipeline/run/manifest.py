"""manifest.json: what a run read, with which tool and catalog, what it found and left out,
every file it wrote (size, SHA-256, modification time) and the seconds each stage took. The
output folder uses it to recognize a folder of ours (run.folder)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from pipeline.model.roofline import BOUNDS
from pipeline.record import Record
from pipeline.textfile import file_sha256

TOOL = "roofline-pipeline"  # the manifest's "tool": how a folder of ours is recognized
RESULTS_FILES = ("results.csv", "results.parquet")  # a local run's: its one partition's


def file_entries(folder: Path, paths: Sequence[Path]) -> list[dict]:
    """Each file's manifest entry: path (relative, '/'), bytes, SHA-256, mtime_ns."""
    entries = []
    for p in paths:
        info = p.stat()
        entries.append(
            {
                "path": p.relative_to(folder).as_posix(),
                "bytes": info.st_size,
                "sha256": file_sha256(p),
                "mtime_ns": info.st_mtime_ns,
            }
        )
    return entries


def write_manifest(
    folder: Path,
    analysis: Record,
    run_name: str,
    notices: Sequence[str],
    files: list[dict],
    timings: dict[str, float],
    changes: dict | None = None,
    *,
    engine: dict | None = None,
) -> Path:
    """Write folder/manifest.json; returns its path. `changes`: the counts of a comparison
    with a baseline (run.baseline.Baseline.counts), written as "changes" when given.
    `engine`: which engine computed the rows, in which partitions (engine_entry); None: the
    local engine, in one partition (its results files)."""
    s = analysis.summary
    if engine is None:
        results = {e["path"]: e["sha256"] for e in files if e["path"] in RESULTS_FILES}
        engine = engine_entry("local", [{"number": 0, "rows": s.scenarios, "files": results}])
    manifest = {
        "tool": TOOL,
        **engine,
        "run_name": run_name,
        "input_path": analysis.source,
        "input_sha256": analysis.source_sha256,
        "started": analysis.started,
        "tool_version": analysis.tool_version,
        "catalog_version": analysis.catalog_version,
        "source_rows": s.source_rows,
        "scenarios": s.scenarios,
        "rejected_rows": s.rejected_rows,
        "rows": {
            "source_rows": s.source_rows,
            "scenarios": s.scenarios,
            "rejected_rows": s.rejected_rows,
            "problems": s.problems,
            **{f"{b}_bound": s.bounds[b] for b in BOUNDS},
            "not_fitting": s.not_fitting,
        },
        "warnings": list(analysis.warnings),
        "notices": list(dict.fromkeys(notices)),
        "files": files,
        "timings_seconds": {k: round(v, 6) for k, v in timings.items()},
    }
    if analysis.prices is not None:  # --prices: which file priced the rows
        manifest["prices"] = dict(zip(("path", "sha256"), analysis.prices, strict=True))
    if changes is not None:
        manifest["changes"] = changes
    path = folder / "manifest.json"
    path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return path


def engine_entry(name: str, partitions: list[dict]) -> dict:
    """The manifest's "engine" (local or dask) and "partitions": each one's number, rows
    and its results files' SHA-256, in order (both engines' schema)."""
    return {"engine": name, "partitions": partitions}


def read_manifest(folder: Path) -> dict | None:
    """The manifest of an output folder this tool wrote, or None when its manifest.json is
    missing or not one of ours (manifests before "tool" was written carry tool_version and
    input_sha256)."""
    manifest = folder / "manifest.json"
    if manifest.is_symlink() or not manifest.is_file():
        return None
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("files"), list):
        return None
    if data.get("tool") != TOOL and not {"tool_version", "input_sha256"} <= data.keys():
        return None
    return data
