"""Writing an analysis's outputs: every file, caps and their notices said once, serial and
parallel giving the same bytes, failures leaving the previous outputs as they were."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import openpyxl
import pandas as pd
import pytest

import pipeline
from pipeline.errors import OutputError
from pipeline.run import stages
from tests.helpers import FAST_WRITE as FAST
from tests.helpers import HEAD, analyze_file, sheet_images, write_scenarios

EVERY = {"results.csv", "results.parquet", "summary.json", "workbook.xlsx", "report.html",
         "manifest.json", "plots"}  # fmt: skip


def test_write_gives_every_output_and_a_manifest_of_them(book, tmp_path):
    written = book.write(tmp_path / "q1-q5")
    folder = tmp_path / "q1-q5"
    assert written.folder == folder
    assert {p.name for p in folder.iterdir()} == EVERY
    assert sorted(p.name for p in (folder / "plots").iterdir()) == [
        "network-tpu-v5e.png", "roofline-h100.png", "roofline-tpu-v5e.png",
        "roofline-tpu-v6e.png", "summary.png", "sweep-tpu-v5e-b.png",
    ]  # fmt: skip
    assert set(written.files) == {p for p in folder.rglob("*") if p.is_file()}
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["tool"] == "roofline-pipeline" and manifest["run_name"] == "q1-q5"
    assert manifest["rows"]["scenarios"] == 1035 and manifest["rows"]["compute_bound"] == 669
    for entry in manifest["files"]:
        data = (folder / entry["path"]).read_bytes()
        assert entry["sha256"] == hashlib.sha256(data).hexdigest()
        assert entry["bytes"] == len(data)
    assert {"load", "compute", "plots", "results", "workbook", "report", "total"} <= set(
        written.timings
    )
    book_ = openpyxl.load_workbook(folder / "workbook.xlsx")
    assert book_.sheetnames == ["Answer", "Summary", "Results", "Hardware", "Inputs", "Charts"]
    assert len(sheet_images(folder / "workbook.xlsx", "Charts")) == 6


def test_serial_and_parallel_write_the_same_bytes(book, tmp_path):
    one = book.write(tmp_path / "one" / "run", workers=1)
    two = book.write(tmp_path / "two" / "run", workers=2)
    for a, b in zip(sorted(one.files), sorted(two.files), strict=True):
        assert a.relative_to(one.folder) == b.relative_to(two.folder)
        if a.name not in ("manifest.json", "workbook.xlsx"):  # timings; creation time
            assert a.read_bytes() == b.read_bytes(), a.name


def test_results_csv_and_parquet_hold_the_same_data(tmp_path, data_dir):
    analyze_file(data_dir / "small.csv").write(tmp_path / "small", **FAST)
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
            # the CSV neutralizes formula-looking text with a leading ' (R10); Parquet is exact
            exact = norm(b).map(str).map(lambda v: "'" + v if v[:1] in "=+-@\t\r" else v)
            assert norm(a).map(str).tolist() == exact.tolist(), col
    assert (tmp_path / "small" / "errors.csv").read_text().startswith("line,name,column,reason")


def test_caps_are_said_once_everywhere(tmp_path):
    path = write_scenarios(tmp_path, f"{HEAD}\nsweep,matmul,1..30,64,64,v5e\n")
    written = pipeline.analyze(path).write(tmp_path / "out", plots=False, workbook_rows=10,
                                           report_rows=5)  # fmt: skip
    workbook = "Results sheet holds the first 10 of 30 rows; results.csv has them all."
    report = ("The tpu-v5e table shows the first 5 of 30 scenarios and, past them, each series' "
              "first and slowest row (1 more); the other 24 are in results.csv.")  # fmt: skip
    assert sorted(written.notices) == sorted([workbook, report])
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert sorted(manifest["notices"]) == sorted([workbook, report])
    # each output shows the notices about it: the report its table cap, the workbook its rows
    html = (tmp_path / "out" / "report.html").read_text()
    assert "holds the first 10 of 30 rows" not in html
    assert html.count(report.replace("'", "&#39;")) == 1  # autoescaped
    book = openpyxl.load_workbook(tmp_path / "out" / "workbook.xlsx")
    text = [c.value for row in book["Summary"].iter_rows() for c in row if c.value]
    assert workbook in text and report not in text
    assert "Bound per hardware (all 30 scenarios)" in text  # counts speak of every row


def test_chart_cap_keeps_the_first_charts_and_says_what_it_left_out(book, tmp_path):
    written = book.write(tmp_path / "out", max_charts=2, workbook=False, report=False)
    assert sorted(p.name for p in (tmp_path / "out" / "plots").iterdir()) == [
        "roofline-h100.png", "summary.png",
    ]  # fmt: skip
    assert written.notices[0].startswith("Drew 2 of 6 charts (chart limit 2, --max-charts)")
    none = book.write(tmp_path / "none", max_charts=0, workbook=False, report=False)
    assert not (tmp_path / "none" / "plots").exists()
    assert none.notices[0].startswith("Drew 0 of 6 charts")


def test_inputs_sheet_has_its_own_cap(tmp_path):
    rows = "".join(f"r{i},matmul,{i + 1},64,64,v5e\n" for i in range(30))
    path = write_scenarios(tmp_path, f"{HEAD}\n{rows}")
    written = pipeline.analyze(path).write(tmp_path / "out", plots=False, report=False,
                                           workbook_rows=20, workbook_input_rows=5)  # fmt: skip
    book = openpyxl.load_workbook(tmp_path / "out" / "workbook.xlsx", read_only=True)
    assert book["Results"].max_row == 21
    # the header, 5 rows, a blank row and the note that this sheet cannot be run again whole
    inputs = list(book["Inputs"].iter_rows(values_only=True))
    assert len(inputs) == 8 and inputs[6] == (None,) * len(inputs[6])
    assert str(inputs[7][0]).startswith("Not every input row is on this sheet: the first 5 of 30")
    assert "Inputs sheet holds the first 5 of 30 input rows; the scenario file has them all." in (
        written.notices
    )


def test_bad_caps_are_refused(book, tmp_path):
    with pytest.raises(ValueError, match="workbook_rows"):
        book.write(tmp_path / "out", workbook_rows=-1)
    with pytest.raises(ValueError, match="workers"):
        book.write(tmp_path / "out", workers=0)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("workers", [1, 2])
def test_failed_write_leaves_previous_outputs_untouched(tmp_path, monkeypatch, workers):
    path = write_scenarios(tmp_path, f"{HEAD}\nok,matmul,1,2,3,v5e\n")
    out = tmp_path / "out" / "s"
    pipeline.analyze(path).write(out, **FAST)
    before = (out / "results.csv").read_bytes()

    def broken(ctx):
        (ctx.tmp / "results.csv").write_bytes(b"half a fi")
        raise OSError(28, "No space left on device")

    monkeypatch.setitem(stages.STAGES, "results", broken)
    write_scenarios(tmp_path, f"{HEAD}\nother,matmul,4,5,6,v5e\n")
    with pytest.raises(OutputError, match="No space left on device"):
        pipeline.analyze(path).write(out, workers=workers)
    assert (out / "results.csv").read_bytes() == before
    assert sorted(p.name for p in out.parent.iterdir()) == ["s"]  # no temp folder, no lock


def test_rewrite_replaces_outputs(tmp_path):
    path = write_scenarios(tmp_path, f"{HEAD}\nbad,matmul,1,2,3,h10\nok,matmul,1,2,3,v5e\n")
    out = tmp_path / "out" / "s"
    pipeline.analyze(path).write(out, **FAST)
    assert (out / "errors.csv").exists()
    write_scenarios(tmp_path, f"{HEAD}\nok,matmul,1,2,3,v5e\n")
    pipeline.analyze(path).write(out, **FAST)
    assert not (out / "errors.csv").exists()  # stale files do not survive a re-run


def test_rows_in_memory_write_like_a_file(tmp_path):
    frame = pd.DataFrame({"name": ["a"], "op": ["matmul"], "B": [1], "D": [2], "F": [3],
                          "hardware": ["v5e"]})  # fmt: skip
    written = pipeline.analyze(frame).write(tmp_path / "mem", **FAST)
    manifest = json.loads((written.folder / "manifest.json").read_text())
    assert manifest["input_path"] == "rows" and manifest["input_sha256"] is None


def test_two_threads_writing_at_once_each_get_their_own_outputs(tmp_path):
    """Writing takes an explicit context (no module state): two analyses written at the same
    moment from two threads (a notebook, a web service) give exactly what each gives alone."""
    import threading

    rows = [{"name": "a", "op": "matmul", "B": "1..64*2", "D": 256, "F": 256, "hardware": "v5e"}]
    first = pipeline.analyze(rows)
    second = pipeline.analyze([{**rows[0], "name": "b", "hardware": "h100", "D": 512}])
    alone = [a.write(tmp_path / "alone" / n, plots=False) for n, a in (("1", first), ("2", second))]
    start = threading.Barrier(2)
    errors: list[BaseException] = []

    def write(analysis, folder) -> None:
        start.wait()
        try:
            for i in range(3):
                analysis.write(folder / str(i), plots=False)
        except BaseException as exc:  # reported below, not lost in the thread
            errors.append(exc)

    threads = [
        threading.Thread(target=write, args=(a, tmp_path / n))
        for n, a in (("1", first), ("2", second))
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors
    for n, done in zip(("1", "2"), alone, strict=True):
        for i in range(3):
            for name in ("results.csv", "results.parquet"):
                assert (tmp_path / n / str(i) / name).read_bytes() == (
                    done.folder / name
                ).read_bytes()
            report = (tmp_path / n / str(i) / "report.html").read_text()
            assert ("a[B=" in report) == (n == "1") and ("b[B=" in report) == (n == "2")
