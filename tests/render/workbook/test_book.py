"""The workbook, read back with openpyxl: sheets, the Results, Hardware, Inputs and Errors
sheets' values, column order, formats, print setup, tints, caps, untrusted text (the Answer
sheet: test_workbook_answer.py; Summary and Charts: test_workbook_summary.py; the time
formats: test_workbook_styles.py)."""

from __future__ import annotations

import csv
import math

import pandas as pd
import pytest
from openpyxl.utils import get_column_letter

from pipeline.errors import OutputError
from pipeline.render.format import EXCEL
from pipeline.render.workbook import book as wbmod
from pipeline.render.workbook.answer import PRINT_ROWS, RESULTS_FIRST, results_columns
from pipeline.render.workbook.book import cap_notices
from pipeline.run.tables import write_csv
from pipeline.scenarios.xlsx.sheet import CAPPED_NOTE
from tests.helpers import analyze_file, analyze_rows, column_of, sheet_text, workbook_of

BASE_SHEETS = ["Answer", "Summary", "Results", "Hardware", "Inputs"]
HOSTILE = ["=1+1", "+SUM(1,2)", "-2+3", "@SUM(A1)", '=HYPERLINK("http://x.example","y")']


@pytest.fixture(scope="module")
def book_book(book, tmp_path_factory):
    """The book scenarios' workbook and their results.csv, written once."""
    folder = tmp_path_factory.mktemp("book")
    write_csv(book.results, folder / "results.csv")
    wb, notices = workbook_of(book, folder)
    return wb, folder / "results.csv", notices


@pytest.fixture
def hostile(tmp_path):
    """A file whose names, notes and extra column start like formulas, plus one bad row."""
    path = tmp_path / "hostile.csv"
    rows = ["name,op,B,D,F,hardware,notes,team"]
    for i, text in enumerate(HOSTILE):
        quoted = '"' + text.replace('"', '""') + '"'
        rows.append(f"{quoted},matmul,{128 * (i + 1)},4096,4096,v5e,{quoted},{quoted}")
    rows.append("bad_hw,matmul,1,2,3,h10,rejected,x")
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return analyze_file(path)


# ---------------------------------------------------------------- structure


def test_sheets_in_order_without_errors_or_charts(book_book):
    wb, _, notices = book_book
    assert wb.sheetnames == BASE_SHEETS
    assert notices == []


def test_results_columns_answer_first_then_results_csv_order(book_book, book):
    """name, hardware, op, t_lower, bound, fits, critical_batch, then the other columns as
    results.csv has them (results.csv keeps its own order)."""
    wb, csv_path, _ = book_book
    with open(csv_path, newline="", encoding="utf-8") as fh:
        header = next(csv.reader(fh))
    assert header == list(book.results.columns)  # the file is unchanged
    got = [c.value for c in wb["Results"][1]]
    assert got[:7] == list(RESULTS_FIRST) == [
        "name", "hardware", "op", "t_lower", "bound", "fits", "critical_batch",
    ]  # fmt: skip
    assert got[7:] == [c for c in header if c not in RESULTS_FIRST]


def test_results_values_equal_results_csv(book_book, book):
    """Numbers as numbers, NA as empty cells, booleans as booleans, text as text."""
    wb, csv_path, _ = book_book
    with open(csv_path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))[1:]
    sheet = wb["Results"]
    assert sheet.max_row == len(rows) + 1 == len(book.results) + 1
    kinds = [
        "bool" if isinstance(t, pd.BooleanDtype) else "number" if t.kind in "iuf" else "text"
        for t in book.results.dtypes
    ]
    at = [column_of(sheet, name) - 1 for name in book.results.columns]  # the csv's order
    for expected, row in zip(rows, sheet.iter_rows(min_row=2), strict=True):
        cells = [row[i] for i in at]
        for text, cell, kind in zip(expected, cells, kinds, strict=True):
            where = f"{cell.coordinate} ({text!r})"
            if text == "":
                assert cell.value is None, where
            elif kind == "bool":
                assert cell.data_type == "b" and cell.value is (text == "True"), where
            elif kind == "number":
                assert cell.data_type == "n", where
                assert math.isclose(cell.value, float(text), rel_tol=1e-15), where
            else:
                assert cell.data_type == "s" and cell.value == text, where


