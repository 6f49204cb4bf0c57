"""What the command line needs besides click: messages escaped line by line, one output
folder name per input, each input's baseline folder, and SIGTERM taken as Ctrl-C."""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from pathlib import Path

from pipeline.errors import PipelineError, printable, quoted
from pipeline.render import format as fmt
from pipeline.run.baseline import check_baseline_dir


def change_kinds(value: str | None) -> tuple[str, ...] | None:
    """--fail-on's comma-separated change kinds (None: every kind); a PipelineError saying
    what would be valid otherwise."""
    from pipeline.model.changes import KINDS

    if value is None:
        return None
    kinds = tuple(k.strip() for k in value.split(",") if k.strip())
    unknown = [k for k in kinds if k not in KINDS]
    if unknown or not kinds:
        shown = f"unknown kind {quoted(unknown[0])}" if unknown else "no kind given"
        raise PipelineError(f"--fail-on: {shown}; give some of {','.join(KINDS)}")
    return kinds


def escaped(message: str) -> str:
    """A message's lines, each with its control characters escaped."""
    return "\n".join(printable(line) for line in message.split("\n"))


def output_names(paths: list[Path]) -> list[str]:
    """One output folder name per input: its sanitized stem, made unique with -2, -3, ..."""
    from pipeline.analysis import sanitize_name

    names: list[str] = []
    for path in paths:
        base = sanitize_name(path.stem)
        name, k = base, 2
        while name in names:
            name, k = f"{base}-{k}", k + 1
        names.append(name)
    return names


def baseline_folders(folder: Path | None, names: list[str]) -> list[Path | None]:
    """Each output name's baseline, `folder`/<name>/ (None where there is none, or no
    `folder`); BaselineError when `folder` is missing or unreadable (before any write)."""
    if folder is None:
        return [None] * len(names)
    root = check_baseline_dir(folder)
    return [root / name if (root / name).is_dir() else None for name in names]


def no_baseline_note(path: Path, folder: Path) -> str:
    """What `run --baseline` says of an input its baseline folder has no run of."""
    return f"note: {printable(path)}: no baseline {printable(folder)}/; not compared"


@contextmanager
def sigterm_as_interrupt():
    """SIGTERM (what `timeout` and CI cancels send) stops a run as Ctrl-C does: temp folders
    removed, worker processes stopped, previous outputs untouched."""

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def summary_lines(path: Path, analysis, written, verbose: bool) -> list[str]:
    """What `pipeline run` prints for an input: what was computed and written, the notices,
    and with `verbose` the seconds each stage took."""
    s = analysis.summary
    folder = written.folder
    files = ", ".join(p.relative_to(folder).as_posix() for p in written.files)
    if len(files) > 160:
        shown = [p for p in written.files if p.parent == folder]
        charts = fmt.plural(len(written.files) - len(shown), "chart")
        files = ", ".join(p.name for p in shown) + f", {charts} in plots/"
    bounds = ", ".join(f"{b}-bound {fmt.count(n)}" for b, n in s.bounds.items())
    lines = [
        f"{printable(path)}: {fmt.plural(s.scenarios, 'scenario')} ({bounds}), "
        f"{fmt.plural(s.rejected_rows, 'rejected row')} -> {printable(folder)}/ "
        f"[{printable(files)}]"
    ]
    lines += [f"  note: {printable(notice)}" for notice in written.notices]
    if verbose:
        timings = ", ".join(f"{k} {fmt.fixed(v, decimals=2)} s" for k, v in written.timings.items())
        lines.append(f"  seconds: {timings}")
    return lines
