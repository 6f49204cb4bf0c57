"""XlsxWriter behind the Rust writer's calls (render.workbook.xlsx_adapter), read back with openpyxl:
where XlsxWriter alone would differ, the adapter does as the Rust writer (numbers in full, text
never a formula, inf and NaN as text, empty texts left out, a column's format on its unformatted
cells, constant memory per sheet); its spool files go with it; its failures are the errors the
workbook modules catch. (The two writers compared whole: test_xlsx_backend.py.)"""

from __future__ import annotations

import gc
import math

import openpyxl
import pyarrow as pa
import pytest

from pipeline.render.workbook import xlsx_adapter as rx
from tests.helpers import sheet_cells


def _formats():
    number = rx.Format().set_num_format("0.000")
    text = rx.Format().set_quote_prefix()
    bold = rx.Format().set_bold()
    return number, text, bold


def _read(path):
    return openpyxl.load_workbook(path)


def test_numbers_are_written_in_full(tmp_path):
    """XlsxWriter alone keeps 16 digits: 0.1 + 0.2 would read back as 0.3."""
    book = rx.Workbook(str(tmp_path / "w.xlsx"))
    sheet = book.add_worksheet("S")
    sheet.write(0, 0, 0.1 + 0.2)
    sheet.write(1, 0, 2**53 + 1)  # a cell holds a double, as in the Rust writer
    data = book.add_worksheet("D", constant_memory=True)
    data.write_dataframe(0, 0, pa.table({"f": [1 / 3, 2 / 3], "i": [2**53 + 1, 7]}))
    book.close()
    wb = _read(tmp_path / "w.xlsx")
    assert wb["S"]["A1"].value == 0.1 + 0.2 != 0.3
    assert wb["S"]["A2"].value == 2.0**53
    assert [c.value for c in wb["D"]["A"]] == ["f", 1 / 3, 2 / 3]
    assert [c.value for c in wb["D"]["B"]] == ["i", 2.0**53, 7]


def test_text_is_text_and_inf_nan_are_written_as_text(tmp_path):
    book = rx.Workbook(str(tmp_path / "w.xlsx"))
    sheet = book.add_worksheet("S")
    for row, value in enumerate(["=1+1", "http://x.example", math.inf, -math.inf, math.nan]):
        sheet.write(row, 0, value)
    sheet.set_infinity_value("inf")
    sheet.write(5, 0, math.inf)
    data = book.add_worksheet("D", constant_memory=True)
    data.set_neg_infinity_value("-inf")
    data.write_dataframe(0, 0, pa.table({"f": [math.inf, -math.inf, None], "t": ["=2", "", None]}))
    book.close()
    wb = _read(tmp_path / "w.xlsx")
    assert sheet_cells(tmp_path / "w.xlsx", "D") == ["A1", "B1", "A2", "B2", "A3"]  # "", null: none
    assert [(c.value, c.data_type) for c in wb["S"]["A"]] == [
        ("=1+1", "s"), ("http://x.example", "s"), ("INF", "s"), ("-INF", "s"), ("NAN", "s"),
        ("inf", "s"),
    ]  # fmt: skip
    assert not [c for row in wb["S"].iter_rows() for c in row if c.hyperlink]
    assert [c.value for c in wb["D"]["A"]] == ["f", "INF", "-inf"]
    assert [(c.value, c.data_type) for c in wb["D"]["B"][:2]] == [("t", "s"), ("=2", "s")]


def test_an_unformatted_cell_takes_its_columns_format(tmp_path):
    number, text, bold = _formats()
    book = rx.Workbook(str(tmp_path / "w.xlsx"))
    sheet = book.add_worksheet("S", constant_memory=True)
    sheet.set_column_format(0, number)
    sheet.set_column_format(1, text)
    sheet.set_column_width(1, 30)
    sheet.write_dataframe(0, 0, pa.table({"n": [1.5], "t": ["x"], "b": [True]}),
                          header_format=bold, column_formats={"b": bold})  # fmt: skip
    sheet.write(2, 0, 2.5)
    sheet.write(3, 0, 3.5, bold)  # a format of its own replaces the column's
    sheet.write(4, 0, None, bold)  # a blank cell, formatted
    sheet.write(5, 0, "")  # nothing
    book.close()
    ws = _read(tmp_path / "w.xlsx")["S"]
    assert ws["A1"].font.b and ws["B1"].font.b and ws["A1"].number_format == "General"
    assert ws["A2"].number_format == ws["A3"].number_format == "0.000"
    assert ws["B2"].quotePrefix and ws["C2"].font.b and ws["C2"].value is True
    assert ws["A4"].number_format == "General" and ws["A4"].font.b
    assert ws["A5"].value is None and ws["A5"].font.b
    assert "A6" not in sheet_cells(tmp_path / "w.xlsx", "S")
    assert ws.column_dimensions["B"].width == pytest.approx(30.71, abs=0.01)