def test_number_formats_show_units(book_book):
    wb, _, _ = book_book
    sheet = wb["Results"]

    def fmt(name: str) -> str:  # row 4: v5e_critical_intensity, every number filled in
        return sheet.cell(row=4, column=column_of(sheet, name)).number_format

    for name in ("t_math", "t_hbm", "t_network", "t_lower", "t_upper"):
        assert fmt(name) == EXCEL["seconds"] and "E+0" in fmt(name)
    for name in ("peak_flops", "attainable_flops"):
        assert fmt(name) == EXCEL["flop_rate"] and "TFLOP/s" in fmt(name)
    for name in ("bytes_read", "hbm_bytes", "memory_footprint", "hbm_capacity"):
        assert fmt(name) == EXCEL["size"] and " GB" in fmt(name) and " MB" in fmt(name)
    assert fmt("hbm_bandwidth") == EXCEL["bandwidth"]
    assert fmt("flops") == EXCEL["flops"]
    assert fmt("peak_fraction") == "0.0%"
    assert fmt("critical_batch") == "#,##0"
    assert fmt("name") == "General"
    # the value behind a format stays SI: seconds, FLOP/s
    assert sheet.cell(2, column_of(sheet, "peak_flops")).value == 9.89e14
    assert sheet.cell(2, column_of(sheet, "t_math")).value == pytest.approx(1e12 / 9.89e14)


def test_header_frozen_filter_widths_print_setup(book_book, book):
    wb, _, _ = book_book
    results = wb["Results"]
    assert results.freeze_panes == "B2"  # header row and the name column
    last = get_column_letter(len(book.results.columns))
    assert results.auto_filter.ref == f"A1:{last}{len(book.results) + 1}"
    assert results.column_dimensions["A"].width > 20  # names are long
    assert results.page_setup.orientation == "landscape" and results.print_title_rows == "$1:$1"
    # printed: the answer's seven columns of the first PRINT_ROWS rows, one page wide
    assert results.print_area == f"'Results'!$A$1:$G${PRINT_ROWS + 1}"
    assert results.sheet_properties.pageSetUpPr.fitToPage
    assert (results.page_setup.fitToWidth in (None, 1), results.page_setup.fitToHeight) == (
        True, 0,
    )  # fmt: skip
    assert results.oddFooter.left.text == (
        "Results: columns A-G, the first 500 of 1,035 rows (clear the print area to print more)"
    )
    assert wb["Inputs"].freeze_panes == "C2"
    assert wb["Hardware"].freeze_panes == "B2"
    for name in ("Inputs", "Hardware"):
        assert wb[name].auto_filter.ref is not None
    assert wb["Summary"].sheet_properties.pageSetUpPr.fitToPage  # one page wide


def test_bound_is_colour_coded_and_not_fitting_highlighted(book_book, book):
    wb, _, _ = book_book
    sheet = wb["Results"]
    n = len(book.results) + 1
    bound = get_column_letter(column_of(sheet, "bound"))
    fits = get_column_letter(column_of(sheet, "fits"))
    rules = {str(cf.sqref): cf.rules for cf in sheet.conditional_formatting}
    on_bound = rules[f"{bound}2:{bound}{n}"]
    assert [(r.type, r.formula) for r in on_bound] == [
        ("expression", [f'${bound}2="compute"']),
        ("expression", [f'${bound}2="memory"']),
        ("expression", [f'${bound}2="network"']),
    ]
    fills = {r.dxf.fill.bgColor.rgb for r in on_bound}
    assert len(fills) == 3  # three different colours
    (on_fits,) = rules[f"{fits}2:{fits}{n}"]
    assert (on_fits.type, on_fits.formula) == ("expression", [f"${fits}2=FALSE"])
    # booleans carry a format of their own: LibreOffice (7.4) prints an unformatted boolean
    # in a print area as 1 / 0, and fails to print when a rule reads one
    cell = sheet[f"{fits}2"]
    assert cell.data_type == "b" and cell.number_format == EXCEL["boolean"]


def test_a_short_run_prints_every_row(tmp_path):
    rows = [{"name": "a", "op": "matmul", "B": "1..3", "D": 64, "F": 64, "hardware": "v5e"}]
    wb, _ = workbook_of(analyze_rows(rows), tmp_path)
    results = wb["Results"]
    assert results.print_area == "'Results'!$A$1:$G$4"
    assert results.oddFooter.left.text.startswith("Results: columns A-G, every row (")


# ---------------------------------------------------------------- sheets


