"""`pipeline calibrate` and pipeline.calibrate (issue 32): a fit from a scenario file or a
run's folder, its file, chart and page; then `--calibration` on run: t_estimate beside
t_lower in every output, summed into totals, the findings against the estimate, a
calibration change named as the cause of the estimates' change."""

from __future__ import annotations

import json

import numpy as np
import openpyxl
import pandas as pd
import pytest

import pipeline
from pipeline.api.calibrate import calibration_text
from pipeline.calibration.file import read_calibration
from pipeline.changes.compare import compare_results
from pipeline.errors import InvalidResults
from tests.helpers import TRUE_CALIBRATION as TRUE
from tests.helpers import invoke, measured_rows


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    folder = tmp_path_factory.mktemp("measured")
    path = folder / "measured.csv"
    measured_rows().to_csv(path, index=False)
    done = pipeline.calibrate(path, folder / "cal.toml")
    return path, folder / "cal.toml", done


def test_a_fit_writes_its_file_chart_and_page_and_recovers_the_efficiencies(measured):
    path, toml, done = measured
    assert [f.name for f in done.files] == ["cal.toml", "cal.png", "cal.html"]
    cal = read_calibration(toml)
    assert cal == done.calibration and cal.source == str(path)
    for kind, (e_c, e_h, over) in TRUE.items():
        g = cal.group("h100", kind)
        assert g["compute_efficiency"] == pytest.approx(e_c, rel=0.03)
        assert g["hbm_efficiency"] == pytest.approx(e_h, rel=0.03)
        assert g["overhead_seconds"] == pytest.approx(over, rel=0.05)
    assert cal.heldout_error < 0.05 < 0.25 < cal.error_before
    page = (toml.parent / "cal.html").read_text()
    assert "Per chip and op kind" in page and "data:image/png;base64," in page
    assert repr(done) == calibration_text(cal)
    assert repr(done).startswith(f"calibration of {path}: error ")


def test_a_runs_folder_gives_the_same_fit_as_its_scenario_file(measured, tmp_path):
    path, _, done = measured
    pipeline.analyze(path).write(tmp_path / "run")
    again = pipeline.calibrate(tmp_path / "run")
    pd.testing.assert_frame_equal(again.calibration.groups, done.calibration.groups)
    assert again.files == () and again.calibration.source == str(tmp_path / "run")
    parquet = pipeline.calibrate(tmp_path / "run" / "results.parquet")  # the file itself
    pd.testing.assert_frame_equal(parquet.calibration.groups, done.calibration.groups)


def test_rows_without_a_measurement_are_an_error_saying_what_to_give(tmp_path):
    with pytest.raises(InvalidResults, match="no row has a measured_seconds"):
        pipeline.calibrate([{"name": "a", "op": "matmul", "hardware": "h100", "B": 8, "D": 8,
                             "F": 8}])  # fmt: skip


def test_the_command_prints_each_group_and_the_files(measured, tmp_path):
    path, _, _ = measured
    result = invoke("calibrate", path, "-o", tmp_path / "c.toml")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[1].startswith("  h100 matmul: compute 8") and "held out" in lines[1]
    assert lines[-1] == f"-> {tmp_path / 'c.toml'}, {tmp_path / 'c.png'}, {tmp_path / 'c.html'}"
    (tmp_path / "a-file").write_text("")
    bad = invoke("calibrate", path, "-o", tmp_path / "a-file" / "c.toml")
    assert bad.exit_code == 1
    assert bad.stderr == (
        f"Error: {tmp_path / 'a-file'} is a file, not a folder; give a file name in a folder\n"
    )
    missing = invoke("calibrate", path, "-o", tmp_path / "new" / "c.toml")  # not made (issue 39)
    assert missing.exit_code == 1 and not (tmp_path / "new").exists()


STEP = {"name": "s", "op": "transformer", "model": "llama3-8b", "hardware": "h100", "B": 8,
        "T": 1, "S": 1024}  # fmt: skip


def test_a_calibrated_run_has_the_estimate_beside_the_floor_and_sums_it_in_totals(measured):
    _, toml, done = measured
    a = pipeline.analyze([STEP, {"name": "v5e", "op": "matmul", "hardware": "v5e", "B": 8,
                                 "D": 64, "F": 64}], calibration=toml)  # fmt: skip
    r = a.results
    columns = list(r.columns)
    assert columns[columns.index("bound") + 1 : columns.index("bound") + 4] == [
        "t_estimate", "estimate_bound", "calibration"]  # fmt: skip
    ops = r.iloc[1:-1]
    assert r["t_estimate"].iloc[0] == pytest.approx(ops["t_estimate"].sum(), rel=1e-12)
    assert (r["t_estimate"].iloc[1:-1] > r["t_lower"].iloc[1:-1]).all()
    assert np.isnan(r["t_estimate"].iloc[-1])  # v5e: no calibration for it
    assert r["calibration"].iloc[0].startswith("cal.toml ")
    said = a.summary.calibration
    assert said["label"] == r["calibration"].iloc[0] and said["heldout_error"] < 0.05


