"""The one pass over a sheet's XML before python-calamine reads it: a conservative bound on the
grid and the text, and the formula and error cells python-calamine reads as empty."""

from __future__ import annotations

import pytest

from pipeline.errors import ScenarioFileError
from pipeline.scenarios.xlsx import budget as xlsx_budget
from pipeline.scenarios.xlsx.budget import ref, scan_sheet
from pipeline.scenarios.xlsx.package import open_package
from tests.helpers import MAIN_NS, raw_workbook

LABEL = "s.xlsx[S]"
PLAIN = (
    '<row r="1" spans="1:3"><c r="A1" t="inlineStr"><is><t>name</t></is></c>'
    '<c r="B1" s="2" t="s"><v>0</v></c></row>'
    '<row r="2"><c r="A2" t="e"><f>1/0</f><v>#DIV/0!</v></c><c r="B2"><f>A1</f></c>'
    '<c r="C2" t="str"><f>""</f><v></v></c><c r="D2"><v>4</v></c><c r="E2"><f>2</f><v/></c>'
    '</row><row r="70"><c r="AB70" s="1"/></row>'
)


def sheet(rows: str, head: str = "") -> bytes:
    return f'{head}<worksheet xmlns="{MAIN_NS}"><sheetData>{rows}</sheetData></worksheet>'.encode()


def scan(tmp_path, rows, strings=("abc",), name="s.xlsx"):
    strings = strings if isinstance(strings, bytes) else list(strings)
    path = raw_workbook(tmp_path / name, {"S": rows}, strings=strings)
    package = open_package(path, path.read_bytes())
    return scan_sheet(package, package.member(package.sheets("xl/")[0].part), "xl/", LABEL)


def error(tmp_path, rows, strings=("abc",)) -> str:
    with pytest.raises(ScenarioFileError) as err:
        scan(tmp_path, rows, strings)
    return str(err.value)


def test_cell_names():
    assert [ref(0, 0), ref(4, 25), ref(0, 26), ref(1048575, 16383)] == [
        "A1",
        "Z5",
        "AA1",
        "XFD1048576",
    ]


def test_the_grid_is_bounded_by_the_cells_with_a_child_and_the_odd_cells_are_marked(tmp_path):
    found = scan(tmp_path, PLAIN)
    assert found.last == (1, 4)  # the formatted AB70 holds nothing
    assert found.marks == {
        (1, 0): ("error", "#DIV/0!"),
        (1, 1): ("formula", "=A1"),
        (1, 4): ("formula", "=2"),  # an empty <v>: no value; t="str" with one: the text ""
    }


def test_cells_without_r_follow_along_their_row_and_rows_without_r_follow_the_last(tmp_path):
    rows = (
        "<row><c><f>1+1</f></c><c><v>3</v></c></row>"
        '<row r="4"><c><v>5</v></c><c r="C4"><f>X1</f></c><c><v>7</v></c></row>'
        "<row/><x:row xmlns:x='u'><x:c><x:f>A1</x:f></x:c></x:row>"
    )
    found = scan(tmp_path, rows)
    assert found.marks == {
        (0, 0): ("formula", "=1+1"),
        (3, 2): ("formula", "=X1"),
        (5, 0): ("formula", "=A1"),
    }
    assert found.last == (5, 3)


def test_xml_in_another_encoding_than_utf8_is_refused(tmp_path):
    utf16 = sheet(PLAIN, '<?xml version="1.0" encoding="UTF-16"?>').decode().encode("utf-16")
    assert error(tmp_path, utf16) == (
        "s.xlsx[S]: the sheet's XML is in UTF-16 or UTF-32, which is not read (a workbook's "
        "XML is UTF-8); open the workbook in Excel or LibreOffice and save it again"
    )
    latin = sheet(PLAIN, '<?xml version="1.0" encoding="ISO-8859-1"?>')
    assert "is in 'ISO-8859-1', which is not read" in error(tmp_path, latin)
    bom = b"\xef\xbb\xbf" + sheet(PLAIN, '<?xml version="1.0" encoding="utf-8"?>')
    assert scan(tmp_path, bom, name="b.xlsx").last == (1, 4)


def test_a_formatted_far_cell_passes_and_a_far_value_is_refused_by_name(tmp_path):
    first = '<row r="1"><c r="A1"><v>1</v></c></row>'
    formatted = f'{first}<row r="1048576"><c r="XFD1048576" s="1"/></row>'
    assert scan(tmp_path, formatted, name="f.xlsx").last == (0, 0)
    valued = f'{first}<row r="1048576"><c r="XFD1048576"><v>1</v></c></row>'
    assert error(tmp_path, valued).startswith("s.xlsx[S]: cell XFD1048576 lies past")


