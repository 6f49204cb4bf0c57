"""Which earlier run a run compares with (DESIGN.md §9, `pipeline run --baseline`): the newest
finished run beside the output folder (`--baseline latest`), by the start times its manifests
give, read as times; and, inside a run of several inputs, each input's own run, paired by the
input's name as its manifest records it (never by the folder's name or position)."""

from __future__ import annotations

import os
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pipeline.errors import printable, quoted
from pipeline.i18n import _
from pipeline.run.manifest import read_manifest

LATEST = "latest"  # --baseline latest: the newest earlier run beside this run's folder
CLOCK_SLACK = timedelta(minutes=5)  # two machines' clocks may differ by this much
Warn = Callable[[str], None]


def start_time(value: object) -> datetime | None:
    """A manifest's "started" as a time (ISO 8601; without a zone: UTC), None when it is not
    one."""
    if not isinstance(value, str):
        return None
    try:
        time = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    return time if time.tzinfo is not None else time.replace(tzinfo=UTC)


def newest_run(output_dir: Path, warn: Warn | None = None,
               now: datetime | None = None) -> tuple[Path, str] | None:  # fmt: skip
    """The newest finished run among `output_dir`'s siblings (nightly/<date> beside
    nightly/<today>) and the start time its manifests give, as recorded: a folder holding
    runs of this tool (its own manifest.json, or its inputs' <stem>/manifest.json), by the
    latest start time, read as a time; `output_dir` itself, folders without a finished run (no
    manifest: a run still going or failed) and links are skipped. A folder whose start time is
    not a time, or is in the future (its machine's clock was ahead: it would stay the newest
    for ever), is skipped, and `warn` says so. None when there is none (the first run there).
    The path is as the user wrote `output_dir` (`-o .` -> ../<date>)."""
    here = Path(os.path.abspath(output_dir))
    latest = (now or datetime.now(UTC)) + CLOCK_SLACK
    found: list[tuple[datetime, str, str]] = []
    try:
        siblings = sorted(p for p in here.parent.iterdir() if p != here)
    except OSError:  # no parent folder yet: nothing ran there
        return None
    for folder in siblings:
        if folder.is_symlink() or not folder.is_dir():
            continue
        values = [m["started"] for m in _manifests(folder) if "started" in m]
        times = [start_time(v) for v in values]
        shown = printable(_beside(output_dir, folder.name))
        if bad := [v for v, t in zip(values, times, strict=True) if t is None]:
            if warn:
                warn(_("warning: baseline latest: skipped {folder}: its start time {value} is "
                       "not a time (manifest.json's \"started\", ISO 8601)", folder=shown,
                       value=quoted(bad[0])))  # fmt: skip
            continue
        if ahead := [v for v, t in zip(values, times, strict=True) if t > latest]:
            if warn:
                warn(_("warning: baseline latest: skipped {folder}: it started {value}, in the "
                       "future (the clock here says {now}); was its machine's clock wrong?",
                       folder=shown, value=printable(ahead[0]),
                       now=(latest - CLOCK_SLACK).isoformat(timespec="seconds")))  # fmt: skip
            continue
        if times:
            newest = max(range(len(times)), key=times.__getitem__)
            found.append((times[newest], folder.name, values[newest]))
    if not found:
        return None
    _time, name, started = max(found)
    return _beside(output_dir, name), started


def _beside(output_dir, name: str) -> Path:
    """The folder `name` beside `output_dir`, written from it as the user wrote it."""
    return Path(os.path.normpath(os.path.join(output_dir, os.pardir, name)))


def _manifests(folder: Path) -> list[dict]:
    """The manifests of the runs `folder` holds: its own, or its sub-folders' (one level)."""
    own = read_manifest(folder)
    if own is not None:
        return [own]
    try:
        children = [p for p in folder.iterdir() if p.is_dir() and not p.is_symlink()]
    except OSError:
        return []
    return [m for p in children if (m := read_manifest(p)) is not None]


# a workbook's input_path names its sheet: plan.xlsx[Scenarios] (sheet names hold no [ or ])
_SHEET = re.compile(r"(.*\.xls[xm])\[[^\[\]]*\]", re.IGNORECASE | re.DOTALL)


def input_file(manifest: dict | None) -> str | None:
    """The input file a run read, as the user named it: its manifest's input_path, without a
    workbook's [SHEET]; None without a manifest of ours."""
    path = manifest.get("input_path") if manifest else None
    if not isinstance(path, str):
        return None
    match = _SHEET.fullmatch(path)
    return match.group(1) if match else path


def runs_in(root: Path) -> dict[Path, str | None]:
    """The runs of inputs a folder holds: each sub-folder -> the input file its manifest
    names (None: a folder without a manifest of ours), A-Z."""
    try:
        children = sorted(p for p in Path(root).iterdir() if p.is_dir())
    except OSError:
        return {}
    return {child: input_file(read_manifest(child)) for child in children}


def pair_runs(
    wanted: Sequence[tuple[str | None, str]], there: Mapping[Path, str | None]
) -> list[Path | None]:
    """Each wanted input's run among `there` (runs_in), None where it has none. `wanted`:
    (its input file as named, or None; its folder's name). Paired by the input's own name:
    the same path (sc/Plan.csv, ./sc/Plan.csv), else the same file name where only one input
    on each side has it (a run read from another folder); never guessed among several. A
    folder's name pairs only runs whose input is not recorded. Each run pairs one input."""
    paired: list[Path | None] = [None] * len(wanted)
    left = dict(there)
    for key in (_same_path, _same_name):
        ours = Counter(key(f) for f, _folder in wanted if f is not None)
        theirs: dict[str, list[Path]] = {}
        for run, f in there.items():
            if f is not None:
                theirs.setdefault(key(f), []).append(run)
        for i, (f, _folder) in enumerate(wanted):
            if f is None or paired[i] is not None or ours[key(f)] != 1:
                continue
            runs = theirs.get(key(f), [])
            if len(runs) == 1 and runs[0] in left:
                paired[i] = runs[0]
                del left[runs[0]]
    for i, (f, folder) in enumerate(wanted):
        runs = [r for r, g in left.items() if r.name == folder and None in (f, g)]
        if paired[i] is None and len(runs) == 1:
            paired[i] = runs[0]
            del left[runs[0]]
    return paired


def _same_path(path: str) -> str:
    """A path as a key: normalized (./a.csv is a.csv), in one Unicode spelling (macOS file
    systems give names decomposed)."""
    return unicodedata.normalize("NFC", Path(os.path.normpath(path)).as_posix())


def _same_name(path: str) -> str:
    return unicodedata.normalize("NFC", Path(path).name)
