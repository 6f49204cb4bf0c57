"""The workbook's package: what kind of file it is, where a sheet's XML is, unsaved formulas."""

from __future__ import annotations

import io
import zipfile

import openpyxl

from pipeline.scenarios.xlsx import (
    OLE_MAGIC,
    ZIP_MAGIC,
    is_workbook,
    open_package,
    sheet_part,
    uncached_formulas,
)


def test_workbooks_are_told_by_their_bytes_or_their_extension():
    assert is_workbook("s.csv", ZIP_MAGIC + b"...") and is_workbook("s.csv", OLE_MAGIC)
    assert is_workbook("S.XLSX", b"name,op\n") and is_workbook("s.ods", b"")
    assert not is_workbook("s.csv", b"name,op\n")


def test_sheet_part_and_the_formulas_without_a_saved_value(tmp_path):
    wb = openpyxl.Workbook()
    wb.active.title = "First"
    ws = wb.create_sheet("Scenarios")
    ws["B3"] = '=A1 & "<x>"'
    ws["AA2"] = 5
    wb.save(tmp_path / "s.xlsx")
    package = open_package(tmp_path / "s.xlsx", (tmp_path / "s.xlsx").read_bytes())
    assert sheet_part(package, "Scenarios") == "xl/worksheets/sheet2.xml"
    assert sheet_part(package, "Nope") is None
    assert uncached_formulas(package, "xl/worksheets/sheet2.xml") == {(2, 1): '=A1 & "<x>"'}
    assert uncached_formulas(package, "xl/worksheets/sheet1.xml") == {}


def test_saved_values_and_empty_string_results_count_as_saved():
    sheet = (
        b'<sheetData><row r="1"><c r="A1"><f>1+1</f><v>2</v></c>'
        b'<c r="B1" t="str"><f>""</f><v></v></c><c r="C1"><f>X1</f><v/></c></row></sheetData>'
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("xl/worksheets/sheet1.xml", sheet)
    package = zipfile.ZipFile(buffer)
    assert uncached_formulas(package, "xl/worksheets/sheet1.xml") == {(0, 2): "=X1"}
