"""Fault injection: runs killed (kill -9) or stopped (SIGTERM) at random moments never damage
the previous outputs, never leave `OUT/<stem>` missing, and leave nothing stale behind.

`make test` runs a short version (a 20,000-row run, killed 3 times); `make soak` the full one
(a 200,000-row run, 20 times), which takes several minutes.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT

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


def _descendants(pid: int) -> set[int]:
    """Every process whose parent chain leads to pid."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            parents[int(stat.parent.name)] = int(fields[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {p for p, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def assert_matches_manifest(folder: Path) -> dict:
    """The folder holds exactly the files its manifest lists, each with its size and hash."""
    manifest = json.loads((folder / "manifest.json").read_text())
    listed = {f["path"]: f for f in manifest["files"]}
    present = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    assert present == set(listed) | {"manifest.json"}
    for path, entry in listed.items():
        data = (folder / path).read_bytes()
        assert len(data) == entry["bytes"] and hashlib.sha256(data).hexdigest() == entry["sha256"]
    return manifest


def kill_at_random_moments(
    tmp_path: Path, rows: int, kills: int, seed: int, api: bool = False
) -> None:
    from benchmarks.generate import write

    path = write(rows, tmp_path / "big.csv")
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
        family = _descendants(proc.pid)
        proc.send_signal(sig)
        proc.wait(timeout=120)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and family & _alive_set():
            time.sleep(0.05)
        left = family & _alive_set()
        assert not left, f"kill {i} ({sig.name} at {moment:.2f} s) left processes {left}"
        assert target.is_dir(), f"kill {i} ({sig.name} at {moment:.2f} s) removed {target}"
        assert_matches_manifest(target)
    last = _start(path, out, api)
    assert last.wait(timeout=600) == 0, last.stderr.read()
    assert sorted(p.name for p in out.iterdir()) == ["big"], "a stale temp folder or lock"
    assert_matches_manifest(target)


def _alive_set() -> set[int]:
    alive = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if stat.read_text().rsplit(")", 1)[1].split()[0] != "Z":
                alive.add(int(stat.parent.name))
        except OSError:
            continue
    return alive


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
