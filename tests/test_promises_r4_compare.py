"""Round four (issue 39), found by a review: `pipeline compare` of two whole runs says what it
counts (inputs, scenarios), names each input by its file (two inputs whose folders are
plan/ and plan-<hash>/ are told apart, on the terminal and in changes.csv), and in Korean
names the kinds of change in Korean words, as the index page does."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from pipeline.api.compare import compare_runs
from tests.helpers import FAST, HEAD, invoke, write_scenarios

LOW = f"{HEAD}\nx,matmul,1,4096,4096,h100\ny,matmul,1..2,4096,4096,h100\n"  # memory-bound
HIGH = f"{HEAD}\nx,matmul,4096,4096,4096,h100\ny,matmul,1..2,4096,4096,h100\n"  # x flips
OTHER = f"{HEAD}\nz,matmul,8,64,64,h100\n"


def _run(tmp_path: Path, texts: dict[str, str], out: str):
    """`pipeline run NAMES -o OUT` in tmp_path, each input written first (names as given)."""
    for name, text in texts.items():
        write_scenarios(tmp_path, text, name=name)
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        got = invoke("run", *texts, "-o", out, "-q", *FAST)
    finally:
        os.chdir(here)
    assert got.exit_code == 0, got.output
    return tmp_path / out


def _compare(tmp_path: Path, old: str, new: str, *extra: str):
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        return invoke("compare", old, new, "-o", "changes", *extra)
    finally:
        os.chdir(here)


def test_the_line_says_inputs_and_scenarios_apart(tmp_path):
    """'2 inputs, 4 compared': the second count was scenarios, not inputs."""
    _run(tmp_path, {"a.csv": LOW, "b.csv": OTHER}, "night/1")
    _run(tmp_path, {"a.csv": HIGH, "b.csv": OTHER}, "night/4")
    got = _compare(tmp_path, "night/1", "night/4")
    assert got.exit_code == 1
    assert got.stdout.startswith("2 inputs, 4 scenarios compared: 2 changes (bound 1, t_lower 1)")
    ko = _compare(tmp_path, "night/1", "night/4", "--lang", "ko")
    assert ko.stdout.startswith("입력 2개, 시나리오 4개 비교: "), ko.stdout
    one = compare_runs(tmp_path / "night/1", tmp_path / "night/1")
    assert one.summary().startswith("2 inputs, 4 scenarios compared: no changes")


def test_inputs_whose_folders_share_a_stem_are_named_by_their_files(tmp_path):
    """Plan.csv and plan.csv (folders plan and plan-<hash>) were both called `plan`:
    'changed: plan; added: plan', and changes.csv's input column said plan twice."""
    _run(tmp_path, {"Plan.csv": OTHER}, "n2/a")
    _run(
        tmp_path,
        {
            "Plan.csv": OTHER.replace(",8,", ",4096,"),  # z changes
            "plan.csv": OTHER,
        },
        "n2/b",
    )
    assert sorted(p.name for p in (tmp_path / "n2/b").iterdir())[0] == "plan"  # and plan-<hash>
    got = _compare(tmp_path, "n2/a", "n2/b")
    assert got.exit_code == 1
    assert "; changed: Plan.csv; added: plan.csv -> changes/" in got.stdout, got.stdout
    table = pd.read_csv(tmp_path / "changes" / "changes.csv")
    assert set(table.loc[table["change"] == "added", "input"]) == {"plan.csv"}
    assert set(table.loc[table["change"] != "added", "input"]) == {"Plan.csv"}


def test_inputs_of_one_file_name_in_two_folders_are_named_by_their_paths(tmp_path):
    (tmp_path / "x").mkdir()
    (tmp_path / "y").mkdir()
    _run(tmp_path, {"x/plan.csv": OTHER}, "n/a")
    _run(tmp_path, {"x/plan.csv": OTHER, "y/plan.csv": OTHER}, "n/b")
    got = compare_runs(tmp_path / "n/a", tmp_path / "n/b")
    assert [name for name, _c in got.inputs] == ["x/plan.csv", "y/plan.csv"]
    assert got.whole == {"y/plan.csv": "added"}


def test_korean_names_the_kinds_in_korean(tmp_path):
    """`--lang ko` said '(added 1, bound 2, t_lower 2)': the kinds in English, where the
    index page says 병목 전환 and 시간 변경."""
    _run(tmp_path, {"a.csv": LOW}, "n/1")
    _run(tmp_path, {"a.csv": HIGH, "b.csv": OTHER}, "n/2")
    ko = _compare(tmp_path, "n/1", "n/2", "--lang", "ko")
    assert ko.exit_code == 1
    line = ko.stdout
    assert "(추가 1건, 병목 전환 1건, 시간 변경 1건)" in line, line
    assert not any(kind in line for kind in ("bound", "t_lower", "added")), line
    # one run against another: the same words
    single = invoke("compare", tmp_path / "n/1/a", tmp_path / "n/2/a", "-o",
                    tmp_path / "one", "--lang", "ko")  # fmt: skip
    assert "(병목 전환 1건, 시간 변경 1건)" in single.stdout, single.stdout
    english = _compare(tmp_path, "n/1", "n/2")
    assert "(added 1, bound 1, t_lower 1)" in english.stdout  # English: the --fail-on names