def test_align_takes_horizontal_names_as_the_rust_writer(tmp_path):
    """The Rust writer's set_align reads "top" as "left"; set_vertical_align sets the top."""
    book = rx.Workbook(str(tmp_path / "w.xlsx"))
    sheet = book.add_worksheet("S")
    sheet.write(0, 0, "a", rx.Format().set_align("top"))
    sheet.write(1, 0, "b", rx.Format().set_vertical_align("top").set_align("right"))
    book.close()
    ws = _read(tmp_path / "w.xlsx")["S"]
    assert (ws["A1"].alignment.horizontal, ws["A1"].alignment.vertical) == ("left", None)
    assert (ws["A2"].alignment.horizontal, ws["A2"].alignment.vertical) == ("right", "top")


def test_only_the_sheets_asked_for_keep_constant_memory(tmp_path):
    """A normal sheet takes its rows in any order; a constant-memory one writes as it goes."""
    book = rx.Workbook(str(tmp_path / "w.xlsx"))
    normal = book.add_worksheet("Normal")
    big = book.add_worksheet("Big", constant_memory=True)
    normal.write(5, 0, "late")
    normal.write(0, 0, "early")
    big.write_dataframe(0, 0, pa.table({"x": list(range(25_000))}))
    book.close()
    wb = _read(tmp_path / "w.xlsx")
    assert [wb["Normal"]["A1"].value, wb["Normal"]["A6"].value] == ["early", "late"]
    assert wb["Big"].max_row == 25_001 and wb["Big"]["A25001"].value == 24_999


def test_a_workbook_never_closed_leaves_no_spool_file(tmp_path, monkeypatch):
    spool = tmp_path / "spool"
    spool.mkdir()
    monkeypatch.setenv("TMPDIR", str(spool))  # as render.workbook.book sets it for a write
    book = rx.Workbook(str(tmp_path / "w.xlsx"))
    book.add_worksheet("Big", constant_memory=True).write(0, 0, 1.0)
    assert len(list(spool.iterdir())) == 1
    del book
    gc.collect()
    assert list(spool.iterdir()) == []
    assert not (tmp_path / "w.xlsx").exists()


def test_failures_are_the_errors_the_workbook_modules_catch(tmp_path):
    book = rx.Workbook(str(tmp_path / "missing" / "w.xlsx"))
    sheet = book.add_worksheet("S")
    with pytest.raises(ValueError, match="exceeds Excel's allowed limits"):
        sheet.write(1_048_576, 0, 1.0)
    with pytest.raises(ValueError, match="exceeds Excel's allowed limits"):
        sheet.write_dataframe(1_048_575, 0, pa.table({"x": [1.0]}))
    with pytest.raises(ValueError, match="names no column"):
        sheet.write_dataframe(0, 0, pa.table({"x": [1.0]}), column_formats={"y": rx.Format()})
    with pytest.raises(FileNotFoundError) as caught:  # an OSError, with its reason
        book.close()
    assert caught.value.strerror == "No such file or directory"


def test_protection_and_notes_use_the_rust_writers_names(tmp_path):
    book = rx.Workbook(str(tmp_path / "w.xlsx"))
    sheet = book.add_worksheet("S")
    sheet.set_default_note_author("me")
    note = rx.Note("what it means")
    note.set_width(360)
    sheet.insert_note(0, 0, note)
    sheet.protect_with_options(rx.ProtectionOptions(use_autofilter=True, format_columns=True))
    book.close()
    ws = _read(tmp_path / "w.xlsx")["S"]
    assert (ws["A1"].comment.text, ws["A1"].comment.author) == ("me:\nwhat it means", "me")
    assert ws.protection.sheet and ws.protection.autoFilter is False
    assert ws.protection.formatColumns is False and ws.protection.formatRows is True
