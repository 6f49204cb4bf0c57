"""Fault injection: runs killed (kill -9) or stopped (SIGTERM) at random moments never damage
the previous outputs, never leave `OUT/<stem>` missing, and leave nothing stale behind.

`make test` runs a short version (a 20,000-row run, killed 3 times); `make soak` the full one
(a 200,000-row run, 20 times), which takes several minutes.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

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


def _start(path: Path, out: Path, api: bool = False) -> subprocess.Popen:
    how = ["-c", API, str(path), str(out)] if api else ["-m", "pipeline", "run", str(path),
                                                      "-o", str(out), "-q"]  # fmt: skip
    return subprocess.Popen(
        [sys.executable, *how],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def kill_at_random_moments(
    tmp_path: Path, rows: int, kills: int, seed: int, api: bool = False
) -> None:
    path = write_mixed_scenarios(rows, tmp_path / "big.csv")
    out = tmp_path / "out"
    start = time.monotonic()
    first = _start(path, out, api)
    assert first.wait(timeout=600) == 0, first.stderr.read()
    full = time.monotonic() - start
    target = out / "big"
    assert_matches_manifest(target)
    rng = random.Random(seed)
    for i in range(kills):
        sig = (signal.SIGKILL, signal.SIGTERM)[i % 2]
        moment = rng.uniform(0.05, 1.1 * full)  # now and then after the run has finished
        proc = _start(path, out, api)
        time.sleep(moment)
        family = descendants(proc.pid)
        proc.send_signal(sig)
        proc.wait(timeout=120)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and alive(family):
            time.sleep(0.05)
        left = alive(family)
        assert not left, f"kill {i} ({sig.name} at {moment:.2f} s) left processes {left}"
        assert target.is_dir(), f"kill {i} ({sig.name} at {moment:.2f} s) removed {target}"
        assert_matches_manifest(target)
    last = _start(path, out, api)
    assert last.wait(timeout=600) == 0, last.stderr.read()
    assert sorted(p.name for p in out.iterdir()) == ["big"], "a stale temp folder or lock"
    assert_matches_manifest(target)


def test_killed_runs_leave_previous_outputs_whole(tmp_path):
    kill_at_random_moments(tmp_path, rows=20_000, kills=3, seed=int(os.environ.get("SEED", 1)))


def test_killed_api_writes_leave_previous_outputs_whole(tmp_path):
    """The same through the library, whose process has no SIGTERM handler of ours: a stopped
    write leaves its temp folder, which the next write removes."""
    seed = int(os.environ.get("SEED", 2))
    kill_at_random_moments(tmp_path, rows=20_000, kills=2, seed=seed, api=True)


@pytest.mark.soak
def test_soak_200k_rows_killed_20_times(tmp_path):
    kill_at_random_moments(tmp_path, rows=200_000, kills=20, seed=int(os.environ.get("SEED", 7)))
