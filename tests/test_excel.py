"""The workbook (DESIGN §7, issue 4), read back with openpyxl."""

from __future__ import annotations

import csv
import math
import zipfile
from pathlib import Path

import openpyxl
import pandas as pd
import pytest
from matplotlib.figure import Figure
from openpyxl.utils import get_column_letter

from pipeline import excel
from pipeline.csvout import write_csv
from pipeline.errors import OutputError
from pipeline.excel import WorkbookWriter, summary_counts, write_workbook
from pipeline.meta import Chart
from tests.conftest import compute_file

BASE_SHEETS = ["Summary", "Results", "Hardware", "Inputs"]
HOSTILE = ["=1+1", "+SUM(1,2)", "-2+3", "@SUM(A1)", '=HYPERLINK("http://x.example","y")']


def write(run, folder: Path, **kwargs) -> tuple[openpyxl.Workbook, list[str]]:
    """Write `run` (a conftest ComputedRun, fields overridable) and read it back."""
    args = {
        "meta": run.meta,
        "results": run.results,
        "inputs": run.loaded.inputs,
        "errors": run.errors,
        "hardware": run.hardware,
        "charts": [],
        "run_dir": folder,
    }
    max_rows = kwargs.pop("max_rows", excel.DEFAULT_WORKBOOK_ROWS)
    args.update(kwargs)
    path = folder / "workbook.xlsx"
    notices = write_workbook(path, max_rows=max_rows, **args)
    return openpyxl.load_workbook(path), notices


def column_of(sheet, name: str) -> int:
    """1-based column index of a header."""
    header = [c.value for c in sheet[1]]
    return header.index(name) + 1


def sheet_text(sheet) -> list[str]:
    return [str(v) for row in sheet.iter_rows(values_only=True) for v in row if v is not None]


@pytest.fixture(scope="module")
def book(book_run, tmp_path_factory):
    """The book scenarios' workbook and their results.csv, written once."""
    folder = tmp_path_factory.mktemp("book")
    write_csv(book_run.results, folder / "results.csv")
    wb, notices = write(book_run, folder)
    return wb, folder / "results.csv", notices


@pytest.fixture
def hostile_run(catalog, tmp_path):
    """A file whose names, notes and extra column start like formulas, plus one bad row."""
    path = tmp_path / "hostile.csv"
    rows = ["name,op,B,D,F,hardware,notes,team"]
    for i, text in enumerate(HOSTILE):
        quoted = '"' + text.replace('"', '""') + '"'
        rows.append(f"{quoted},matmul,{128 * (i + 1)},4096,4096,v5e,{quoted},{quoted}")
    rows.append("bad_hw,matmul,1,2,3,h10,rejected,x")
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return compute_file(path, catalog)


# ---------------------------------------------------------------- structure


def test_sheets_in_order_without_errors_or_charts(book):
    wb, _, notices = book
    assert wb.sheetnames == BASE_SHEETS
    assert notices == []


def test_results_header_is_the_results_csv_header(book, book_run):
    wb, csv_path, _ = book
    with open(csv_path, newline="", encoding="utf-8") as fh:
        header = next(csv.reader(fh))
    assert [c.value for c in wb["Results"][1]] == header == list(book_run.results.columns)


def test_results_values_equal_results_csv(book, book_run):
    """Numbers as numbers, NA as empty cells, booleans as booleans, text as text."""
    wb, csv_path, _ = book
    with open(csv_path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))[1:]
    sheet = wb["Results"]
    assert sheet.max_row == len(rows) + 1 == len(book_run.results) + 1
    kinds = [
        "bool" if isinstance(t, pd.BooleanDtype) else "number" if t.kind in "iuf" else "text"
        for t in book_run.results.dtypes
    ]
    for expected, cells in zip(rows, sheet.iter_rows(min_row=2), strict=True):
        for text, cell, kind in zip(expected, cells, kinds, strict=True):
            where = f"{cell.coordinate} ({text!r})"
            if text == "":
                assert cell.value is None, where
            elif kind == "bool":
                assert cell.data_type == "b" and cell.value is (text == "True"), where
            elif kind == "number":
                # XlsxWriter writes 16 significant digits; results.csv the shortest round trip
                assert cell.data_type == "n", where
                assert math.isclose(cell.value, float(text), rel_tol=1e-15), where
            else:
                assert cell.data_type == "s" and cell.value == text, where


