"""The replay of python-calamine's reading of a sheet: where each cell is, which hold a value,
the formulas with no value saved and the error values it hands on as empty, the budgets."""

from __future__ import annotations

import io

import pytest

from pipeline.errors import ScenarioFileError
from pipeline.scenarios.xlsx import cells as xlsx_cells
from pipeline.scenarios.xlsx.cells import (
    Budget,
    CellReader,
    parse_ref,
    ref,
    string_lengths,
)
from tests.helpers import MAIN_NS

LABEL = "s.xlsx[S]"


def replay(rows: str, lengths=None, prefix: str = ""):
    """The scan of a sheet whose <sheetData> holds `rows`."""
    p = f"{prefix}:" if prefix else ""
    ns = f"xmlns{':' + prefix if prefix else ''}"
    xml = f'<{p}worksheet {ns}="{MAIN_NS}"><{p}sheetData>{rows}</{p}sheetData></{p}worksheet>'
    return CellReader(Budget(LABEL, lengths)).parse(io.BytesIO(xml.encode()), LABEL)


def test_cell_names():
    assert [ref(0, 0), ref(4, 25), ref(0, 26), ref(1048575, 16383)] == [
        "A1",
        "Z5",
        "AA1",
        "XFD1048576",
    ]
    assert parse_ref("B3") == (2, 1) and parse_ref("b03") == (2, 1) and parse_ref("7") == (6, None)
    assert parse_ref("A0") is None and parse_ref("A") is None and parse_ref("A-1") is None


def test_cells_without_r_follow_along_their_row_and_rows_without_r_follow_the_last():
    rows = (
        "<row><c><f>1+1</f></c><c><v>3</v></c></row>"
        '<row r="4"><c><v>5</v></c><c r="C4"><f>X1</f></c><c><v>7</v></c></row>'
        "<row/><row><c><f>A1</f></c></row>"
    )
    scan = replay(rows)
    assert scan.marks == {
        (0, 0): ("formula", "=1+1"),
        (3, 2): ("formula", "=X1"),
        (5, 0): ("formula", "=A1"),
    }
    assert scan.last == (3, 3)  # the farthest values: row 4, column D


def test_the_last_child_gives_the_value():
    rows = (
        '<row r="1"><c r="A1"><v>2</v><f>1+1</f></c>'  # a formula last: no value
        '<c r="B1" t="str"><f>""</f><v></v></c>'  # a formula giving "": saved
        '<c r="C1" t="inlineStr"><f>1</f><v>5</v></c>'  # an inline string's <v> is not read
        '<c r="D1"><f>1</f><v></v></c>'  # an empty <v>: nothing saved
        '<c r="E1"><f>2</f><v>4</v></c></row>'  # saved
    )
    scan = replay(rows)
    assert scan.marks == {
        (0, 0): ("formula", "=1+1"),
        (0, 2): ("formula", "=1"),
        (0, 3): ("formula", "=1"),
    }
    assert scan.last == (0, 4)


def test_prefixed_elements_are_read_by_their_local_name():
    rows = '<x:row r="2"><x:c r="B2" t="e"><x:v>#N/A</x:v></x:c><x:c r="C2"><x:f>A1</x:f></x:c></x:row>'
    scan = replay(rows, prefix="x")
    assert scan.marks == {(1, 1): ("error", "#N/A"), (1, 2): ("formula", "=A1")}


