"""What the tool promises, round four (issue 39): run folders, baselines and what a night
prints. Every input keeps its own name in its folder (any script, safe on every OS), a
baseline is paired by the input's own name, `--baseline latest` reads start times as times,
and a failing night says what failed and where."""

from __future__ import annotations

import json
import os
import random
import re
import unicodedata
from pathlib import Path

import pandas as pd
import pytest

import pipeline
from pipeline.api.analyze import output_names
from pipeline.api.compare import compare_runs
from pipeline.names import folder_name
from pipeline.run.earlier import newest_run
from pipeline.scenarios import load_scenarios
from tests.helpers import FAST, FAST_WRITE, HEAD, invoke, write_scenarios

LOW = f"{HEAD}\nx,matmul,1,4096,4096,h100\n"  # memory-bound
HIGH = f"{HEAD}\nx,matmul,4096,4096,4096,h100\n"  # compute-bound: a flip from LOW
WINDOWS = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)),
           *(f"lpt{i}" for i in range(10))}  # fmt: skip


PAGES = ("--no-plots", "--no-workbook")  # the report, so the index too


def _inputs(folder: Path, texts: dict[str, str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in texts.items():
        write_scenarios(folder, text, name=name)


def _night(tmp_path: Path, date: str, *extra: str, quiet: bool = True, fast=FAST):
    """`pipeline run 'sc/*.csv' -o nightly/DATE -q --baseline latest EXTRA` in tmp_path."""
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        return invoke("run", "sc/*.csv", "-o", f"nightly/{date}", *(["-q"] if quiet else []),
                      *fast, "--baseline", "latest", *extra)  # fmt: skip
    finally:
        os.chdir(here)


def _manifests(run: Path) -> dict[str, dict]:
    """Each input's manifest in a run folder, by the input file's name."""
    found = {}
    for path in run.glob("*/manifest.json"):
        manifest = json.loads(path.read_text(encoding="utf-8"))
        found[Path(manifest["input_path"]).name] = {**manifest, "folder": path.parent.name}
    return found


# ---------------------------------------------------------------- folders keep the name


def test_hangul_inputs_keep_their_letters_in_their_folders():
    paths = [Path("sc/계획.csv"), Path("sc/연구 노트.csv"), Path("sc/Ünïcode.csv")]
    assert output_names(paths) == ["계획", "연구-노트", "ünïcode"]


def test_adding_a_hangul_input_does_not_shift_the_baselines(tmp_path):
    """Finding: every Hangul-named input got run, run-2, … by position; a new file shifted
    every pairing, and --baseline latest reported changes that never happened (exit 0)."""
    _inputs(tmp_path / "sc", {"계획.csv": LOW, "연구.csv": HIGH})
    first = _night(tmp_path, "d1")
    assert first.exit_code == 0, first.output
    _inputs(tmp_path / "sc", {"가.csv": HIGH})  # sorts first: it took `run` before
    second = _night(tmp_path, "d2", "--fail-on", "bound")
    assert second.exit_code == 0, second.output
    got = _manifests(tmp_path / "nightly" / "d2")
    assert {n: m["folder"] for n, m in got.items()} == {"계획.csv": "계획", "연구.csv": "연구",
                                                         "가.csv": "가"}  # fmt: skip
    for name in ("계획.csv", "연구.csv"):
        stem = Path(name).stem
        assert got[name]["changes"]["baseline"] == f"nightly/d1/{stem}"
        assert got[name]["changes"]["total"] == 0
    assert "changes" not in got["가.csv"]  # no baseline of its own: not compared


def test_case_twins_get_distinct_stable_folders():
    """Plan.csv and plan.csv collided as plan, plan-2 by position; now each gets a folder of its
    own whatever the order, distinct on a case-insensitive file system too."""
    both = output_names([Path("Plan.csv"), Path("plan.csv")])
    assert len({n.casefold() for n in both}) == 2
    assert output_names([Path("plan.csv"), Path("Plan.csv")]) == both[::-1]  # order: no matter
    assert both[1] == "plan"  # the name already a folder name keeps it
    assert re.fullmatch(r"plan-[0-9a-f]{6}", both[0])
    same = output_names([Path("a/plan.csv"), Path("b/plan.csv")])
    assert (
        len(set(same)) == 2 and output_names([Path("b/plan.csv"), Path("a/plan.csv")]) == same[::-1]
    )


def test_long_names_stay_within_what_a_file_system_takes():
    for stem in ("a" * 300, "계" * 300, "a" * 246):
        paths = [Path(f"x/{stem}.csv"), Path(f"y/{stem}.csv")]
        for name in (folder_name(stem), *output_names(paths)):
            assert len(name.encode("utf-8")) <= 250, name
    assert folder_name("a" * 246) == "a" * 246  # as long as it was (round one's F22)
    assert len(set(output_names([Path("x/" + "계" * 300), Path("y/" + "계" * 300)]))) == 2


def test_case_twins_are_paired_by_their_own_names(tmp_path):
    """Night one has Plan.csv only (folder plan); night two adds plan.csv, which keeps `plan`
    by its name: Plan.csv is still compared with Plan.csv, and plan.csv with nothing."""
    _inputs(tmp_path / "sc", {"Plan.csv": LOW})
    assert _night(tmp_path, "d1").exit_code == 0
    _inputs(tmp_path / "sc", {"plan.csv": HIGH})
    second = _night(tmp_path, "d2", "--fail-on", "bound")
    assert second.exit_code == 0, second.output
    got = _manifests(tmp_path / "nightly" / "d2")
    assert got["Plan.csv"]["changes"]["baseline"] == "nightly/d1/plan"
    assert got["Plan.csv"]["changes"]["total"] == 0
    assert got["plan.csv"]["folder"] == "plan" and "changes" not in got["plan.csv"]
    assert got["Plan.csv"]["folder"] != "plan"


def test_compare_of_two_runs_pairs_inputs_by_their_names(tmp_path):
    """`pipeline compare` of two whole runs pairs Plan.csv with Plan.csv even when its folder
    name differs between the nights."""
    _inputs(tmp_path / "sc", {"Plan.csv": LOW, "other.csv": LOW})
    assert _night(tmp_path, "d1").exit_code == 0
    _inputs(tmp_path / "sc", {"plan.csv": HIGH})
    assert _night(tmp_path, "d2").exit_code == 0
    got = compare_runs(tmp_path / "nightly" / "d1", tmp_path / "nightly" / "d2")
    assert got.counts["bound"] == 0 and got.counts["removed"] == 0
    assert got.whole == {"plan.csv": "added"}  # new tonight, in plan/
    assert got.counts["added"] == 1


def test_compare_keeps_apart_two_inputs_that_took_one_folder_name(tmp_path):
    """Plan.csv one night and plan.csv the next both write plan/: two inputs, not one."""
    _inputs(tmp_path / "sc", {"Plan.csv": LOW})
    assert _night(tmp_path, "d1").exit_code == 0
    (tmp_path / "sc" / "Plan.csv").unlink()
    _inputs(tmp_path / "sc", {"plan.csv": HIGH})
    assert _night(tmp_path, "d2").exit_code == 0
    got = compare_runs(tmp_path / "nightly" / "d1", tmp_path / "nightly" / "d2")
    assert got.whole == {"plan.csv": "added", "Plan.csv": "removed"}
    assert got.counts["bound"] == 0


@pytest.mark.parametrize(
    ("stem", "folder"),
    [
        ("계획", "계획"),
        ("CON", "_con"),  # a reserved name on Windows, with or without a suffix
        ("aux.v2", "_aux.v2"),
        ("a/b\\c", "a-b-c"),
        ("x\u202eevil", "x-evil"),  # a bidi override: never in a path
        ("ｆｕｌｌ", "full"),  # NFKC: one spelling of a name
        ("..", "run"),
        ("", "run"),
        ("مرحبا", "مرحبا"),
        ("नमस्ते", "नमस्ते"),  # combining marks belong to the letters
    ],
)
def test_folder_names_keep_letters_and_stay_safe(stem, folder):
    assert folder_name(stem) == folder


def test_folder_names_from_any_text_are_safe_everywhere():
    rng = random.Random(39)
    alphabet = 'aZ09._- /\\:*?"<>|\u00dc\u0130\n\t$\x00\ufb01\u202e\u200f\u2066계획ß\u0301مन'
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 200)))
        name = folder_name(text)
        assert name and name not in {".", ".."} and not name.startswith(".")
        assert not name.endswith((".", " "))
        assert len(name.encode("utf-8")) <= 250, name
        assert not any(unicodedata.category(ch)[0] in "CZ" for ch in name), name
        assert not set(name) & set('/\\:*?"<>|'), name
        assert name.split(".")[0] not in WINDOWS
        assert name == unicodedata.normalize("NFC", name) and name == name.lower()


