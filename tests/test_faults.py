"""Fault injection: runs killed (kill -9) or stopped (SIGTERM) at each point of their progress
never damage the previous outputs, never leave `OUT/<stem>` missing, and leave nothing stale
behind.

Each kill waits for its point to be reached (a file of the run appearing, or the run's end),
never for a number of seconds, so a slow or a fast machine kills at the same point; a kill
meant to land mid-run fails the test when the run had already ended. `make test` runs a short
version (a 20,000-row run, killed at three points); `make soak` the full one (a 200,000-row
run, killed at every point with both signals), which takes several minutes.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from pipeline.run.folder import temp_name
from tests.helpers import (
    ROOT,
    alive,
    assert_matches_manifest,
    descendants,
    write_mixed_scenarios,
)

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="POSIX signals and /proc"
)


# the library's way to the same folder: analyze(), then write() into OUT/<stem>
API = "import sys, pipeline; pipeline.analyze(sys.argv[1]).write(sys.argv[2] + '/big')"
GUARD = 600  # seconds: a point never reached fails the test then, instead of hanging it


def _start(path: Path, out: Path, api: bool = False) -> subprocess.Popen:
    how = ["-c", API, str(path), str(out)] if api else ["-m", "pipeline", "run", str(path),
                                                      "-o", str(out), "-q"]  # fmt: skip
    return subprocess.Popen(
        [sys.executable, *how],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def _png(tmp: Path) -> bool:
    return any((tmp / "plots").glob("*.png")) if (tmp / "plots").is_dir() else False


# The points of a run's progress, in order: (name, reached(temp folder), the run is still
# running there). The run writes into OUT/.big.roofline-tmp-<pid> and swaps it in at its end;
# summary.json is its last file before manifest.json and the swap, so a kill there lands in
# the last milliseconds or after the end.
POINTS: dict[str, tuple[Callable[[Path], bool], bool]] = {
    "start": (lambda tmp: True, True),  # before the run has read its file or taken its lock
    "temp folder": (Path.is_dir, True),  # the lock taken, the outputs begun
    "charts": (_png, True),  # a chart drawn, the others drawing
    "tables": (lambda tmp: (tmp / "results.csv").exists(), True),  # workbook, tables, report
    "swap": (lambda tmp: (tmp / "summary.json").exists(), False),  # the manifest and the swap
    "end": (lambda tmp: False, False),  # the run has ended: the signal finds no process
}


def _wait_for(point: str, proc: subprocess.Popen, tmp: Path) -> None:
    """Return once the run `proc` has reached `point` (or, for a point it may pass before
    it is seen, has ended)."""
    reached, mid_run = POINTS[point]
    deadline = time.monotonic() + GUARD
    while not reached(tmp):
        if proc.poll() is not None:
            assert not mid_run, f"the run ended ({proc.returncode}) before reaching {point}"
            return
        assert time.monotonic() < deadline, f"the run did not reach {point} in {GUARD} s"
        time.sleep(0.01)


def kill_at(tmp_path: Path, rows: int, kills: list[tuple[str, signal.Signals]],
            api: bool = False) -> None:  # fmt: skip
    path = write_mixed_scenarios(rows, tmp_path / "big.csv")
    out = tmp_path / "out"
    first = _start(path, out, api)
    assert first.wait(timeout=GUARD) == 0, first.stderr.read()
    target = out / "big"
    assert_matches_manifest(target)
    for point, sig in kills:
        at = f"{sig.name} at {point}"
        proc = _start(path, out, api)
        _wait_for(point, proc, out / temp_name("big", proc.pid))
        family = descendants(proc.pid)
        proc.send_signal(sig)  # a no-op once the run has ended and been waited for
        proc.wait(timeout=120)
        if POINTS[point][1]:  # stopped mid-run: the kill is what ended it
            assert proc.returncode != 0, f"{at}: the run finished before the signal"
        deadline = time.monotonic() + 60  # a failure guard: they die with the run
        while alive(family) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(family), f"{at} left processes {alive(family)}"
        assert target.is_dir(), f"{at} removed {target}"
        assert_matches_manifest(target)
    last = _start(path, out, api)
    assert last.wait(timeout=GUARD) == 0, last.stderr.read()
    assert sorted(p.name for p in out.iterdir()) == ["big"], "a stale temp folder or lock"
    assert_matches_manifest(target)


KILL, TERM = signal.SIGKILL, signal.SIGTERM


def test_killed_runs_leave_previous_outputs_whole(tmp_path):
    kill_at(
        tmp_path, rows=20_000, kills=[("temp folder", KILL), ("charts", TERM), ("tables", KILL)]
    )


def test_killed_api_writes_leave_previous_outputs_whole(tmp_path):
    """The same through the library, whose process has no SIGTERM handler of ours: a stopped
    write leaves its temp folder, which the next write removes."""
    kill_at(tmp_path, rows=20_000, kills=[("charts", KILL), ("tables", TERM)], api=True)


@pytest.mark.soak
def test_soak_200k_rows_killed_at_every_point(tmp_path):
    kill_at(tmp_path, rows=200_000, kills=[(p, s) for p in POINTS for s in (KILL, TERM)])