def test_error_values_python_calamine_cannot_read_and_damaged_cells_name_the_cell():
    with pytest.raises(ScenarioFileError) as err:
        replay('<row r="1"><c r="D5" t="e"><v>#SPILL!</v></c></row>')
    assert str(err.value) == (
        "s.xlsx[S]: cell D5 holds the error value '#SPILL!', which is not read (only #DIV/0!, "
        "#N/A, #NAME?, #NULL!, #NUM!, #REF!, #VALUE!); type the value, or save the scenarios as CSV"
    )
    with pytest.raises(ScenarioFileError, match=r"has a cell named 'A0'; the file is damaged"):
        replay('<row r="1"><c r="A0"><v>1</v></c></row>')
    with pytest.raises(ScenarioFileError, match=r"cell A1 holds an element <x> where a value"):
        replay('<row r="1"><c r="A1"><x/></c></row>')
    with pytest.raises(ScenarioFileError, match=r"cell A1 of a type 'z' that is not read"):
        replay('<row r="1"><c r="A1" t="z"><v>1</v></c></row>')
    with pytest.raises(ScenarioFileError, match=r"not well-formed \(mismatched tag at line 1"):
        replay('<row r="1"><c r="A1"><v>1</v></x></row>')


def test_a_dtd_is_refused():
    xml = b'<!DOCTYPE w [<!ENTITY a "aaaaaaaa">]><worksheet><sheetData/></worksheet>'
    with pytest.raises(ScenarioFileError, match="has a DTD"):
        CellReader(Budget(LABEL)).parse(io.BytesIO(xml), LABEL)


def test_the_grid_budget_names_the_first_cell_past_it(monkeypatch):
    monkeypatch.setattr(xlsx_cells, "MAX_CELLS", 100)
    with pytest.raises(ScenarioFileError) as err:
        replay(
            '<row r="1"><c r="A1"><v>1</v></c><c r="J1"><v>1</v></c></row><row r="11"><c r="A11"><v>1</v></c></row>'
        )
    assert str(err.value) == (
        "s.xlsx[S]: cell A11 lies past the cells a scenario sheet may span: reading it means "
        "a grid of 11 rows by 10 columns from A1 (110 cells), and the limit is 100; clear it, "
        "or save the scenarios as CSV"
    )
    # cells with no value (formatted, empty <v>) cost nothing
    assert replay('<row r="999"><c r="Z999" s="1"/><c r="ZZ999"><v></v></c></row>').last == (-1, -1)


def test_the_text_budget_counts_a_shared_string_for_every_cell_that_uses_it(monkeypatch):
    monkeypatch.setattr(xlsx_cells, "MAX_TEXT", 250)
    cells = "".join(f'<c r="A{i}" t="s"><v>1</v></c>' for i in range(1, 5))
    with pytest.raises(ScenarioFileError) as err:
        replay(f'<row r="1">{cells}</row>', lengths=[3, 100])
    assert str(err.value) == (
        "s.xlsx[S]: cell A3 takes the text of the sheet's cells past 250 characters (shared "
        "string 1 is 100 characters, used by 3 cells up to it); shorten the text, or save the "
        "scenarios as CSV"
    )
    with pytest.raises(ScenarioFileError, match=r"cell B1 takes .* \(its own text is 300 char"):
        replay(f'<row r="1"><c r="B1" t="inlineStr"><is><t>{"x" * 300}</t></is></c></row>')


def test_a_shared_string_the_workbook_does_not_have_names_the_cell():
    with pytest.raises(ScenarioFileError) as err:
        replay('<row r="2"><c r="C2" t="s"><v>7</v></c></row>', lengths=[1, 2])
    assert str(err.value) == (
        "s.xlsx[S]: cell C2 uses shared string 7, but the workbook has 2; the file is damaged; "
        "open it in Excel or LibreOffice and save it again"
    )


def test_shared_string_lengths_as_python_calamine_reads_them():
    sst = (
        f'<sst xmlns="{MAIN_NS}"><si><t>zero</t></si><si/><si><t xml:space="preserve"> two </t>'
        "</si><si><r><t>th</t></r><r><t>ree</t></r><rPh><t>XXXX</t></rPh></si>"
        "<si><t>\n  four  \n</t></si></sst>"
    )
    assert list(string_lengths(io.BytesIO(sst.encode()), LABEL)) == [4, 0, 5, 5, 4]
