"""`make run`, as a newcomer meets it: its recipe's commands run from a fresh folder, end with
the page to open, and that page links every run they wrote and the calibration; the install it
makes is what running needs, the test and lint tools come with `make test`."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def recipe(target: str) -> list[str]:
    """The command lines of a Makefile target, variables as written."""
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    match = re.search(rf"^{re.escape(target)}:[^\n]*\n((?:\t[^\n]*\n)+)", text, re.M)
    assert match, f"no {target} target in the Makefile"
    return [line.strip() for line in match.group(1).splitlines()]


def test_make_run_ends_with_the_page_to_open_and_it_links_everything(tmp_path):
    shutil.copytree(ROOT / "scenarios", tmp_path / "scenarios")
    said = []
    for line in recipe("run"):
        if line.startswith("@echo"):
            said.append(line.removeprefix("@echo").strip().strip('"'))
            continue
        words = shlex.split(line.replace("$(VENV)/bin/", ""))
        if words[:2] == ["mkdir", "-p"]:
            (tmp_path / words[2]).mkdir(parents=True, exist_ok=True)
            continue
        assert words[0] == "pipeline", line
        done = subprocess.run(
            [str(BIN / "pipeline"), *words[1:]], cwd=tmp_path, capture_output=True, text=True
        )
        assert done.returncode == 0, (line, done.stdout, done.stderr)
        assert "Error" not in done.stdout + done.stderr, line
        if " calibrate " in f" {line} ":  # the calibration fits real groups, none "not fitted"
            assert "h100 matmul bf16: roofline+shape" in done.stdout + done.stderr
            assert "not fitted" not in done.stdout + done.stderr
            assert "warning" not in done.stdout + done.stderr
    assert said and "output/index.html" in said[-1]  # the last words name the page to open
    index = (tmp_path / "output" / "index.html").read_text(encoding="utf-8")
    for href in (
        "q1-q5/report.html",
        "collectives/report.html",
        "models/report.html",
        "serving/report.html",
        "training/report.html",
        "measured/report.html",
        "calibration.html",
    ):
        assert f'href="{href}"' in index, href
    # a second make run refits over its own calibration instead of stopping
    calibrate = next(line for line in recipe("run") if " calibrate " in line)
    words = shlex.split(calibrate.replace("$(VENV)/bin/", ""))
    again = subprocess.run(
        [str(BIN / "pipeline"), *words[1:]], cwd=tmp_path, capture_output=True, text=True
    )
    assert again.returncode == 0, again.stderr


def test_make_run_installs_what_running_needs_and_make_test_the_tools():
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    run_stamp = re.search(r"^run: (\S+)", text, re.M).group(1)
    test_stamp = re.search(r"^test: (\S+)", text, re.M).group(1)
    assert run_stamp != test_stamp
    installs = {
        stamp: [line for line in recipe(stamp) if "pip install" in line and "-e" in line]
        for stamp in (run_stamp, test_stamp)
    }
    assert all("[" not in line for line in installs[run_stamp]), installs[run_stamp]
    assert any("dev" in line for line in installs[test_stamp]), installs[test_stamp]