def test_hardware_sheet_lists_chips_used_with_sources(book_book, book):
    wb, _, _ = book_book
    sheet = wb["Hardware"]
    header = [c.value for c in sheet[1]]
    assert header[0] == "name" and header[-1] == "source"
    names = [row[0] for row in sheet.iter_rows(min_row=2, values_only=True)]
    assert names == [r["name"] for r in book.hardware]
    peak = sheet.cell(2, column_of(sheet, "peak_bf16"))
    assert peak.data_type == "n" and peak.number_format == EXCEL["flop_rate"]
    assert peak.value == book.hardware[0]["peak_bf16"]
    assert all(row[-1] for row in sheet.iter_rows(min_row=2, values_only=True))


def test_inputs_sheet_holds_rows_as_read(book_book, book):
    wb, _, _ = book_book
    inputs = book.inputs
    sheet = wb["Inputs"]
    assert [c.value for c in sheet[1]] == list(inputs.columns)
    got = list(sheet.iter_rows(min_row=2, values_only=True))
    assert [r[0] for r in got] == inputs["line"].tolist()
    for row, (_, expected) in zip(got, inputs.iterrows(), strict=True):
        assert [v or "" for v in row[1:]] == expected.iloc[1:].tolist()


def test_untrusted_text_is_stored_as_quote_prefixed_strings(hostile, tmp_path):
    wb, _ = workbook_of(hostile, tmp_path)
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
        assert all(c.data_type == "s" and c.quotePrefix for c in got)


def test_leading_tabs_and_returns_stay_text(tmp_path):
    """The CSV reader strips a leading tab or CR; rows given in memory keep them."""
    rows = [{"name": f"r{i}", "op": "matmul", "B": 1, "D": 2, "F": 3, "hardware": "v5e",
             "notes": note} for i, note in enumerate(("\r=4+4", "\t=5+5"))]  # fmt: skip
    wb, _ = workbook_of(analyze_rows(rows), tmp_path)
    sheet = wb["Results"]
    got = [sheet.cell(r, column_of(sheet, "notes")) for r in (2, 3)]
    assert got[0].value.endswith("=4+4") and got[1].value == "\t=5+5"
    assert all(c.data_type == "s" and c.quotePrefix for c in got)


def test_errors_sheet_only_when_rows_were_rejected(hostile, tmp_path):
    wb, _ = workbook_of(hostile, tmp_path)
    assert wb.sheetnames == [*BASE_SHEETS, "Errors"]
    rows = list(wb["Errors"].iter_rows(values_only=True))
    assert rows[0] == ("line", "name", "column", "reason")
    assert rows[1][:3] == (len(HOSTILE) + 2, "bad_hw", "hardware")
    assert "unknown hardware 'h10'" in rows[1][3]
    summary = {r[0]: r[1:] for r in wb["Summary"].iter_rows(values_only=True)}
    assert summary["Rejected rows"][:2] == (1, "see the Errors sheet and errors.csv")


def test_text_past_excels_cell_limit_is_cut_and_said(tmp_path):
    rows = [{"name": f"r{i}", "op": "matmul", "B": 1, "D": 2, "F": 3, "hardware": "v5e",
             "notes": note} for i, note in enumerate(("n" * 40_000, "😀" * 20_000, "short"))]  # fmt: skip
    wb, notices = workbook_of(analyze_rows(rows), tmp_path)  # 😀: 2 UTF-16 units, 40,000 in all
    assert notices == [
        "2 cell(s) of column notes on the Results sheet held more than Excel's 32,767 "
        "characters and are cut there; results.csv has them whole.",
        "2 cell(s) of column notes on the Inputs sheet held more than Excel's 32,767 "
        "characters and are cut there; the scenario file has them whole.",
    ]
    assert set(notices) <= set(sheet_text(wb["Summary"]))
    for name in ("Results", "Inputs"):
        col = column_of(wb[name], "notes")
        first, second = wb[name].cell(2, col).value, wb[name].cell(3, col).value
        assert len(first) == 32_767 and first.endswith("…")
        assert len(second.encode("utf-16-le")) // 2 <= 32_767 and second.endswith("…")
        assert wb[name].cell(4, col).value == "short"


# ---------------------------------------------------------------- the row caps


def test_row_cap_keeps_first_rows(book, tmp_path):
    total = len(book.results)
    notices = cap_notices(100, 100, total, len(book.inputs), 0)  # the caller's, said once
    wb, own = workbook_of(book, tmp_path, max_rows=100, notices=notices)
    assert own == []  # the caps' notices are the caller's
    results = wb["Results"]
    assert results.max_row == 101
    first = [r[0] for r in results.iter_rows(min_row=2, max_col=1, values_only=True)]
    assert first == book.results["name"].iloc[:100].tolist()
    assert results.auto_filter.ref.endswith("101")
    summary = sheet_text(wb["Summary"])
    assert notices[0] in summary
    assert f"Bound per hardware (all {total:,} scenarios)" in summary  # counts cover every row
    assert wb["Inputs"].max_row == len(book.inputs) + 1  # under the cap: all