# ---------------------------------------------------------------- --baseline latest


def test_baseline_latest_with_output_dot(tmp_path, monkeypatch):
    """`-o .` (or `./`) looked for the baseline inside the output folder: 'does not exist'."""
    _inputs(tmp_path / "sc", {"q.csv": LOW})
    for date, out in (("d1", "."), ("d2", "./")):
        (tmp_path / "nightly" / date).mkdir(parents=True)
        monkeypatch.chdir(tmp_path / "nightly" / date)
        got = invoke("run", tmp_path / "sc" / "q.csv", "-o", out, *FAST, "--baseline", "latest")
        assert got.exit_code == 0, got.output
    monkeypatch.chdir(tmp_path)
    manifest = json.loads((tmp_path / "nightly" / "d2" / "q" / "manifest.json").read_text())
    assert manifest["changes"]["baseline"] == os.path.join("..", "d1", "q")
    assert "../d1 (started " in got.stderr


def _finished(folder: Path, started, name: str = "q") -> None:
    (folder / name).mkdir(parents=True)
    manifest = {"tool": "roofline-pipeline", "started": started, "files": []}
    (folder / name / "manifest.json").write_text(json.dumps(manifest))


def test_latest_reads_start_times_as_times_and_warns_of_odd_ones(tmp_path):
    nightly = tmp_path / "nightly"
    _finished(nightly / "d1", "2026-11-22T02:00:00+00:00")
    _finished(nightly / "d2", "2026-11-23T03:00:00+05:00")  # 22:00 UTC on the 22nd
    _finished(nightly / "d3", "2026-11-23T00:30:00Z")  # the newest, though not as text
    _finished(nightly / "future", "2999-01-01T00:00:00+00:00")  # a clock far ahead
    _finished(nightly / "junk", "zzz")  # not a time: text order put it first for ever
    _finished(nightly / "number", 5)
    said: list[str] = []
    assert newest_run(nightly / "today", said.append)[0] == nightly / "d3"
    assert len(said) == 3, said
    assert any("future" in s and "2999-01-01" in s and "in the future" in s for s in said)
    assert any("junk" in s and "'zzz'" in s and "not a time" in s for s in said)


