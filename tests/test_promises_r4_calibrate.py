"""Issue 39, round four of the hostile-user probe: `pipeline calibrate` and the calibration it
writes and a run reads. Where -o may write (never over an input, a run's folder, or a file
there, unless --force), what a calibration file may say (every estimate finite, its texts
short), the real reason when no row can be fitted and the unit a measurement looks to be in,
and a calibration change grouped as a hardware change is. Each test failed before its fix."""

from __future__ import annotations

import json
import warnings
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

import pipeline
from pipeline.calibration.file import read_calibration
from pipeline.changes.compare import compare_results
from pipeline.errors import InvalidCalibrationFile, OutputError, PipelineError
from pipeline.render.text.changes import group_lines
from tests.helpers import ROOT, invoke, measured_rows


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    """A measured file, the calibration fitted to it, and what calibrate returned."""
    folder = tmp_path_factory.mktemp("measured")
    path = folder / "measured.csv"
    measured_rows(30).to_csv(path, index=False)
    done = pipeline.calibrate(path, folder / "cal.toml")
    return path, folder / "cal.toml", done


def _tree(folder) -> dict:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


# 1: -o writes over nothing it should not


def test_1_the_measured_input_is_never_the_output(measured, tmp_path):
    path, _, _ = measured
    mine = tmp_path / "prof.csv"
    mine.write_bytes(path.read_bytes())
    before = _tree(tmp_path)
    for force in ((), ("--force",)):
        said = invoke("calibrate", mine, "-o", mine, *force)
        assert said.exit_code == 1
        assert said.stderr.splitlines()[-1] == (
            f"Error: {mine}: a calibration is a TOML file; name it *.toml (its chart .png "
            "and page .html are written beside it)"
        )
    toml = tmp_path / "prof.toml"
    toml.write_text("[h100]\nhbm_bandwidth = 4e12\n")
    before = _tree(tmp_path)
    for force in ((), ("--force",)):  # an input is never written over, --force or not
        said = invoke("calibrate", mine, "--hardware", toml, "-o", toml, *force)
        assert said.exit_code == 1
        assert said.stderr.splitlines()[-1] == (
            f"Error: {toml} is an input of this calibration; it is never written over: "
            "give another -o"
        )
    assert _tree(tmp_path) == before


def test_1_a_sibling_that_is_an_input_is_refused_too(measured, tmp_path):
    path, _, _ = measured
    page = tmp_path / "m.html"  # a scenario file named .html: the page's name
    page.write_bytes(path.read_bytes())
    said = invoke("calibrate", page, "-o", tmp_path / "m.toml", "--force")
    assert said.exit_code == 1 and "is an input of this calibration" in said.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.html"]


def test_1_nothing_inside_a_run_folder(measured, tmp_path):
    path, _, _ = measured
    pipeline.analyze(path).write(tmp_path / "out", plots=False, workbook=False, report=False)
    run = tmp_path / "out"
    before = _tree(run)
    for target in (run / "cal.toml", run / "results.csv"):
        for force in ((), ("--force",)):
            said = invoke("calibrate", run, "-o", target, *force)
            assert said.exit_code == 1, said.output
    said = invoke("calibrate", run, "-o", run / "cal.toml", "--force")
    assert said.stderr.splitlines()[-1] == (
        f"Error: {run / 'cal.toml'} is inside {run}, a folder this tool wrote and replaces "
        "whole; write the calibration elsewhere (e.g. -o calibration.toml)"
    )
    assert _tree(run) == before
    with pytest.raises(OutputError, match="a folder this tool wrote"):
        pipeline.calibrate(path, run / "sub" / "cal.toml", force=True)


