"""One run end to end: atomic output folders, sanitized names."""

from __future__ import annotations

import hashlib
import json

import pytest

from pipeline import batch, workbook_process
from pipeline.batch import RunOptions, run_file, sanitize_name
from pipeline.errors import OutputError
from tests.helpers import write_scenarios

FAST = RunOptions(plots=False, workbook=False, report=False)
HEAD = "name,op,B,D,F,hardware"


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("q1-q5", "q1-q5"),
        ("../../etc/passwd", "etc-passwd"),
        ("A b/C", "a-b-c"),
        ("..", "run"),
        ("", "run"),
    ],
)
def test_sanitize_name(text, name):
    assert sanitize_name(text) == name


def test_failed_run_leaves_previous_outputs_untouched(tmp_path, catalog, monkeypatch):
    path = write_scenarios(tmp_path, f"{HEAD}\nok,matmul,1,2,3,v5e\n")
    out = tmp_path / "out"
    run_file(path, out, catalog, FAST)
    before = (out / "s" / "results.csv").read_bytes()

    def broken(frame, target):
        target.write_bytes(b"half a fi")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(batch, "write_csv", broken)
    write_scenarios(tmp_path, f"{HEAD}\nother,matmul,4,5,6,v5e\n")
    with pytest.raises(OutputError, match="No space left on device"):
        run_file(path, out, catalog, FAST)
    assert (out / "s" / "results.csv").read_bytes() == before
    assert sorted(p.name for p in out.iterdir()) == ["s"]  # no temporary folder left behind


def test_rerun_replaces_outputs(tmp_path, catalog):
    path = write_scenarios(tmp_path, f"{HEAD}\nbad,matmul,1,2,3,h10\nok,matmul,1,2,3,v5e\n")
    out = tmp_path / "out"
    run_file(path, out, catalog, FAST)
    assert (out / "s" / "errors.csv").exists()
    write_scenarios(tmp_path, f"{HEAD}\nok,matmul,1,2,3,v5e\n")
    summary = run_file(path, out, catalog, FAST)
    assert not (out / "s" / "errors.csv").exists()  # stale files do not survive a re-run
    assert summary.rejected == 0 and summary.scenarios == 1


def test_results_csv_and_parquet_hold_the_same_data(tmp_path, catalog, data_dir):
    import numpy as np
    import pandas as pd

    run_file(data_dir / "small.csv", tmp_path, catalog, FAST)
    csv = pd.read_csv(tmp_path / "small" / "results.csv", keep_default_na=False, na_values=[""])
    parquet = pd.read_parquet(tmp_path / "small" / "results.parquet")
    assert list(csv.columns) == list(parquet.columns)
    assert len(csv) == len(parquet) == 8
    for col in csv.columns:
        a, b = csv[col], parquet[col]
        if pd.api.types.is_numeric_dtype(a) and pd.api.types.is_numeric_dtype(b):
            np.testing.assert_array_equal(
                a.to_numpy(dtype=float), b.to_numpy(dtype=float), err_msg=col
            )
        else:
            norm = lambda s: s.astype(object).where(s.notna() & (s.astype(str) != ""), None)  # noqa: E731
            assert norm(a).map(str).tolist() == norm(b).map(str).tolist(), col


def test_caps_are_reported(tmp_path, catalog):
    path = write_scenarios(tmp_path, f"{HEAD}\nsweep,matmul,1..30,64,64,v5e\n")
    options = RunOptions(plots=False, workbook=True, report=True, workbook_rows=10, report_rows=5)
    summary = run_file(path, tmp_path / "out", catalog, options)
    workbook = "Results sheet holds the first 10 of 30 rows; results.csv has them all."
    report = "The tpu-v5e table shows the first 5 of 30 scenarios; the other 25 are in results.csv."
    assert sorted(summary.notices) == sorted([workbook, report])
    manifest = (tmp_path / "out" / "s" / "manifest.json").read_text()
    assert workbook in manifest and report in manifest
    html = (tmp_path / "out" / "s" / "report.html").read_text()
    assert "holds the first 10 of 30 rows" in html
    assert html.count(report) == 1  # said once, though two stages know it


def test_workbook_in_its_own_process(tmp_path, catalog, monkeypatch):
    import openpyxl

    monkeypatch.setattr(workbook_process, "PROCESS_MIN_BYTES", 0)
    path = write_scenarios(
        tmp_path, f"{HEAD}\nsweep,matmul,1..30,64,64,v5e\nbad,matmul,1,2,3,h10\n"
    )
    options = RunOptions(report=False, workbook_rows=10)
    summary = run_file(path, tmp_path / "out", catalog, options)
    book = openpyxl.load_workbook(tmp_path / "out" / "s" / "workbook.xlsx")
    assert book.sheetnames == ["Summary", "Results", "Hardware", "Inputs", "Errors", "Charts"]
    assert book["Results"].max_row == 11  # header + the capped 10 rows
    summary_text = [c.value for row in book["Summary"].iter_rows() for c in row if c.value]
    assert "Bound per hardware (all 30 scenarios)" in summary_text  # counts speak of every row
    assert len(book["Charts"]._images) >= 2
    assert (
        "Results sheet holds the first 10 of 30 rows; results.csv has them all." in summary.notices
    )
    assert summary.timings["workbook"] > 0
    manifest = json.loads((tmp_path / "out" / "s" / "manifest.json").read_text())
    for entry in manifest["files"]:  # hashed while the workbook was written, or after it
        data = (tmp_path / "out" / "s" / entry["path"]).read_bytes()
        assert entry["sha256"] == hashlib.sha256(data).hexdigest()
        assert entry["bytes"] == len(data)
    assert "workbook.xlsx" in [e["path"] for e in manifest["files"]]


def test_workbook_process_failure_is_reported(tmp_path, catalog, monkeypatch):
    monkeypatch.setattr(workbook_process, "PROCESS_MIN_BYTES", 0)
    path = write_scenarios(tmp_path, f"{HEAD}\nok,matmul,1,2,3,v5e\n")
    out = tmp_path / "out"
    (out / "s").mkdir(parents=True)
    (out / "s" / "results.csv").write_text("previous")
    manifest = {"tool": "roofline-pipeline", "files": [{"path": "results.csv"}]}
    (out / "s" / "manifest.json").write_text(json.dumps(manifest))
    options = RunOptions(plots=False, report=False, workbook_rows=-1)  # the child refuses it
    with pytest.raises(RuntimeError, match="(?s)workbook process failed.*max_rows must be 0"):
        run_file(path, out, catalog, options)
    assert (out / "s" / "results.csv").read_text() == "previous"


def test_inputs_sheet_has_its_own_cap(tmp_path, catalog):
    import openpyxl

    rows = "".join(f"r{i},matmul,{i + 1},64,64,v5e\n" for i in range(30))
    path = write_scenarios(tmp_path, f"{HEAD}\n{rows}")
    options = RunOptions(plots=False, report=False, workbook_rows=20, workbook_input_rows=5)
    summary = run_file(path, tmp_path / "out", catalog, options)
    book = openpyxl.load_workbook(tmp_path / "out" / "s" / "workbook.xlsx", read_only=True)
    assert book["Results"].max_row == 21 and book["Inputs"].max_row == 6
    assert "Inputs sheet holds the first 5 of 30 input rows; the scenario file has them all." in (
        summary.notices
    )