def test_run_prints_the_baseline_used_and_warns_of_a_future_one(tmp_path):
    _inputs(tmp_path / "sc", {"q.csv": LOW})
    assert _night(tmp_path, "d1").exit_code == 0
    _finished(tmp_path / "nightly" / "ahead", "2999-01-01T00:00:00+00:00")
    got = _night(tmp_path, "d2")
    assert got.exit_code == 0, got.output
    assert "ahead" in got.stderr and "in the future" in got.stderr  # even with -q
    manifest = json.loads((tmp_path / "nightly" / "d2" / "q" / "manifest.json").read_text())
    assert manifest["changes"]["baseline"] == "nightly/d1/q"
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        loud = invoke("run", "sc/q.csv", "-o", "nightly/d3", *FAST, "--baseline", "latest")
    finally:
        os.chdir(here)
    started = _manifests(tmp_path / "nightly" / "d2")["q.csv"]["started"]
    assert re.search(rf"baseline latest: nightly/d2 \(started {re.escape(started)}\)", loud.stderr)


# ---------------------------------------------------------------- a failing night


@pytest.mark.parametrize("quiet", [True, False])
def test_a_failing_night_says_what_failed_and_where(tmp_path, quiet):
    """`--fail-on bound` exited 1 and printed nothing: the cron mail was empty."""
    _inputs(tmp_path / "sc", {"q.csv": LOW, "same.csv": LOW})
    assert _night(tmp_path, "d1").exit_code == 0
    _inputs(tmp_path / "sc", {"q.csv": HIGH})
    got = _night(tmp_path, "d2", "--fail-on", "bound,fits", quiet=quiet)
    assert got.exit_code == 1
    lines = [line for line in got.stderr.splitlines() if "changed since" in line]
    assert lines == [
        "sc/q.csv: changed since nightly/d1/q: bound 1 (--fail-on bound,fits; also t_lower 1)"
        " -> nightly/d2/q/changes.csv"
    ], got.stderr
    table = pd.read_csv(tmp_path / "nightly" / "d2" / "q" / "changes.csv")
    assert sorted(table["change"]) == ["bound", "t_lower"]


