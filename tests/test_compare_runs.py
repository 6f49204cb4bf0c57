"""compare_runs.py: two whole runs (folders `run -o` wrote for several inputs) compared input
by input, paired by the input's name; an input only one run has is added or removed as a
whole; one changes.csv, one changes.html, one exit status (a flip in any input fails)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import pipeline
from pipeline.compare_runs import compare_runs, inputs_of
from pipeline.errors import InvalidResults, OutputError
from tests.helpers import FAST_WRITE, invoke, write_scenarios

FIRST = "name,op,B,D,F,hardware\na,matmul,8,8192,8192,v5e\n"
SECOND = "name,op,B,D,F,hardware\nflip,matmul,{b},8192,8192,v5e\nsame,matmul,8,64,64,h100\n"


def night(tmp_path, folder: str, b: int, extra: str | None = None):
    """A run of two inputs (first.csv, second.csv: its `flip` row at batch `b`), and a
    third when `extra` is given, into tmp_path/folder."""
    texts = {"first": FIRST, "second": SECOND.format(b=b), **({"third": extra} if extra else {})}
    (tmp_path / f"in-{folder}").mkdir()
    for stem, text in texts.items():
        path = write_scenarios(tmp_path / f"in-{folder}", text, name=f"{stem}.csv")
        pipeline.analyze(path).write(tmp_path / folder / stem, **FAST_WRITE)
    return tmp_path / folder


def test_a_flip_only_in_a_later_input_fails_the_whole_comparison(tmp_path):
    old, new = night(tmp_path, "a", 8), night(tmp_path, "b", 4096)  # flip: memory -> compute
    result = invoke("compare", old, new, "-o", tmp_path / "changes", "--fail-on", "bound")
    assert result.exit_code == 1, result.output
    assert result.stdout.startswith("2 inputs, 3 scenarios compared: ")
    assert "changed: second.csv ->" in result.stdout
    table = pd.read_csv(tmp_path / "changes" / "changes.csv")
    assert table[["input", "name", "change"]].values.tolist()[0] == ["second.csv", "flip", "bound"]
    html = (tmp_path / "changes" / "changes.html").read_text(encoding="utf-8")
    assert "second.csv" in html and "flip" in html
    manifest = json.loads((tmp_path / "changes" / "manifest.json").read_text())
    assert manifest["inputs"]["first.csv"]["counts"]["bound"] == 0
    assert manifest["inputs"]["second.csv"]["counts"]["bound"] == 1
    same = invoke("compare", old, night(tmp_path, "c", 8), "-o", tmp_path / "same")
    assert same.exit_code == 0 and "no changes" in same.stdout


def test_an_input_only_one_run_has_is_added_or_removed_whole(tmp_path):
    old = night(tmp_path, "a", 8)
    new = night(tmp_path, "b", 8, extra="name,op,B,D,F,hardware\nx,matmul,1|2,64,64,h100\n")
    got = compare_runs(old, new)
    assert got.whole == {"third.csv": "added"} and got.counts["added"] == 2
    assert [name for name, _ in got.inputs] == ["first.csv", "second.csv", "third.csv"]
    assert got.failing(["added"]) and not got.failing(["bound"])
    back = compare_runs(new, old)
    assert back.whole == {"third.csv": "removed"} and back.counts["removed"] == 2
    assert back.summary().endswith("removed: third.csv")


def test_folders_of_different_kinds_or_no_runs_are_refused(tmp_path):
    old = night(tmp_path, "a", 8)
    mixed = invoke("compare", old, old / "first", "-o", tmp_path / "x")
    assert mixed.exit_code == 2 and "holds the runs of several inputs" in mixed.stderr
    (tmp_path / "empty").mkdir()
    with pytest.raises(InvalidResults, match="holds no run of an input"):
        compare_runs(tmp_path / "empty", old)
    assert inputs_of(old / "first") == {}  # one input's run: not a whole run
    assert list(inputs_of(old)) == ["first", "second"]


def test_the_output_may_not_be_inside_a_compared_run(tmp_path):
    old, new = night(tmp_path, "a", 8), night(tmp_path, "b", 8)
    with pytest.raises(OutputError, match="is inside the new run"):
        compare_runs(old, new).write(new / "changes")
    assert sorted(p.name for p in new.iterdir()) == ["first", "second"]


def test_inputs_are_named_by_their_files():
    from pipeline.compare_runs import input_names

    got = input_names([("sc/Plan.csv", "plan-3f9a1c", None), ("sc/plan.csv", "plan", "added"),
                       ("x/q.csv", "q", None), ("y/q.csv", "q-1", "added"),
                       ("old/r.csv", "r", "removed"), (None, "legacy", None)])  # fmt: skip
    assert got == ["Plan.csv", "plan.csv", "x/q.csv", "y/q.csv", "r.csv", "legacy"]
    twins = input_names([("a/p.csv", "p", "added"), ("a/p.csv", "p-1", "removed")])
    assert twins == ["a/p.csv", "a/p.csv (baseline)"]  # an input only each run has, one path
    same = input_names([("a/p.csv", "p", "added"), ("a/p.csv", "p-1", "added")])
    assert same == ["a/p.csv (p/)", "a/p.csv (p-1/)"]
