"""The README's nightly recipe, run literally over four nights (issue 29): the first night has
nothing to compare and passes; the second compares with the first; the third does not run
(a crashed attempt leaves a folder with no finished run, which is skipped); the fourth, after
a scenario edit and a catalog change, compares with the second, writes everything and exits
1 on the flips. The cron line is taken from the README itself."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from tests.helpers import BOOK_SCENARIOS

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def cron_command() -> str:
    """The README's crontab line: the command after `cd DIR &&`, its lines joined."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    line = re.search(r"^0 2 \* \* \*  cd \S+ && (.+?)\n```", text, re.S | re.M)
    assert line, "the README's nightly section has a crontab line"
    return re.sub(r"\\\n\s*", "", line.group(1)).replace("\\%", "%")


def night(folder: Path, date: str, extra: str = "") -> subprocess.CompletedProcess:
    command = cron_command().replace("$(date +%F)", date).replace(".venv/bin/", f"{BIN}/")
    return subprocess.run(command + extra, shell=True, cwd=folder, capture_output=True,
                          text=True, timeout=600)  # fmt: skip


@pytest.fixture(scope="module")
def nights(tmp_path_factory):
    """Four nights in one folder: (exit statuses, the folder)."""
    folder = tmp_path_factory.mktemp("srv")
    (folder / "scenarios").mkdir()
    shutil.copy(BOOK_SCENARIOS, folder / "scenarios" / "q1-q5.csv")
    shutil.copy(ROOT / "scenarios" / "collectives.csv", folder / "scenarios")
    done = {"2026-11-22": night(folder, "2026-11-22"), "2026-11-23": night(folder, "2026-11-23")}
    (folder / "nightly" / "2026-11-24" / "q1-q5").mkdir(parents=True)  # crashed: no manifest
    scenarios = folder / "scenarios" / "q1-q5.csv"
    edited = re.sub(r"^(q5_h100_bf16,matmul,)512,", r"\g<1>128,", scenarios.read_text(), flags=re.M)
    assert edited != scenarios.read_text()
    scenarios.write_text(edited)
    # the catalog update a new release brings, as a hardware file (the cron line is the same)
    (folder / "chips.csv").write_text("name,hbm_bandwidth\ntpu-v5e,9e11\n")
    done["2026-11-25"] = night(folder, "2026-11-25", " --hardware chips.csv")
    return done, folder / "nightly"


def manifest(folder: Path) -> dict:
    return json.loads((folder / "manifest.json").read_text(encoding="utf-8"))


def test_the_first_night_has_nothing_to_compare_and_passes(nights):
    done, nightly = nights
    first = done["2026-11-22"]
    assert first.returncode == 0, first.stderr
    assert first.stdout == "" and first.stderr == ""  # -q: nothing to say
    for name in ("q1-q5", "collectives"):
        assert "changes" not in manifest(nightly / "2026-11-22" / name)
        assert not (nightly / "2026-11-22" / name / "changes.csv").exists()
    assert (nightly / "2026-11-22" / "index.html").is_file()


def test_the_second_night_compares_with_the_first(nights):
    done, nightly = nights
    assert done["2026-11-23"].returncode == 0, done["2026-11-23"].stderr
    for name in ("q1-q5", "collectives"):
        changes = manifest(nightly / "2026-11-23" / name)["changes"]
        assert changes["baseline"] == f"nightly/2026-11-22/{name}" and changes["total"] == 0


def test_the_fourth_night_skips_the_missing_ones_and_fails_on_the_flips(nights):
    done, nightly = nights
    fourth = done["2026-11-25"]
    assert fourth.returncode == 1, fourth.stderr  # bound flips, after writing everything
    run = nightly / "2026-11-25" / "q1-q5"
    changes = manifest(run)["changes"]
    assert changes["baseline"] == "nightly/2026-11-23/q1-q5"  # the 24th never finished
    assert changes["counts"]["bound"] > 0
    table = pd.read_csv(run / "changes.csv")
    edit = table[table["name"] == "q5_h100_bf16"]
    assert set(edit["causes"].str.contains("B 512 → 128")) == {True}
    assert table["causes"].str.contains("hbm_bandwidth 8.2e11 → 9e11").any()
    report = (run / "report.html").read_text(encoding="utf-8")
    assert "Since the baseline" in report and "nightly/2026-11-23/q1-q5" in report
    for name in ("results.csv", "results.parquet", "workbook.xlsx", "report.html", "summary.json"):
        assert (run / name).is_file(), name
    assert (nightly / "2026-11-25" / "index.html").is_file()


def test_two_nights_compare_whole_and_exit_once(nights, tmp_path):
    _, nightly = nights
    compare = [str(BIN / "pipeline"), "compare", str(nightly / "2026-11-23"),
               str(nightly / "2026-11-25"), "-o", str(tmp_path / "changes")]  # fmt: skip
    got = subprocess.run([*compare, "--fail-on", "bound"], capture_output=True, text=True)
    assert got.returncode == 1, got.stderr
    assert got.stdout.startswith("2 inputs, 1,062 scenarios compared: ")
    table = pd.read_csv(tmp_path / "changes" / "changes.csv")
    assert list(table.columns[:2]) == ["input", "name"] and set(table["input"]) >= {"q1-q5.csv"}