def test_number_formats_show_units(book):
    wb, _, _ = book
    sheet = wb["Results"]

    def fmt(name: str) -> str:  # row 4: v5e_critical_intensity, every number filled in
        return sheet.cell(row=4, column=column_of(sheet, name)).number_format

    for name in ("t_math", "t_hbm", "t_network", "t_lower", "t_upper"):
        assert fmt(name) == excel.SECONDS and "E+0" in fmt(name)
    for name in ("peak_flops", "attainable_flops"):
        assert fmt(name) == excel.FLOP_RATE and "TFLOP/s" in fmt(name)
    for name in ("bytes_read", "hbm_bytes", "memory_footprint", "hbm_capacity"):
        assert fmt(name) == excel.BYTES and " GB" in fmt(name) and " MB" in fmt(name)
    assert fmt("hbm_bandwidth") == excel.BANDWIDTH
    assert fmt("flops") == excel.FLOP_COUNT
    assert fmt("peak_fraction") == "0.0%"
    assert fmt("critical_batch") == "#,##0"
    assert fmt("name") == "General"
    # the value behind a format stays SI: seconds, FLOP/s
    row = 2
    assert sheet.cell(row, column_of(sheet, "peak_flops")).value == 9.89e14
    assert sheet.cell(row, column_of(sheet, "t_math")).value == pytest.approx(1e12 / 9.89e14)


def test_header_frozen_filter_set_widths(book, book_run):
    wb, _, _ = book
    results = wb["Results"]
    assert results.freeze_panes == "B2"  # header row and the name column
    last = get_column_letter(len(book_run.results.columns))
    assert results.auto_filter.ref == f"A1:{last}{len(book_run.results) + 1}"
    assert results.column_dimensions["A"].width > 20  # names are long
    assert wb["Inputs"].freeze_panes == "C2"
    assert wb["Hardware"].freeze_panes == "B2"
    for name in ("Inputs", "Hardware"):
        assert wb[name].auto_filter.ref is not None


def test_bound_is_colour_coded_and_not_fitting_highlighted(book, book_run):
    wb, _, _ = book
    sheet = wb["Results"]
    n = len(book_run.results) + 1
    bound = get_column_letter(column_of(sheet, "bound"))
    fits = get_column_letter(column_of(sheet, "fits"))
    rules = {str(cf.sqref): cf.rules for cf in sheet.conditional_formatting}
    on_bound = rules[f"{bound}2:{bound}{n}"]
    assert [(r.type, r.operator, r.formula) for r in on_bound] == [
        ("cellIs", "equal", ['"compute"']),
        ("cellIs", "equal", ['"memory"']),
        ("cellIs", "equal", ['"network"']),
    ]
    fills = {r.dxf.fill.bgColor.rgb for r in on_bound}
    assert len(fills) == 3  # three different colours
    (on_fits,) = rules[f"{fits}2:{fits}{n}"]
    assert (on_fits.type, on_fits.operator, on_fits.formula) == ("cellIs", "equal", ["FALSE"])


# ---------------------------------------------------------------- sheets


