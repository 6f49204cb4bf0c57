"""`pipeline calibrate` and pipeline.calibrate (issue 32): a fit from a scenario file or a
run's folder, its file, chart and page; then `--calibration` on run: t_estimate beside
t_lower in every output, summed into totals, the findings against the estimate, a
calibration change named as the cause of the estimates' change."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import openpyxl
import pandas as pd
import pytest

import pipeline
from pipeline.api.calibrate import calibration_text
from pipeline.calibration.file import read_calibration
from pipeline.changes.compare import compare_results
from pipeline.errors import InvalidCalibrationFile, InvalidResults
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
        g = cal.group("h100", kind, "bf16")
        assert g["compute_efficiency"] == pytest.approx(e_c, rel=0.03)
        assert g["hbm_efficiency"] == pytest.approx(e_h, rel=0.03)
        assert g["overhead_seconds"] == pytest.approx(over, rel=0.05)
    assert cal.heldout_median < 0.05 < 0.25 < cal.floor_median
    page = (toml.parent / "cal.html").read_text()
    assert "Per group" in page and "data:image/png;base64," in page
    assert '<td>h100 matmul bf16</td><td>roofline</td><td class="r">60</td>' in page
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
    assert lines[0].startswith(f"calibration of {path}: error ")
    assert lines[0].endswith(" fitted), median / p90")
    assert lines[1].startswith("  h100 matmul bf16: roofline, compute 8")
    assert re.fullmatch(
        r"  h100 matmul bf16: roofline, compute 8\d\.\d%, HBM 7\d\.\d%, overhead 2\.\d\d µs; "
        r"60 rows, error \d+\.\d% / \d+\.\d% → \d\.\d% / \d\.\d% held out "
        r"\(\d\.\d% / \d\.\d% fitted\)",
        lines[1],
    )
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
    assert said["label"] == r["calibration"].iloc[0] and said["heldout_median"] < 0.05


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


MATMUL = {"name": "m", "op": "matmul", "hardware": "h100", "B": 8, "D": 64, "F": 64}
PUBLISHED = Path(__file__).parent.parent / "data" / "published.toml"  # a small one, made up


def test_several_calibration_files_merge_and_a_group_in_two_is_refused(tmp_path):
    text = PUBLISHED.read_text()
    head, h100 = text[: text.index("[h100.")], text[text.index("[h100.") :]
    b200 = text[text.index("[b200.") : text.index("[h100.")]
    a, b = tmp_path / "a.toml", tmp_path / "b.toml"
    a.write_text(head.replace(b200, "") + h100)  # the h100 groups
    b.write_text(head)  # the b200 group
    r = pipeline.analyze([MATMUL], calibration=[a, b]).results
    assert r["calibration"].iloc[0].startswith("a.toml ") and " + b.toml " in r["calibration"][0]
    pd.DataFrame([MATMUL]).to_csv(tmp_path / "s.csv", index=False)
    out = tmp_path / "out"
    run = ("run", tmp_path / "s.csv", "-o", out, "--no-plots", "--no-workbook", "--no-report")
    assert invoke(*run, "--calibration", a, "--calibration", b).exit_code == 0
    results = pd.read_csv(out / "s" / "results.csv")
    assert (
        results["calibration"][0].startswith("a.toml ")
        and " + b.toml " in results["calibration"][0]
    )
    said = invoke(*run, "--calibration", a, "--calibration", a)
    assert said.exit_code == 1 and said.stderr.startswith(
        f"Error: calibration group [h100.matmul] is in both {a} and {a}: give each group once"
    )


def test_published_is_the_calibration_that_ships(monkeypatch):
    from pipeline.calibration import file

    monkeypatch.setattr(file, "PUBLISHED_PATH", PUBLISHED)
    r = pipeline.analyze([MATMUL], calibration="published").results
    assert r["calibration"].iloc[0].startswith("published.toml ")
    assert r["t_estimate"].notna().all()


def test_the_lines_say_each_groups_form_and_the_groups_not_used_and_why():
    lines = calibration_text(read_calibration(PUBLISHED)).splitlines()
    assert lines[0] == (
        "calibration of tests: a small calibration in the published file's layout, its numbers "
        "made up: error 130.0% / 900.0% → 6.0% / 25.0% held out (5.0% / 20.0% fitted), median / "
        "p90"
    )
    assert lines[1] == (
        "  b200 matmul bf16: not used (300 rows): error 130.0% / 950.0% → 2.1% / 13.0% held "
        "out, no better than the floor (median / p90); not better than the floor held out"
    )
    assert lines[-1].startswith(
        "  h100 all_reduce nvlink 8: alpha_beta, network 70.0%, overhead 15.0 µs; 30 rows, "
    )
    assert lines[2].startswith("  h100 matmul (every dtype): roofline, compute 80.0%, HBM 70.2%")


def test_a_file_of_the_old_layout_still_gives_estimates(tmp_path):
    old = tmp_path / "old.toml"
    old.write_text(
        '[calibration]\ncreated = 2025-06-01\nsource = "m.csv"\nsource_sha256 = ""\n'
        'error_before = 0.3\nerror_after = 0.02\nheldout_error = 0.02\nversion = "0.2.0"\n\n'
        "[h100.matmul]\ncompute_efficiency = 0.8\nhbm_efficiency = 0.7\n"
        "network_efficiency = 1.0\noverhead_seconds = 2e-06\nrows = 111\nerror_before = 0.35\n"
        'error_after = 0.02\nheldout_error = 0.021\nfitted = true\nreason = ""\n'
    )
    r = pipeline.analyze([MATMUL], calibration=old).results
    assert r["t_estimate"][0] == pytest.approx(
        max(r["t_math"][0] / 0.8, r["t_hbm"][0] / 0.7) + 2e-6
    )


def test_the_shipped_published_calibration_covers_its_chips_each_group_with_its_source():
    cal = read_calibration(Path(pipeline.__file__).parent / "data/calibrations/published.toml")
    assert "github.com/ai-dynamo/aiconfigurator commit " in cal.source
    groups = cal.groups
    chips = {"h100", "h200", "b200", "b300", "gb200", "gb300", "a100", "l40s"}
    assert set(groups["hardware"]) == chips
    for chip in chips:  # a GEMM group and the four NCCL collectives on each
        kinds = set(groups.loc[groups["hardware"] == chip, "kind"])
        assert {"matmul", "all_gather", "all_reduce", "reduce_scatter", "all_to_all"} <= kinds
    assert groups["used"].all() and (groups["source"].str.len() > 0).all()
    assert (groups["heldout_median"] < groups["floor_median"]).all()


def test_a_llama3_8b_decode_step_on_h100_gets_an_estimate_from_the_published_calibration():
    step = {"name": "d", "op": "transformer", "model": "llama3-8b", "hardware": "h100",
            "dtype": "bf16", "B": 32, "T": 1, "S": 2048}  # fmt: skip
    r = pipeline.analyze([step], calibration="published").results
    assert r["t_estimate"].notna().all()  # the step's total and every op of it
    total = r.iloc[0]
    assert total["name"] == "d" and total["t_estimate"] > total["t_lower"]
    assert total["t_estimate"] == pytest.approx(r["t_estimate"].iloc[1:].sum(), rel=1e-9)
    borrowed = (
        r["calibration"].astype(str).str.contains("(borrowed: h100 matmul bf16)", regex=False)
    )
    assert borrowed.any() and not borrowed.all()  # attention and norms borrow; GEMMs fit


def test_a_group_one_file_does_not_use_gives_way_to_the_file_that_uses_it(tmp_path):
    """Found by a review: every file lists its unfitted and unused groups too, so merging a
    trace's small fit with another file was refused over a group the small fit did not use."""
    text = PUBLISHED.read_text()
    a, b = tmp_path / "a.toml", tmp_path / "b.toml"
    a.write_text(text)
    b.write_text(text.replace("used = true", "used = false"))  # the same groups, none used
    alone = pipeline.analyze([MATMUL], calibration=a).results["t_estimate"]
    for order in ([a, b], [b, a]):
        merged = pipeline.analyze([MATMUL], calibration=order).results["t_estimate"]
        assert merged.tolist() == alone.tolist() and merged.notna().all()


def test_a_misspelled_published_is_a_did_you_mean():
    with pytest.raises(InvalidCalibrationFile, match=r"no such file; did you mean 'published'"):
        pipeline.analyze([MATMUL], calibration="publishd")