def test_1_an_existing_target_or_sibling_needs_force(measured, tmp_path):
    path, _, _ = measured
    for name in ("notes.toml", "notes.png", "notes.html"):
        (tmp_path / "mine").mkdir(exist_ok=True)
        there = tmp_path / "mine" / name
        there.write_text("the user's own " + name)
        said = invoke("calibrate", path, "-o", tmp_path / "mine" / "notes.toml")
        assert said.exit_code == 1
        assert said.stderr.splitlines()[-1] == (
            f"Error: {there} already exists; give another name, or pass --force to replace it"
        )
        assert _tree(tmp_path / "mine") == {name: ("the user's own " + name).encode()}
        there.unlink()
    (tmp_path / "mine" / "notes.html").write_text("mine")
    said = invoke("calibrate", path, "-o", tmp_path / "mine" / "notes.toml", "--force")
    assert said.exit_code == 0, said.output
    assert sorted(_tree(tmp_path / "mine")) == ["notes.html", "notes.png", "notes.toml"]
    assert read_calibration(tmp_path / "mine" / "notes.toml").groups["fitted"].all()
    assert "data:image/png;base64," in (tmp_path / "mine" / "notes.html").read_text()


def test_1_the_output_ends_in_toml_and_its_folder_is_not_made(measured, tmp_path):
    path, _, _ = measured
    said = invoke("calibrate", path, "-o", tmp_path / "x.html")
    assert said.exit_code == 1
    assert said.stderr.splitlines()[-1].startswith(f"Error: {tmp_path / 'x.html'}: a calibration")
    said = invoke("calibrate", path, "-o", tmp_path / "new" / "c.toml")
    assert said.exit_code == 1
    assert said.stderr.splitlines()[-1] == (
        f"Error: folder {tmp_path / 'new'} does not exist; create it first"
    )
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(OutputError, match="name it \\*.toml"):
        pipeline.calibrate(path, tmp_path / "c.txt")
    upper = pipeline.calibrate(path, tmp_path / "C.TOML")  # the case of .toml is the user's
    assert [f.name for f in upper.files] == ["C.TOML", "C.png", "C.html"]


# 2: what a calibration file may say keeps every estimate finite


@pytest.mark.parametrize(
    ("old", "new", "said"),
    [
        ("overhead_seconds = ", "overhead_seconds = 1e300 # ",
         "key overhead_seconds: 1e+300 is out of range; an overhead is seconds per op, from 0 "
         "to 3600 (an hour)"),
        ("compute_efficiency = ", "compute_efficiency = 1e-310 # ",
         "key compute_efficiency: 1e-310 is out of range; an efficiency is a number from "
         "1e-06 to 1 (1 = the full rate)"),
    ],
)  # fmt: skip
def test_2_a_calibration_that_would_make_an_estimate_inf_is_refused(measured, tmp_path, old,
                                                                    new, said):  # fmt: skip
    path, toml, _ = measured
    edited = tmp_path / "edited.toml"
    edited.write_text(toml.read_text().replace(old, new, 1))
    line = next(i for i, t in enumerate(edited.read_text().splitlines(), 1) if "[h100." in t)
    with pytest.raises(InvalidCalibrationFile) as err:
        pipeline.analyze(path, calibration=edited)
    assert f"{edited}:{line} [h100.matmul.bf16]: {said}" in str(err.value)


def test_2_an_estimate_past_float64_is_none_and_no_warning(measured):
    _, toml, _ = measured
    huge = {"name": "huge", "op": "custom", "hardware": "h100", "flops": 1.7e308, "bytes": 1.0,
            "peak_flops": 1.0}  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = pipeline.analyze([huge], calibration=toml)
    t = a.results["t_estimate"].to_numpy(dtype=float)
    assert a.results["t_lower"].iloc[0] == pytest.approx(1.7e308)
    assert not np.isinf(t).any() and np.isnan(t[0])


def test_2_a_fit_stays_within_what_a_file_may_say(tmp_path):
    frame = measured_rows(20)
    frame["measured_seconds"] *= 1e9  # a billion times slow: an efficiency past 1e-6
    done = pipeline.calibrate(frame, tmp_path / "slow.toml")
    again = read_calibration(tmp_path / "slow.toml")  # it reads back
    fitted = again.groups[again.groups["fitted"]]
    assert (fitted[["compute_efficiency", "hbm_efficiency"]] >= 1e-6).all().all()
    assert (fitted["overhead_seconds"] <= 3600).all()
    assert done.calibration == again


# 3: the real reason when no row can be fitted; the unit a measurement looks to be in


