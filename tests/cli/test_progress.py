"""cli/progress.py: a Dask run's progress, on a terminal a bar of the partitions done and off
one a line when the run waits for a worker."""

from __future__ import annotations

import sys
from pathlib import Path

from pipeline.cli import progress


def test_off_a_terminal_a_wait_for_a_worker_is_one_line_and_progress_nothing(monkeypatch):
    said = []
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    with progress.partitions(Path("s.csv"), False, None, lambda *a, **k: said.append(a[0])) as step:
        step(0, 4, None)
        step(0, 4, 60.0)
        step(0, 4, 59.5)  # the same wait: no second line
        step(1, 4, None)
        step(1, 4, 12.2)  # a new wait
        step(4, 4, None)
    assert said == [
        "s.csv: waiting for a Dask worker (60 s left)…",
        "s.csv: waiting for a Dask worker (12 s left)…",
    ]
    with progress.partitions(Path("s.csv"), True, None, said.append) as step:
        assert step is None  # -q: nothing at all


def test_on_a_terminal_the_bar_counts_partitions_and_says_when_it_waits(monkeypatch):
    class Bar:
        def __init__(self, **kwargs):
            self.kwargs, self.pos, self.shown = kwargs, 0, []

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.shown.append("closed")

        def update(self, n):
            self.pos += n
            self.shown.append((self.label, self.pos))

        def render_progress(self):
            self.shown.append((self.label, self.pos))

    bars = []
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    with progress.partitions(Path("s.csv"), False, lambda **k: bars.append(Bar(**k)) or bars[-1],
                              None) as step:  # fmt: skip
        step(0, 3, 5.0)
        step(2, 3, None)
        step(3, 3, None)
    (bar,) = bars
    assert bar.kwargs["length"] == 3 and bar.kwargs["show_pos"]
    assert bar.shown == [
        ("s.csv: waiting for a Dask worker (5 s left)…", 0),
        ("s.csv: partitions", 2),
        ("s.csv: partitions", 3),
        "closed",
    ]
