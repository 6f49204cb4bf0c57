"""render/workbook/table_sheet.py: the frame of a sheet that is one table (Serving, Training):
columns widened for a header on two lines, a title and notes, the header row, a line's cells
by their kind, and the table filterable, frozen and printed one page wide."""

from __future__ import annotations

import openpyxl

from pipeline.render.workbook.cells import FittedSheet, text_width
from pipeline.render.workbook.styles import Styles
from pipeline.render.workbook.table_sheet import (
    HEADER_ROW,
    finish_table,
    start_table,
    two_lines,
    write_line,
)
from pipeline.render.workbook.xlsx_backend import rx

COLUMNS = (
    ("name", "name", "text", 6),
    ("fits in HBM / why not", "verdict", "verdict", 8),
    ("bound", "bound_text", "bound", 6),
    ("time (s)", "time", "seconds", 6),
    ("count of things", "n", "count", 4),
)


def written(tmp_path, lines):
    path = tmp_path / "t.xlsx"
    book = rx.Workbook(str(path))
    styles = Styles()
    sheet = FittedSheet(book.add_worksheet("T"))
    start_table(sheet, styles, COLUMNS, str.upper, 30, "A title", ("note one", "note two"))
    row = HEADER_ROW
    for record, ok in lines:
        row += 1
        write_line(sheet, styles, row, COLUMNS, record, ok, {"count": styles.integer})
    finish_table(sheet, row, len(COLUMNS))
    book.close()
    return openpyxl.load_workbook(path)["T"]


def test_a_header_is_given_room_on_two_lines_split_where_they_are_most_even():
    assert two_lines(4, "count of things") == text_width("count of") + 2  # 'of things' is 9
    assert two_lines(20, "count of things") == 20  # a wide column stays as it is
    assert two_lines(3, "MFU") == 5  # one word: its own width


def test_the_frame_title_notes_header_widths_and_lines(tmp_path):
    line = {"name": "a", "verdict": "no: 2 GB over", "bound_text": "memory", "bound": "memory",
            "time": 0.5, "n": None}  # fmt: skip
    sheet = written(tmp_path, [(line, False), ({**line, "verdict": "yes", "n": 7}, True)])
    assert [sheet.cell(r, 1).value for r in (1, 2, 3)] == ["A title", "note one", "note two"]
    head = [c.value for c in sheet[HEADER_ROW + 1]]
    assert head == [c[0].upper() for c in COLUMNS]
    assert sheet.column_dimensions["A"].width > 29  # the first column's own width: 30
    assert sheet.column_dimensions["E"].width > 9  # 'COUNT OF' on two lines
    first, second = sheet[HEADER_ROW + 2], sheet[HEADER_ROW + 3]
    assert first[4].value is None and second[4].value == 7  # none: left blank
    assert first[1].font.color is not None and first[1].font != second[1].font  # not fitting
    assert first[3].value == 0.5
    assert sheet.auto_filter.ref == "A5:E7" and sheet.freeze_panes == "B6"
    assert sheet.page_setup.orientation == "landscape"