def test_3_every_row_refused_says_why(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text(
        "name,op,hardware,B,D,F,measured_seconds\n"
        "a,matmul,h10,8,64,64,1e-5\n"
        "b,matmul,h10,16,64,64,2e-5\n"
    )
    with pytest.raises(PipelineError) as err:
        pipeline.calibrate(path)
    text = str(err.value)
    assert "no row has a measured_seconds" not in text
    assert text.startswith(f"{path}: no row to fit: every row was refused (2 rows; the first: "
                           f"{path}:2: column hardware: unknown hardware 'h10'")  # fmt: skip
    assert "unknown hardware 'h10'" in text
    said = invoke("calibrate", path, "-o", tmp_path / "c.toml")
    assert said.exit_code == 1
    lines = said.stderr.splitlines()
    assert lines[0].startswith(f"{path}:2: column hardware: unknown hardware 'h10'")
    assert lines[-1].startswith("Error: ") and "unknown hardware 'h10'" in lines[-1]


def test_3_milliseconds_under_measured_seconds_are_a_warning_naming_the_unit(tmp_path):
    frame = measured_rows(20)
    frame["measured_seconds"] *= 1_000
    done = pipeline.calibrate(frame)
    assert len(done.warnings) == 1
    assert done.warnings[0].startswith("measured_seconds look like milliseconds: ")
    assert "h100 matmul" in done.warnings[0] and "divide them by 1,000" in done.warnings[0]
    frame["measured_seconds"] *= 1_000  # microseconds
    micro = pipeline.calibrate(frame).warnings
    assert micro[0].startswith("measured_seconds look like microseconds: ")
    path = tmp_path / "ms.csv"
    frame["measured_seconds"] /= 1_000
    frame.to_csv(path, index=False)
    said = invoke("calibrate", path, "-o", tmp_path / "ms.toml")
    assert said.exit_code == 0
    assert said.stderr.startswith("warning: measured_seconds look like milliseconds: ")


def test_3_times_far_below_the_floor_are_a_warning(tmp_path):
    frame = measured_rows(20)
    frame["measured_seconds"] /= 1_000
    done = pipeline.calibrate(frame)
    assert len(done.warnings) == 1
    assert done.warnings[0].startswith("measured_seconds are far below the roofline's floor")
    assert pipeline.calibrate(measured_rows(20)).warnings == ()  # seconds: nothing said


# 4: a calibration's texts are short, and stored once in summary.json


def test_4_a_long_text_in_a_calibration_file_is_refused(measured, tmp_path):
    path, toml, _ = measured
    long = tmp_path / "long.toml"
    long.write_text(toml.read_text().replace('reason = ""', 'reason = "' + "x" * 5_000 + '"', 1))
    with pytest.raises(InvalidCalibrationFile) as err:
        pipeline.analyze(path, calibration=long)
    assert "key reason: 5,000 characters, at most 4,096; a calibration's text is a note" in str(
        err.value
    )
    source = tmp_path / "source.toml"
    text = toml.read_text()
    at = text.index("source = ")
    end = text.index("\n", at)
    source.write_text(text[:at] + 'source = "' + "s" * 4_097 + '"' + text[end:])
    with pytest.raises(InvalidCalibrationFile, match="key source: 4,097 characters"):
        read_calibration(source)


def test_4_summary_json_holds_a_calibrations_source_once(measured, tmp_path):
    path, _, done = measured
    long = replace(done.calibration, source="/data/" + "s" * 4_000 + "/measured.csv")
    a = pipeline.analyze(path, calibration=long)
    a.write(tmp_path / "out", plots=False, workbook=False, report=False)
    text = (tmp_path / "out" / "summary.json").read_text()
    assert text.count("s" * 4_000) == 1
    said = json.loads(text)["calibration"]
    assert said["label"] == "measured.csv"
    assert set(a.results["calibration"].astype(str)) == {"measured.csv"}


# 5: one calibration change is a block per chip, a line per chip, not a line per series


def test_5_a_calibration_change_is_one_line_per_chip(measured, tmp_path):
    path, toml, _ = measured
    other = tmp_path / "other.toml"
    other.write_text(toml.read_text().replace("overhead_seconds = ", "overhead_seconds = 1e-3 # "))
    old = pipeline.analyze(path, calibration=toml).results
    new = pipeline.analyze(path, calibration=other).results
    changes = compare_results(old, new)
    moved = changes.table.loc[changes.table["change"] == "t_estimate", "series"].nunique()
    assert moved == 60
    grouped = changes.groups
    assert len(grouped) == 1
    g = grouped.groups.iloc[0]
    said = (g["origin"], g["hardware"], g["scenarios"], g["series"])
    assert said == ("calibration", "h100", 60, "")
    lines = group_lines(grouped)
    (origin,) = lines["origins"]
    (block,) = origin["blocks"]
    assert block["chip"] == "h100" and block["series"] == "60 series"
    (line,) = block["lines"]
    assert line["series"] == "60 series" and line["scenarios"] == 60 and line["span"] == ""
    assert line["text"].startswith("estimate ") and "×" in line["text"]
    # the run's outputs word the same groups: the workbook's Changes sheet, the report
    later = pipeline.analyze(path, calibration=other)
    old_run = tmp_path / "old"
    pipeline.analyze(path, calibration=toml).write(old_run, plots=False, report=False)
    later.write(tmp_path / "new", plots=False, report=False, baseline=old_run)
    from openpyxl import load_workbook

    sheet = load_workbook(tmp_path / "new" / "workbook.xlsx")["Changes"]
    texts = [c for row in sheet.iter_rows(values_only=True) for c in row if isinstance(c, str)]
    assert texts.count("60 series") == 1


def test_5_a_hardware_change_still_has_a_line_per_series(measured, tmp_path):
    path, _, _ = measured
    hw = tmp_path / "hw.toml"
    hw.write_text("[h100]\nhbm_bandwidth = 4e12\n")
    changes = compare_results(pipeline.analyze(path).results,
                              pipeline.analyze(path, hardware=[hw]).results)  # fmt: skip
    grouped = changes.groups
    assert set(grouped.groups["origin"]) == {"catalog"}
    assert len(grouped) == grouped.groups["scenarios"].sum() > 1
    assert not (grouped.groups["series"] == "").any()
    assert pd.unique(grouped.groups["block"]).tolist() == [0]


def test_1_the_checks_are_the_ones_template_and_hardware_chart_use(tmp_path):
    from pipeline.textfile import check_file_place, refuse_existing

    there = tmp_path / "plan.png"
    there.write_text("mine")
    with pytest.raises(OutputError, match="already exists; give another name, or pass --force"):
        refuse_existing(there, False)
    refuse_existing(there, True)
    refuse_existing(tmp_path, False)  # a folder is check_file_place's to say
    with pytest.raises(OutputError, match="is a folder; give a file name such as c.toml"):
        check_file_place(tmp_path, "c.toml")
    with pytest.raises(OutputError, match="plan.png is a file, not a folder"):
        check_file_place(there / "c.toml")
    with pytest.raises(OutputError, match="does not exist; create it first"):
        check_file_place(tmp_path / "no" / "c.toml")
    assert there.read_text() == "mine"


def test_one_row_is_said_as_one_row(tmp_path):
    """make run's calibrate printed 'h100 all_gather: not fitted (1 rows)'."""
    out = tmp_path / "cal.toml"
    got = invoke("calibrate", ROOT / "scenarios" / "measured.csv", "-o", out)
    assert got.exit_code == 0, got.output
    assert "h100 all_gather nvlink 8 (1 row, 6 needed)" in got.output  # too few: said once
    assert "1 rows" not in got.output


def test_a_run_whose_every_row_is_refused_writes_its_outputs_with_a_calibration(measured, tmp_path):
    """Found by a review: `run --calibration` of a file whose every row was refused crashed
    writing results.csv (an empty calibration column has no text type); without
    --calibration it wrote everything and exited 1."""
    _path, cal, _done = measured
    rows = [{"name": "x", "op": "matmul", "B": 8, "D": 64, "F": 64, "hardware": "nochip"}]
    analysis = pipeline.analyze(rows, calibration=cal)
    assert analysis.problem_list and analysis.results.empty
    written = analysis.write(tmp_path / "out", plots=False)
    assert {"results.csv", "errors.csv", "report.html"} <= {p.name for p in written.files}
