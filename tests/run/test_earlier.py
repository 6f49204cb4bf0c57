"""run/earlier.py: which earlier run is the baseline. Start times read as times (a future or
unreadable one skipped, and said), the run's path as the user wrote -o, and each input paired
with its own run by the name its manifest records."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from pipeline.run.earlier import input_file, newest_run, pair_runs, runs_in, start_time


def _finished(folder: Path, started, input_path: str = "q.csv") -> None:
    folder.mkdir(parents=True)
    manifest = {"tool": "roofline-pipeline", "started": started, "input_path": input_path,
                "files": []}  # fmt: skip
    (folder / "manifest.json").write_text(json.dumps(manifest))


def test_start_times_are_times_in_any_zone():
    assert start_time("2026-11-23T03:00:00+05:00") < start_time("2026-11-23T00:30:00Z")
    assert start_time("2026-11-23T00:30:00") == start_time("2026-11-23T00:30:00+00:00")
    assert start_time("zzz") is None and start_time(5) is None and start_time(None) is None


def test_newest_run_skips_and_says_a_future_or_unreadable_start(tmp_path):
    now = datetime(2026, 11, 25, 2, tzinfo=UTC)
    _finished(tmp_path / "n" / "a" / "q", "2026-11-24T02:00:00+00:00")
    _finished(tmp_path / "n" / "b" / "q", "2026-11-25T02:03:00+00:00")  # clocks differ a bit
    _finished(tmp_path / "n" / "c" / "q", "2026-11-25T03:00:00+00:00")  # an hour ahead
    _finished(tmp_path / "n" / "d" / "q", "")
    said: list[str] = []
    found = newest_run(tmp_path / "n" / "today", said.append, now=now)
    assert found == (tmp_path / "n" / "b", "2026-11-25T02:03:00+00:00")
    assert [s.split(":")[0:2] for s in said] == [["warning", " baseline latest"]] * 2
    assert "/n/c: it started 2026-11-25T03:00:00+00:00, in the future" in said[0]
    assert "/n/d: its start time '' is not a time" in said[1]
    assert newest_run(tmp_path / "n" / "today", now=now) == found  # no one to tell: quiet


def test_newest_run_is_named_from_the_output_folder_as_written(tmp_path, monkeypatch):
    _finished(tmp_path / "n" / "a", "2026-11-24T02:00:00+00:00")
    (tmp_path / "n" / "b").mkdir()
    monkeypatch.chdir(tmp_path / "n" / "b")
    for out in (".", "./", "../b", str(tmp_path / "n" / "b" / ".")):
        folder, _ = newest_run(Path(out))
        assert folder.resolve() == tmp_path / "n" / "a", out
    assert newest_run(Path("."))[0] == Path("../a")


def test_input_file_drops_a_workbooks_sheet_only():
    assert input_file({"input_path": "in/plan.xlsx[Scenarios]"}) == "in/plan.xlsx"
    assert input_file({"input_path": "in/a[1].csv"}) == "in/a[1].csv"
    assert input_file({}) is None and input_file(None) is None


def test_runs_pair_by_the_inputs_name_never_by_position(tmp_path):
    _finished(tmp_path / "plan", "t", "sc/Plan.csv")
    _finished(tmp_path / "run", "t", "sc/계획.csv")
    _finished(tmp_path / "x-1", "t", "a/s.csv")
    _finished(tmp_path / "x-2", "t", "b/s.csv")
    (tmp_path / "legacy").mkdir()  # no manifest: its folder's name is all there is
    there = runs_in(tmp_path)
    assert there[tmp_path / "legacy"] is None and there[tmp_path / "plan"] == "sc/Plan.csv"
    wanted = [
        ("sc/plan.csv", "plan"),  # another input, though its folder is `plan` tonight
        ("./sc/Plan.csv", "plan-3f9a1c"),
        (
            "elsewhere/\u1100\u1168\u1112\u116c\u11a8.csv",
            "계획",
        ),  # 계획, decomposed: one of that name
        ("b/s.csv", "s-1"),
        ("c/s.csv", "s-2"),  # two of that name, neither the same path: not guessed
        ("legacy.csv", "legacy"),
    ]
    assert pair_runs(wanted, there) == [
        None, tmp_path / "plan", tmp_path / "run", tmp_path / "x-2", None, tmp_path / "legacy"
    ]  # fmt: skip