def test_the_grid_budget_names_the_first_cell_past_it(tmp_path, monkeypatch):
    monkeypatch.setattr(xlsx_budget, "MAX_CELLS", 100)
    rows = (
        '<row r="1"><c r="A1"><v>1</v></c><c r="J1"><v>1</v></c></row>'
        '<row r="11"><c r="A11"><v>1</v></c></row>'
    )
    assert error(tmp_path, rows) == (
        "s.xlsx[S]: cell A11 lies past the cells a scenario sheet may span: reading it means "
        "a grid of 11 rows by 10 columns from A1 (110 cells), and the limit is 100; clear it, "
        "or save the scenarios as CSV"
    )


def test_the_text_budget_counts_a_shared_string_for_every_cell_that_uses_it(tmp_path, monkeypatch):
    cells = "".join(f'<c r="A{i}" t="s"><v>1</v></c>' for i in range(1, 5))
    rows = f'<row r="1">{cells}</row>'
    monkeypatch.setattr(xlsx_budget, "MAX_TEXT", len(sheet(rows)) + 250)
    assert error(tmp_path, rows, strings=["abc", "x" * 100]) == (
        "s.xlsx[S]: cell A3 takes the text of the sheet's cells past "
        f"{len(sheet(rows)) + 250:,} characters (shared string 1 is 100 characters, used by 3 "
        "cells up to it); shorten the text, or save the scenarios as CSV"
    )
    monkeypatch.setattr(xlsx_budget, "MAX_TEXT", 100)
    assert error(tmp_path, rows, strings=["abc"]) == (
        f"s.xlsx[S]: the sheet's XML ('xl/worksheets/sheet1.xml') would unpack to "
        f"{len(sheet(rows)):,} bytes, past the 100 characters a scenario sheet's text may take; "
        "save the scenarios as CSV"
    )


def test_shared_strings_larger_than_the_text_budget_are_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(xlsx_budget, "MAX_TEXT", 100)
    assert "shared strings ('xl/sharedStrings.xml') would" in error(tmp_path, "", ["x" * 200])


def test_a_shared_string_is_bounded_by_the_characters_inside_its_si(tmp_path, monkeypatch):
    sst = (
        f'<x:sst xmlns:x="{MAIN_NS}"><x:si><x:r><x:t>ab</x:t></x:r><x:r><x:t>c</x:t></x:r>'
        "<x:rPh><x:t>de</x:t></x:rPh></x:si><x:si/></x:sst>"
    ).encode()
    rows = '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row>'
    monkeypatch.setattr(xlsx_budget, "MAX_TEXT", len(sheet(rows)) + 4)
    assert "(shared string 0 is 5 characters, used by 1 cells" in error(tmp_path, rows, sst)


def test_a_shared_string_the_workbook_does_not_have_names_the_cell(tmp_path):
    assert error(tmp_path, '<row r="2"><c r="C2" t="s"><v>7</v></c></row>', ["a", "b"]) == (
        "s.xlsx[S]: cell C2 uses shared string 7, but the workbook has 2; the file is damaged; "
        "open it in Excel or LibreOffice and save it again"
    )


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ('<row r="1"><c r="A0"><v>1</v></c></row>', "has a cell named 'A0'; the file is damaged"),
        ('<row r="B"><c><v>1</v></c></row>', "has a row numbered 'B'; the file is damaged"),
        ('<row r="1"><c r="A1"><v>1</v></x></row>', "not well-formed (mismatched tag at line 1"),
    ],
)
def test_damaged_xml_is_named(tmp_path, rows, message):
    assert message in error(tmp_path, rows)


def test_a_dtd_is_refused(tmp_path):
    xml = b'<!DOCTYPE w [<!ENTITY a "aaaaaaaa">]><worksheet><sheetData/></worksheet>'
    assert "the sheet XML has a DTD" in error(tmp_path, xml)


def test_an_error_value_python_calamine_does_not_know_names_its_cell(tmp_path):
    assert error(tmp_path, '<row r="5"><c r="D5" t="e"><v>#SPILL!</v></c></row>') == (
        "s.xlsx[S]: cell D5 holds the error value '#SPILL!', which is not read (only #DIV/0!, "
        "#N/A, #NAME?, #NULL!, #NUM!, #REF!, #VALUE!); type the value, or save the scenarios as CSV"
    )


def test_a_data_validations_formula_after_the_cells_is_not_a_cells(tmp_path):
    xml = sheet('<row r="1"><c r="A1" t="inlineStr"><is><t>x</t></is></c></row>').replace(
        b"</worksheet>",
        b'<extLst><ext xmlns:xm="urn:xm"><xm:f>Lists!A1:A9</xm:f></ext></extLst></worksheet>',
    )
    found = scan(tmp_path, xml)
    assert found.marks == {} and found.last == (0, 0)
