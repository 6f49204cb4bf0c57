"""OUTPUT_DIR/index.html of a run over several inputs: one line per input with its headline
counts and a link to its report (docs/outputs.md#several-inputs-indexhtml)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import UTC
from pathlib import Path

from pipeline.errors import OutputError, printable
from pipeline.i18n import _
from pipeline.model.roofline import BOUNDS
from pipeline.record import Record
from pipeline.render.report.index_page import render_index
from pipeline.run.earlier import start_time
from pipeline.run.folder import temp_name
from pipeline.run.manifest import read_manifest
from pipeline.run.write import Written
from pipeline.textfile import atomic_file

# how an index.html of ours is recognized (before 0.2: by its title)
MARKS = ('<meta name="generator" content="roofline-pipeline', "<title>Roofline runs</title>")


def index_entry(analysis: Record, written: Written) -> dict:
    """One run's line on the index page (with "changes" when compared with a baseline)."""
    s = analysis.summary
    name = written.folder.name
    has_report = any(p.name == "report.html" for p in written.files)
    changes = {"changes": written.changes} if written.changes is not None else {}
    return {
        "run_name": name,
        "input_path": analysis.source,
        "report_href": f"{name}/report.html" if has_report else f"{name}/",
        "scenarios": s.scenarios,
        **{b: s.bounds[b] for b in BOUNDS},
        "not_fitting": s.not_fitting,
        "rejected": s.rejected_rows,
        "status": _("rows rejected") if s.rejected_rows else _("ok"),  # words, not data
        **changes,
    }


def failed_entry(source: str, run_name: str, message: str) -> dict:
    """The index line of an input that produced nothing."""
    return {
        "run_name": run_name,
        "input_path": source,
        "report_href": "",
        "scenarios": 0,
        **dict.fromkeys(BOUNDS, 0),
        "not_fitting": 0,
        "rejected": 0,
        "status": _("failed: {message}", message=message),
    }


def folder_entries(out_root: Path, shown: Sequence[str] = ()) -> list[dict]:
    """What else OUTPUT_DIR holds of ours, for the index to link: the run folders of earlier
    commands (a manifest.json of this tool; their input and start time) and the pages written
    beside them (a calibration's page), each by a relative link; the runs in `shown` left out."""
    out_root = Path(out_root)
    found: list[dict] = []
    try:
        children = sorted(out_root.iterdir(), key=lambda p: p.name)
    except OSError:
        return found
    for child in children:
        if child.name in shown or child.is_symlink():
            continue
        if child.is_dir():
            manifest = read_manifest(child)
            if manifest is None:
                continue
            report = (child / "report.html").is_file()
            found.append(
                {
                    "kind": "run",
                    "name": child.name,
                    "href": f"{child.name}/report.html" if report else f"{child.name}/",
                    "input_path": str(manifest.get("input_path", "")),
                    "started": _when(manifest.get("started")),
                    "scenarios": _count(manifest.get("scenarios")),
                }
            )
        elif child.suffix == ".html" and child.name != "index.html" and _ours(child):
            kind = "calibration" if child.with_suffix(".toml").is_file() else "page"
            found.append(
                {
                    "kind": kind,
                    "name": child.stem,
                    "href": child.name,
                    "input_path": child.with_suffix(".toml").name if kind == "calibration" else "",
                    "started": "",
                    "scenarios": None,
                }
            )
    return found


def _when(value: object) -> str:
    """A manifest's start time as people read it (2026-11-28 01:11 UTC); odd text as it is."""
    when = start_time(value)
    return when.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC") if when else str(value or "")


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def write_index(
    out_root: Path,
    runs: list[dict],
    protect: Sequence[Path] = (),
    others: Sequence[dict] | None = None,
) -> Path:
    """Write OUTPUT_DIR/index.html atomically; never over an index.html this tool did not
    write, nor over an input. Below the runs it links `others` (default: folder_entries, what
    earlier commands left in OUTPUT_DIR)."""
    out_root = Path(out_root)
    if others is None:
        others = folder_entries(out_root, [str(r.get("run_name", "")) for r in runs])
    path = out_root / "index.html"
    if os.path.lexists(path):
        mine = not path.is_symlink() and path.is_file() and _ours(path)
        held = any(
            Path(os.path.abspath(p)) == Path(os.path.abspath(path))
            or Path(p).resolve() == path.resolve()
            for p in protect
        )
        if held or not mine:
            why = "is an input of the run" if held else "was not written by this tool"
            raise OutputError(
                f"{printable(path)} {why}; it is left as it is (the batch index was not "
                "written): give another -o"
            )
    try:
        out_root.mkdir(parents=True, exist_ok=True)
        with atomic_file(path, out_root / temp_name("index.html")) as tmp:
            tmp.write_text(render_index(runs, others), encoding="utf-8", newline="\n")
    except OSError as exc:
        raise OutputError(f"cannot write {printable(path)}: {exc.strerror or exc}") from exc
    return path


def _ours(path: Path) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    return any(mark in head for mark in MARKS)