def test_summary_has_metadata_counts_and_critical_batches(book, book_run):
    wb, _, _ = book
    rows = list(wb["Summary"].iter_rows(values_only=True))
    labels = {r[0]: r[1] for r in rows if r[0] is not None}
    meta = book_run.meta
    assert labels["Input file"] == meta.input_path
    assert labels["Input SHA-256"] == meta.input_sha256
    assert labels["Tool version"] == meta.tool_version
    assert labels["Hardware catalog version"] == meta.catalog_version
    assert labels["Scenarios computed"] == len(book_run.results)
    assert labels["Rejected rows"] == 0
    # per-hardware table: hardware, compute, memory, network, not fitting, total
    results = book_run.results
    for hw, group in results.groupby("hardware"):
        (line,) = [r for r in rows if r[0] == hw]
        counts = group["bound"].value_counts()
        expected = [int(counts.get(b, 0)) for b in ("compute", "memory", "network")]
        assert list(line[1:6]) == [*expected, int((group["fits"] == False).sum()), len(group)]  # noqa: E712
    # critical batches per series, e.g. the book's Q5 (H100 bf16, about 298)
    (q5,) = [r for r in rows if r[0] == "q5_h100_bf16"]
    expected = results.loc[results["series"] == "q5_h100_bf16", "critical_batch"].iloc[0]
    assert q5[1:5] == ("h100", "matmul", "bf16 × bf16 → bf16", expected)


def test_hardware_sheet_lists_chips_used_with_sources(book, book_run):
    wb, _, _ = book
    sheet = wb["Hardware"]
    header = [c.value for c in sheet[1]]
    assert header[0] == "name" and header[-1] == "source"
    names = [row[0] for row in sheet.iter_rows(min_row=2, values_only=True)]
    assert names == [r["name"] for r in book_run.hardware]
    peak = sheet.cell(2, column_of(sheet, "peak_bf16"))
    assert peak.data_type == "n" and peak.number_format == excel.FLOP_RATE
    assert peak.value == book_run.hardware[0]["peak_bf16"]
    assert all(row[-1] for row in sheet.iter_rows(min_row=2, values_only=True))


def test_inputs_sheet_holds_rows_as_read(book, book_run):
    wb, _, _ = book
    inputs = book_run.loaded.inputs
    sheet = wb["Inputs"]
    assert [c.value for c in sheet[1]] == list(inputs.columns)
    got = list(sheet.iter_rows(min_row=2, values_only=True))
    assert [r[0] for r in got] == inputs["line"].tolist()
    for row, (_, expected) in zip(got, inputs.iterrows(), strict=True):
        assert [v or "" for v in row[1:]] == expected.iloc[1:].tolist()


def test_untrusted_text_is_stored_as_strings(hostile_run, tmp_path):
    results = hostile_run.results.copy()
    # the CSV reader strips leading tabs and CRs; put them in directly
    results.loc[0, "notes"] = "\r=4+4"
    results.loc[1, "notes"] = "\t=5+5"
    wb, _ = write(hostile_run, tmp_path, results=results)
    cells = [c for sheet in wb for row in sheet.iter_rows() for c in row]
    assert not [c.coordinate for c in cells if c.data_type == "f"]  # not one formula anywhere
    for name in ("Results", "Inputs"):
        sheet = wb[name]
        col = column_of(sheet, "name")
        got = [sheet.cell(r, col) for r in range(2, 2 + len(HOSTILE))]
        assert [c.value for c in got] == HOSTILE
        assert all(c.data_type == "s" and c.quotePrefix for c in got)
    sheet = wb["Results"]
    for column in ("notes", "team"):
        got = [sheet.cell(r, column_of(sheet, column)) for r in range(2, 2 + len(HOSTILE))]
        assert all(c.data_type == "s" for c in got)
    assert sheet.cell(2, column_of(sheet, "notes")).value.endswith("=4+4")
    assert sheet.cell(3, column_of(sheet, "notes")).value == "\t=5+5"


def test_errors_sheet_only_when_rows_were_rejected(hostile_run, tmp_path):
    wb, _ = write(hostile_run, tmp_path)
    assert wb.sheetnames == [*BASE_SHEETS, "Errors"]
    rows = list(wb["Errors"].iter_rows(values_only=True))
    assert rows[0] == ("line", "name", "column", "reason")
    assert rows[1][:3] == (len(HOSTILE) + 2, "bad_hw", "hardware")
    assert "unknown hardware 'h10'" in rows[1][3]
    summary = {r[0]: r[1:] for r in wb["Summary"].iter_rows(values_only=True)}
    assert summary["Rejected rows"][:2] == (1, "see the Errors sheet and errors.csv")