def test_a_night_that_gains_or_loses_an_input_fails_on_added_or_removed(tmp_path):
    """A dropped input passed `--fail-on added,removed` silently (exit 0, nothing printed)
    while `compare` of the same two nights said "added: d; removed: b" and exited 1."""
    _inputs(tmp_path / "sc", {"a.csv": LOW, "b.csv": LOW})
    assert _night(tmp_path, "d1").exit_code == 0
    (tmp_path / "sc" / "b.csv").unlink()
    _inputs(tmp_path / "sc", {"d.csv": LOW})
    got = _night(tmp_path, "d2", "--fail-on", "added,removed,bound", fast=PAGES)
    assert got.exit_code == 1
    lines = got.stderr.splitlines()
    assert "sc/b.csv: removed since nightly/d1/b: no input of this run reads it" in got.stderr
    assert any(line.startswith("sc/d.csv: added since nightly/d1:") for line in lines), lines
    index = (tmp_path / "nightly" / "d2" / "index.html").read_text(encoding="utf-8")
    assert "failed --fail-on: added" in index
    # without those kinds the night passes, and says so only without -q
    _inputs(tmp_path / "sc", {"e.csv": LOW})
    assert _night(tmp_path, "d3", "--fail-on", "bound").exit_code == 0
    loud = _night(tmp_path, "d4", "--fail-on", "bound", quiet=False)
    assert loud.exit_code == 0 and "note: sc/e.csv" not in loud.stderr  # e ran on d3
    (tmp_path / "sc" / "e.csv").unlink()
    loud = _night(tmp_path, "d5", "--fail-on", "bound", quiet=False)
    assert "note: sc/e.csv: in the baseline (nightly/d4/e/), not in this run" in loud.stderr


def test_the_index_says_which_inputs_failed_the_night(tmp_path):
    _inputs(tmp_path / "sc", {"q.csv": LOW, "same.csv": LOW})
    assert _night(tmp_path, "d1").exit_code == 0
    _inputs(tmp_path / "sc", {"q.csv": HIGH})
    assert _night(tmp_path, "d2", "--fail-on", "bound", fast=PAGES).exit_code == 1
    index = (tmp_path / "nightly" / "d2" / "index.html").read_text(encoding="utf-8")
    assert index.count("failed --fail-on: bound 1") == 1  # q, not same


def test_quiet_warning_lines_say_what_the_warning_is(tmp_path):
    path = write_scenarios(tmp_path, f"sep=,\n{HEAD}\nx,matmul,1,64,64,h100\n", name="w.csv")
    got = invoke("run", path, "-o", tmp_path / "out", "-q", *FAST)
    assert got.exit_code == 0, got.output
    line = got.stderr.strip()
    assert line.startswith(f"{path}: 1 warning (skipped Excel's delimiter hint"), line
    assert line.endswith("manifest.json") and "\n" not in line


