"""The output folder: what it refuses to replace, stale temp folders, the swap (the lock:
test_lock.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pipeline.errors import OutputError
from pipeline.run import folder
from pipeline.run.folder import OutputFolder, check_replaceable, swap_in, temp_name
from pipeline.run.manifest import file_entries
from tests.helpers import dead_pid


def ours(path: Path, files: dict[str, str]) -> Path:
    """An output folder as this tool leaves it: the files and a manifest listing them."""
    path.mkdir(parents=True)
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    entries = file_entries(path, [path / n for n in files])
    (path / "manifest.json").write_text(json.dumps({"tool": "roofline-pipeline",
                                                    "files": entries}))  # fmt: skip
    return path


def test_a_folder_of_ours_as_left_is_replaceable(tmp_path):
    target = ours(tmp_path / "s", {"results.csv": "x", "plots/a.png": "p"})
    check_replaceable(target, [], force=False)


def test_an_empty_folder_is_replaceable_but_not_one_of_folders_or_links(tmp_path):
    (tmp_path / "empty").mkdir()
    check_replaceable(tmp_path / "empty", [], force=False)
    (tmp_path / "dirs" / "sub1" / "sub2").mkdir(parents=True)
    with pytest.raises(OutputError, match="not written by this tool"):
        check_replaceable(tmp_path / "dirs", [], force=True)
    (tmp_path / "links").mkdir()
    (tmp_path / "links" / "dataset").symlink_to(tmp_path / "empty")
    with pytest.raises(OutputError, match="not written by this tool"):
        check_replaceable(tmp_path / "links", [], force=True)


def test_files_added_or_changed_in_a_folder_of_ours_need_force(tmp_path):
    target = ours(tmp_path / "s", {"results.csv": "x"})
    (target / "notes").mkdir()  # an empty folder of the user's counts too
    with pytest.raises(OutputError, match=r"did not write, or changed since \(notes\)"):
        check_replaceable(target, [], force=False)
    check_replaceable(target, [], force=True)
    (target / "notes").rmdir()
    (target / "results.csv").write_text("x, with my analysis")
    with pytest.raises(OutputError, match=r"\(results.csv\)"):
        check_replaceable(target, [], force=False)
    (target / "results.csv").write_text("y")  # same size, other bytes, other time
    os.utime(target / "results.csv", ns=(1, 1))
    with pytest.raises(OutputError, match=r"\(results.csv\)"):
        check_replaceable(target, [], force=False)


def test_an_input_inside_is_never_replaced_even_through_a_link(tmp_path):
    target = ours(tmp_path / "s", {"results.csv": "x"})
    real = tmp_path / "real.csv"
    real.write_text("name\n")
    (target / "hw.csv").symlink_to(real)
    with pytest.raises(OutputError, match="holds the input"):
        check_replaceable(target, [target / "hw.csv"], force=True)
    with pytest.raises(OutputError, match="holds the input"):
        check_replaceable(target, [tmp_path / "s" / ".." / "s" / "results.csv"], force=True)


def test_a_file_or_link_at_the_target_is_never_replaced(tmp_path):
    (tmp_path / "file").write_text("mine")
    with pytest.raises(OutputError, match="is a file"):
        check_replaceable(tmp_path / "file", [], force=True)
    (tmp_path / "link").symlink_to(ours(tmp_path / "s", {}))
    with pytest.raises(OutputError, match="symbolic link"):
        check_replaceable(tmp_path / "link", [], force=True)


def test_stale_temps_and_free_locks_go_the_old_outputs_come_back(tmp_path):
    dead = dead_pid()
    (tmp_path / temp_name("other", dead)).mkdir()
    (tmp_path / ".other.roofline-lock").write_text(f"{dead}\n")  # left by a kill -9
    old = tmp_path / f".s.roofline-old-{dead}"  # a kill between the fallback's two renames
    ours(old, {"results.csv": "previous"})
    with OutputFolder(tmp_path / "s") as tmp:
        assert (tmp_path / "s" / "results.csv").read_text() == "previous"  # put back first
        (tmp / "results.csv").write_text("new")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s"]
    assert (tmp_path / "s" / "results.csv").read_text() == "new"


def test_the_fallback_swap_without_an_exchange(tmp_path, monkeypatch):
    monkeypatch.setattr(folder, "exchange", lambda a, b: False)
    target = ours(tmp_path / "s", {"results.csv": "old"})
    tmp = tmp_path / temp_name("s")
    tmp.mkdir()
    (tmp / "results.csv").write_text("new")
    swap_in(tmp, target, "s")
    assert (target / "results.csv").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s"]


def test_a_failed_run_removes_every_folder_it_made(tmp_path):
    deep = tmp_path / "a" / "b" / "c" / "s"
    with pytest.raises(RuntimeError):
        with OutputFolder(deep):
            raise RuntimeError("stop")
    assert list(tmp_path.iterdir()) == []