def test_row_cap_applies_to_inputs_and_errors(hostile, tmp_path):
    wb, _ = workbook_of(hostile, tmp_path, max_rows=0, max_input_rows=3)
    # a capped Inputs sheet ends with a note, a row after the table (scenarios.xlsx.sheet reads it)
    assert [wb[s].max_row for s in ("Results", "Inputs", "Errors")] == [1, 3, 1]  # under 0
    assert wb["Inputs"]["A3"].value == (
        f"{CAPPED_NOTE}: the first 0 of {len(hostile.inputs):,} are, so this sheet cannot be "
        "run again whole; the scenario file has them all."
    )
    wb, _ = workbook_of(hostile, tmp_path, max_rows=5, max_input_rows=3)
    assert [wb[s].max_row for s in ("Results", "Inputs", "Errors")] == [6, 6, 2]
    wb, _ = workbook_of(hostile, tmp_path, max_rows=50, max_input_rows=50)
    assert wb["Inputs"].max_row == len(hostile.inputs) + 1  # whole: no note


def test_cap_notices_say_what_each_cap_leaves_out():
    assert cap_notices(10, 10, 10, 10, 10) == []
    assert cap_notices(5, 3, 8, 9, 6) == [
        "Results sheet holds the first 5 of 8 rows; results.csv has them all.",
        "Inputs sheet holds the first 3 of 9 input rows; the scenario file has them all.",
        "Errors sheet holds the first 5 of 6 problems; errors.csv has them all.",
    ]
    assert cap_notices(5, 50, 1, 6, 0) == [  # the input cap is never over the row cap
        "Inputs sheet holds the first 5 of 6 input rows; the scenario file has them all."
    ]
    assert cap_notices(2_000_000, 10, 1_048_576, 0, 0) == [  # Excel's limit, header included
        "Results sheet holds the first 1,048,575 of 1,048,576 rows; results.csv has them all."
    ]


# ---------------------------------------------------------------- writing


def test_a_failed_write_is_an_output_error(book, tmp_path, monkeypatch):
    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(wbmod, "write_summary", boom)
    with pytest.raises(OutputError, match="disk full"):
        workbook_of(book, tmp_path)


def test_a_run_without_results_still_gives_a_workbook(tmp_path):
    empty = analyze_rows([{"name": "typo", "op": "matmul", "B": 1, "D": 2, "F": 3,
                           "hardware": "h10"}])  # fmt: skip
    assert empty.results.empty
    wb, notices = workbook_of(empty, tmp_path)
    assert notices == []
    assert [c.value for c in wb["Results"][1]] == results_columns(empty.results.columns)
    assert wb["Results"].max_row == 1
    assert wb["Answer"]["A2"].value.startswith("No scenario was computed")
    assert wb.sheetnames == [*BASE_SHEETS, "Errors"]
    assert wb.properties.title == "Roofline run q1-q5"


def test_hardware_sheet_shows_derated_rates_beside_nominal(tmp_path):
    analysis = analyze_rows(
        [
            {"name": "a", "op": "matmul", "B": "512", "D": "8192", "F": "8192",
             "hardware": "v5e", "compute_efficiency": "0.9", "hbm_efficiency": "0.5"},
            {"name": "b", "op": "matmul", "B": "512", "D": "8192", "F": "8192",
             "hardware": "h100"},
        ]
    )  # fmt: skip
    book, notices = workbook_of(analysis, tmp_path)
    sheet = book["Hardware"]
    header = [c.value for c in sheet[1]]
    at = header.index("hbm_bandwidth")
    assert header[at + 1] == "hbm_bandwidth_derated"
    assert header[header.index("peak_bf16") + 1] == "peak_bf16_derated"
    rows = {r[0]: dict(zip(header, r, strict=True)) for r in sheet.iter_rows(2, values_only=True)}
    assert rows["tpu-v5e"]["hbm_bandwidth_derated"] == pytest.approx(0.5 * 8.2e11)
    assert rows["tpu-v5e"]["peak_bf16_derated"] == pytest.approx(0.9 * 1.97e14)
    assert rows["tpu-v5e"]["efficiencies"] == "compute 90.0%, HBM 50.0% (1 row)"
    assert rows["h100"]["hbm_bandwidth_derated"] is None  # its rows run at nominal rates
    assert header[-1] == "source"