def test_a_write_outside_the_cli_is_untouched(tmp_path):
    """The library's default folder name is the same rule (Analysis.name)."""
    path = write_scenarios(tmp_path, LOW, name="계획 A.csv")
    analysis = pipeline.analyze(path)
    assert analysis.name == "계획-a"
    written = analysis.write(tmp_path / "out" / analysis.name, **FAST_WRITE)
    assert written.folder.name == "계획-a"


# ---------------------------------------------------------------- found by a review


def test_every_commands_errors_say_error_in_the_chosen_language(tmp_path, monkeypatch):
    """`hardware --lang ko nosuch` said `Error: unknown hardware` where compare said `오류:`."""
    got = invoke("hardware", "--lang", "ko", "nosuch")
    assert got.exit_code == 1 and got.stderr.startswith("오류: unknown hardware 'nosuch'")
    usage = invoke("hardware", "--lang", "ko", "--force", "h100")  # --force without --chart
    assert usage.exit_code == 2 and "\n오류: --force" in usage.stderr, usage.stderr
    assert "도움말: cli hardware --help" in usage.stderr and "Try" not in usage.stderr
    monkeypatch.setenv("PIPELINE_LANG", "ko")
    for args in (["template", str(tmp_path)], ["nosuch"], ["run", "--bogus"]):
        got = invoke(*args)
        assert got.exit_code in (1, 2) and "오류: " in got.stderr, (args, got.stderr)
        assert "Error:" not in got.stderr
    monkeypatch.setenv("PIPELINE_LANG", "xx")  # no language: English, and no traceback
    got = invoke("hardware", "h100")
    assert got.exit_code == 2 and "Error: PIPELINE_LANG is 'xx'" in got.stderr
    monkeypatch.delenv("PIPELINE_LANG")
    assert invoke("hardware", "nosuch").stderr.startswith("Error: unknown hardware 'nosuch'")


def test_the_reach_warnings_left_unsaid_are_counted_in_scenarios(tmp_path):
    """'and 1 more rows ask a link …' of one input row: the warnings left out are chips of
    that row, so the line counts the scenarios they hold and names the lines."""
    every = "|".join(pipeline.catalog().index)  # 21 chips, 20 warnings named
    text = f"name,op,hardware,B,D,F,chips,shard\nq,matmul,{every},64,65536,4096,32768|65536,D\n"
    path = write_scenarios(tmp_path, text, name="r.csv")
    for planned in (False, True):  # run, and validate's (and Dask's) unexpanded check
        warnings = load_scenarios(path, pipeline.load_hardware([]),
                                  planned=planned).warnings  # fmt: skip
        more = [w for w in warnings if "more" in w and "ask" in w]
        left = len(pipeline.catalog()) - 20
        assert more == [f"{path}: and {2 * left} more scenarios on line 2 ask a link for more "
                        "chips than it reaches"], warnings  # fmt: skip


def test_validate_and_run_count_a_partly_rejected_row_alike(tmp_path):
    """validate said '0 rejected rows, 1 row partly rejected' where run said '1 rejected row'
    of a row one of whose fleet points is a duplicate (h100-sxm is h100)."""
    text = f"{HEAD}\nq,matmul,8,4096,4096,h100|h100-sxm|b200\nr,matmul,8,4096,4096,h10\n"
    text += "s,matmul,8,64,64,h100\n"
    path = write_scenarios(tmp_path, text, name="dup.csv")
    checked = invoke("validate", path)
    ran = invoke("run", path, "-o", tmp_path / "out", *FAST)
    assert checked.exit_code == ran.exit_code == 1, ran.output
    said = ", 2 rejected rows (1 partly)"
    assert checked.stdout == f"{path}: 3 rows read, 3 valid scenarios{said}\n", checked.stdout
    assert f"network-bound 0){said} -> " in ran.stdout, ran.stdout
    ko = invoke("validate", path, "--lang", "ko")
    assert ko.stdout.endswith("거부된 행 2개 (그중 1개는 일부만)\n"), ko.stdout
