"""The progress bars of `pipeline run` on a terminal (stderr): the output stages of a local
run, the partitions done of a Dask run (saying so while it waits for a worker)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import click

from pipeline.engines.dask.cluster import Progress
from pipeline.errors import printable
from pipeline.i18n import _


@contextmanager
def stages(path: Path, quiet: bool):
    """A progress bar of the output stages on a terminal (stderr); nothing otherwise."""
    if quiet or not sys.stderr.isatty():
        yield None
        return
    label = printable(path)
    with click.progressbar(
        length=100, label=f"{label}: writing", file=sys.stderr, show_eta=False
    ) as bar:
        done = 0

        def step(stage: str) -> None:
            nonlocal done
            done += 1
            bar.label = f"{label}: {stage}"
            bar.update(max(1, min(100 - bar.pos, 100 // (done + 1))))

        yield step


@contextmanager
def partitions(
    path: Path, quiet: bool, bar=click.progressbar, say=click.echo
) -> Iterator[Progress | None]:
    """run_dask's progress: on a terminal (stderr), `bar` (click's progress bar) of the
    partitions done, its label saying so while the run waits for a worker; elsewhere one
    line when such a wait starts; nothing with -q."""
    if quiet:
        yield None
        return
    label = printable(path)

    def words(wait_left: float | None) -> str:
        if wait_left is None:
            return _("{input}: partitions", input=label)
        return _("{input}: waiting for a Dask worker ({seconds} s left)…", input=label,
                 seconds=f"{max(wait_left, 0):.0f}")  # fmt: skip

    if not sys.stderr.isatty():
        waiting = False

        def line(done: int, of: int, wait_left: float | None) -> None:
            nonlocal waiting
            if wait_left is not None and not waiting:
                say(words(wait_left), err=True)
            waiting = wait_left is not None

        yield line
        return
    with ExitStack() as stack:
        shown = None

        def step(done: int, of: int, wait_left: float | None) -> None:
            nonlocal shown
            if shown is None:
                shown = stack.enter_context(bar(length=of, label=words(None), file=sys.stderr,
                                                show_eta=False, show_pos=True))  # fmt: skip
            shown.label = words(wait_left)
            if done > shown.pos:
                shown.update(done - shown.pos)
            else:
                shown.render_progress()  # the label alone changed

        yield step