# ---------------------------------------------------------------- the row cap


def test_row_cap_keeps_first_rows_and_says_so(book_run, tmp_path):
    wb, notices = write(book_run, tmp_path, max_rows=100)
    total = len(book_run.results)
    notice = f"Results sheet holds the first 100 of {total:,} rows; results.csv has them all."
    assert notices == [notice]
    results = wb["Results"]
    assert results.max_row == 101
    first = [r[0] for r in results.iter_rows(min_row=2, max_col=1, values_only=True)]
    assert first == book_run.results["name"].iloc[:100].tolist()
    assert results.auto_filter.ref.endswith("101")
    summary = sheet_text(wb["Summary"])
    assert notice in summary
    assert f"Bound per hardware (all {total:,} scenarios)" in summary  # counts cover every row
    assert wb["Inputs"].max_row == len(book_run.loaded.inputs) + 1  # under the cap: all


def test_row_cap_applies_to_inputs(book_run, tmp_path):
    _, notices = write(book_run, tmp_path, max_rows=5)
    assert notices[1] == (
        f"Inputs sheet holds the first 5 of {len(book_run.loaded.inputs)} input rows; "
        "the scenario file has them all."
    )


def test_negative_cap_is_refused(book_run, tmp_path):
    with pytest.raises(ValueError, match="max_rows"):
        write(book_run, tmp_path, max_rows=-1)


# ---------------------------------------------------------------- charts


def small_png(path: Path, dpi: int) -> None:
    fig = Figure(figsize=(4, 3), dpi=dpi)
    ax = fig.subplots()
    ax.plot([1, 2, 3], [1, 4, 9])
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)


def test_charts_sheet_embeds_each_png_under_its_title(book_run, tmp_path):
    small_png(tmp_path / "plots" / "roofline-tpu-v5e.png", dpi=100)
    small_png(tmp_path / "plots" / "sweep-q3.png", dpi=200)
    charts = [
        Chart("roofline", "Roofline: TPU v5e", "plots/roofline-tpu-v5e.png", "tpu-v5e"),
        Chart("sweep", "Q3 sweep", "plots/sweep-q3.png", "tpu-v5e", ("q3_D4096",)),
        Chart("roofline", "Gone", "plots/missing.png", "h100"),
    ]
    wb, notices = write(book_run, tmp_path, charts=charts)
    assert wb.sheetnames == [*BASE_SHEETS, "Charts"]
    assert notices == ["Chart 'Gone' was not embedded: plots/missing.png is missing."]
    assert notices[0] in sheet_text(wb["Summary"])
    titles = [r[0] for r in wb["Charts"].iter_rows(values_only=True) if r[0]]
    assert titles == [
        "Roofline: TPU v5e",
        "plots/roofline-tpu-v5e.png",
        "Q3 sweep",
        "plots/sweep-q3.png",
    ]
    with zipfile.ZipFile(tmp_path / "workbook.xlsx") as z:
        media = sorted(n for n in z.namelist() if n.startswith("xl/media/"))
        drawing = z.read("xl/drawings/drawing1.xml").decode()
    assert media == ["xl/media/image1.png", "xl/media/image2.png"]
    # one below the other: the second anchor starts on a later row than the first
    anchors = [int(part.split("</xdr:row>")[0]) for part in drawing.split("<xdr:row>")[1::2]]
    assert anchors[0] < anchors[1]


# ---------------------------------------------------------------- writing


