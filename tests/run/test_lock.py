"""The one-run-per-folder lock: an flock on a file holding its owner's process id, refused to
a second holder (in this process or another), never written through a planted link, given
back (and its file removed) on release."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from pipeline.run.lock import FolderLock
from tests.helpers import ROOT

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="flock")

HOLD = """
import sys
from pathlib import Path
from pipeline.run.lock import FolderLock
lock = FolderLock(Path(sys.argv[1]))
assert lock.acquire() is None
print("held", flush=True)
sys.stdin.read()  # until the test closes our stdin
"""


def test_the_lock_refuses_a_second_holder_and_names_the_first(tmp_path):
    path = tmp_path / ".s.roofline-lock"
    first = FolderLock(path)
    assert first.acquire() is None
    assert path.read_text() == f"{os.getpid()}\n"
    assert FolderLock(path).held()
    assert FolderLock(path).acquire() == str(os.getpid())
    first.release()
    assert not path.exists() and not FolderLock(path).held()
    first.release()  # twice: nothing to give back
    again = FolderLock(path)
    assert again.acquire() is None
    again.release()


def test_another_process_holding_it_is_named(tmp_path):
    path = tmp_path / ".s.roofline-lock"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, cwd=ROOT)  # fmt: skip
    try:
        assert holder.stdout.readline() == "held\n"
        assert FolderLock(path).acquire() == str(holder.pid)
        assert FolderLock(path).held()
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    # the holder is gone: its lock was given back with it, the file stays and is free
    assert not FolderLock(path).held()
    lock = FolderLock(path)
    assert lock.acquire() is None
    lock.release()


def test_a_planted_link_is_never_written_through(tmp_path):
    precious = tmp_path / "precious.txt"
    precious.write_text("important")
    (tmp_path / ".t.roofline-lock").symlink_to(precious)
    with pytest.raises(OSError):
        FolderLock(tmp_path / ".t.roofline-lock").acquire()
    assert precious.read_text() == "important"
    assert not FolderLock(tmp_path / ".t.roofline-lock").held()


def test_held_never_creates_the_file(tmp_path):
    assert not FolderLock(tmp_path / ".x.roofline-lock").held()
    assert list(tmp_path.iterdir()) == []