def test_the_report_and_the_answer_sheet_show_floor_to_estimate(measured, tmp_path):
    path, toml, _ = measured
    a = pipeline.analyze(path, calibration=toml)
    a.write(tmp_path / "out")
    html = (tmp_path / "out" / "report.html").read_text()
    assert "Time<br>(floor &rarr; estimate)</th>" in html
    assert "Times are floor → estimate: the roofline&#39;s floor (t_lower), then t_estimate" in html
    line = a.summary.lines.iloc[0]
    from pipeline.render.text.answer import time_text

    assert (
        f"{time_text(line['t_min'], line['t_max'])} → {time_text(line['e_min'], line['e_max'])}"
        in html
    )
    sheet = openpyxl.load_workbook(tmp_path / "out" / "workbook.xlsx")["Answer"]
    assert sheet["A3"].value.startswith("Times are floor → estimate")
    header = [c.value for c in sheet[5]]
    assert header[header.index("time max") + 1 : header.index("time max") + 3] == [
        "estimate min", "estimate max"]  # fmt: skip
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["calibration"]["groups"][0]["kind"] == "matmul"
    # the findings compare measured with the estimate: none is off by 2x now, most before
    assert a.summary.findings["measured_off_total"] == 0
    assert pipeline.analyze(path).summary.findings["measured_off_total"] > 20


def test_a_calibration_change_is_the_cause_of_the_estimates_change(measured, tmp_path):
    path, toml, _ = measured
    other = tmp_path / "other.toml"
    # the matmuls' overhead 10 µs (the old value left as a comment)
    other.write_text(
        toml.read_text().replace("overhead_seconds = ", "overhead_seconds = 1e-5 # ", 1)
    )
    old = pipeline.analyze(path, calibration=toml).results
    new = pipeline.analyze(path, calibration=other).results
    changes = compare_results(old, new)
    assert changes.counts["t_lower"] == 0 and changes.counts["t_estimate"] > 0
    cause = changes.table["causes"].iloc[0]
    assert cause.startswith("calibration cal.toml ") and " → other.toml " in cause
    assert set(changes.groups.groups["origin"]) == {"calibration"}


def test_refused_measured_rows_are_said_and_not_fitted(measured, tmp_path):
    path, _, done = measured
    frame = pd.read_csv(path)
    frame.loc[0, "measured_seconds"] = -1.0
    bad = tmp_path / "bad.csv"
    frame.to_csv(bad, index=False)
    again = pipeline.calibrate(bad)
    assert [(p.line, p.column) for p in again.problems] == [(2, "measured_seconds")]
    assert len(again.rows) == len(done.rows) - 1
    said = invoke("calibrate", bad, "-o", tmp_path / "c.toml")
    assert said.exit_code == 1
    assert f"{bad}:2: column measured_seconds: '-1.0' is not a positive number" in said.stderr
    # what calibrate returns is what analyze takes
    r = pipeline.analyze(path, calibration=again).results
    assert r["t_estimate"].notna().all()


def test_a_calibration_that_fits_none_of_the_runs_chips_is_said(measured, tmp_path):
    _, toml, _ = measured
    other = tmp_path / "elsewhere.toml"
    other.write_text(toml.read_text().replace("[h100.", "[b200."))
    a = pipeline.analyze([{"name": "m", "op": "matmul", "hardware": "h100", "B": 8, "D": 64,
                           "F": 64}], calibration=other)  # fmt: skip
    assert a.results["t_estimate"].isna().all()
    assert (
        a.warnings[-1].startswith("calibration elsewhere.toml ")
        and "gives no row an estimate: it has no fitted table for this run's chips"
        in a.warnings[-1]
    )
    from pipeline.render.text.answer import calibration_sentence

    assert calibration_sentence(a.summary.calibration).startswith("No estimate: calibration ")


def test_losing_the_calibration_is_a_change_of_every_estimate(measured):
    path, toml, _ = measured
    old = pipeline.analyze(path, calibration=toml).results
    new = pipeline.analyze(path).results
    changes = compare_results(old, new)
    assert changes.counts["t_estimate"] == len(new) and not changes.skipped
    assert changes.table["causes"].iloc[0].endswith(" → none")