def test_output_is_deterministic(book_run, tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    write(book_run, first)
    write(book_run, second)
    a = (first / "workbook.xlsx").read_bytes()
    assert a == (second / "workbook.xlsx").read_bytes()


def test_failure_leaves_previous_file_and_no_temp_files(book_run, tmp_path, monkeypatch):
    write(book_run, tmp_path)
    before = (tmp_path / "workbook.xlsx").read_bytes()

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(excel, "_write_charts", boom)
    small_png(tmp_path / "plots" / "a.png", dpi=72)
    with pytest.raises(OutputError, match="disk full"):
        write(book_run, tmp_path, charts=[Chart("roofline", "A", "plots/a.png")])
    assert (tmp_path / "workbook.xlsx").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plots", "workbook.xlsx"]


def test_rows_stream_in_blocks_without_seams(book_run, tmp_path, monkeypatch):
    """Rows are converted a block at a time; block edges change nothing."""
    monkeypatch.setattr(excel, "CHUNK_ROWS", 100)
    results = book_run.results.copy()
    results.loc[150, "name"] = "=1+1"
    wb, _ = write(book_run, tmp_path, results=results)
    sheet = wb["Results"]
    names = [r[0] for r in sheet.iter_rows(min_row=2, max_col=1, values_only=True)]
    assert names == results["name"].tolist()
    cell = sheet.cell(152, 1)
    assert cell.data_type == "s" and cell.quotePrefix
    batch = column_of(sheet, "critical_batch")
    got = [r[0] for r in sheet.iter_rows(min_row=2, min_col=batch, max_col=batch, values_only=True)]
    assert got == [None if pd.isna(v) else v for v in results["critical_batch"]]


def test_no_charts_sheet_when_every_png_is_missing(book_run, tmp_path):
    charts = [Chart("roofline", "Gone", "plots/missing.png", "h100")]
    wb, notices = write(book_run, tmp_path, charts=charts)
    assert wb.sheetnames == BASE_SHEETS
    assert notices == ["Chart 'Gone' was not embedded: plots/missing.png is missing."]


def test_a_run_without_results_still_gives_a_workbook(book_run, tmp_path):
    wb, notices = write(book_run, tmp_path, results=book_run.results.iloc[:0])
    assert notices == []
    assert [c.value for c in wb["Results"][1]] == list(book_run.results.columns)
    assert wb["Results"].max_row == 1
    assert "No scenario in this run becomes compute-bound by growing its batch." in sheet_text(
        wb["Summary"]
    )


def test_rows_first_then_the_whole_run(book_run, tmp_path):
    """WorkbookWriter: the row sheets from the first rows, then what needs the whole run."""
    small_png(tmp_path / "plots" / "roofline-h100.png", dpi=100)
    chart = Chart("roofline", "Roofline: H100", "plots/roofline-h100.png", "h100")
    path = tmp_path / "workbook.xlsx"
    writer = WorkbookWriter(path, max_rows=10, max_input_rows=4)
    writer.write_rows(book_run.results.iloc[:10], book_run.loaded.inputs.iloc[:4])
    assert not path.exists()
    notices = writer.finish(
        book_run.meta, summary_counts(book_run.results), 13, book_run.errors, 0, book_run.hardware, [chart],
        ["Plots: the sweep chart draws the first 20 series only."], tmp_path,
    )  # fmt: skip
    wb = openpyxl.load_workbook(path)
    assert wb.sheetnames == [*BASE_SHEETS, "Charts"]
    assert wb["Results"].max_row == 11 and wb["Inputs"].max_row == 5
    assert notices == [
        f"Results sheet holds the first 10 of {len(book_run.results):,} rows; "
        "results.csv has them all.",
        "Inputs sheet holds the first 4 of 13 input rows; the scenario file has them all.",
    ]
    text = sheet_text(wb["Summary"])
    assert f"Bound per hardware (all {len(book_run.results):,} scenarios)" in text
    assert "Plots: the sweep chart draws the first 20 series only." in text
    assert wb.properties.title == f"Roofline run {book_run.meta.run_name}"


def test_a_discarded_writer_leaves_nothing(book_run, tmp_path):
    path = tmp_path / "workbook.xlsx"
    writer = WorkbookWriter(path, max_rows=10)
    writer.write_rows(book_run.results, book_run.loaded.inputs)
    writer.discard()
    assert list(tmp_path.iterdir()) == []
