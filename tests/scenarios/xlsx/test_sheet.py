"""Scenarios from a workbook's sheet: the CSV's table and checks, spreadsheet row numbers, and a
clear error for every workbook that cannot be used."""

from __future__ import annotations

import datetime as dt
import zipfile

import openpyxl
import pytest
from openpyxl.styles import Font

from pipeline.errors import ScenarioFileError
from pipeline.scenarios import load_scenarios
from pipeline.scenarios.xlsx import sheet as sheet_module
from pipeline.scenarios.xlsx.budget import Scan
from pipeline.scenarios.xlsx.package import MAX_RATIO, OLE_MAGIC
from pipeline.scenarios.xlsx.sheet import CAPPED_NOTE
from tests.helpers import cells_xml, raw_workbook, write_sheet

HEADER = ["name", "op", "B", "D", "F", "hardware", "notes"]
ROW = ["ok", "matmul", 8, 8192, 8192, "v5e", ""]


def _messages(loaded) -> list[str]:
    return [str(p) for p in loaded.problems]


def test_a_sheet_reads_like_its_csv(tmp_path, catalog):
    rows = [HEADER, ROW, [], ["f", "matmul", 8.0, 4096.0, 2.5e3, "H100", "a note"]]
    path = write_sheet(tmp_path / "s.xlsx", rows)
    loaded = load_scenarios(path, catalog)
    assert loaded.source == f"{path}[Scenarios]"
    assert loaded.lines.tolist() == [2, 4]  # the spreadsheet's rows; the empty row skipped
    assert loaded.table.column("B").to_pylist() == ["8", "8"]  # 8.0 is the whole number 8
    assert loaded.table.column("F").to_pylist() == ["8192", "2500"]
    assert loaded.problems == () and len(loaded.frame) == 2


def test_problems_name_file_sheet_row_and_column_with_did_you_mean(tmp_path, catalog):
    rows = [HEADER + ["dtpye"], ["bad", "matmul", 8.5, 8192, 8192, "h10", "", "bf16"]]
    path = write_sheet(tmp_path / "s.xlsx", rows)
    loaded = load_scenarios(path, catalog, keep_columns=["dtpye"])
    where = f"{tmp_path / 's.xlsx'}[Scenarios]"
    assert _messages(loaded) == [
        f"{where}:2: column B: '8.5' is not a positive integer or a sweep (128|256, 1..512, 1..4096*2)",
        f"{where}:2: column hardware: unknown hardware 'h10' (did you mean 'h100'?)",
    ]
    assert loaded.warnings == ()


def test_a_near_miss_column_is_refused_at_the_header_row(tmp_path, catalog):
    rows = [[], [], HEADER + ["dtpye"], ["ok", "matmul", 8, 8192, 8192, "h100", "", "fp8"]]
    with pytest.raises(ScenarioFileError) as exc:
        load_scenarios(write_sheet(tmp_path / "s.xlsx", rows), catalog)
    assert str(exc.value).startswith(
        f"{tmp_path / 's.xlsx'}[Scenarios]:3: column dtpye: unknown column; did you mean dtype?"
    )


def test_dates_booleans_and_uncached_formulas_are_errors_at_their_cell(tmp_path, catalog):
    rows = [
        HEADER,
        ["d", "matmul", dt.date(2024, 1, 5), 8192, 8192, "v5e", dt.date(2024, 1, 5)],
        ["b", "matmul", True, 8192, 8192, "v5e", ""],
        ["f", "matmul", 8, "=2*4096", 8192, "v5e", ""],
    ]
    loaded = load_scenarios(write_sheet(tmp_path / "s.xlsx", rows), catalog)
    where = f"{tmp_path / 's.xlsx'}[Scenarios]"
    assert _messages(loaded) == [
        f"{where}:2: column B: a date (2024-01-05), not a number: Excel took the value for a date; type the number and format the cell as Number or Text",
        f"{where}:3: column B: a TRUE/FALSE cell (TRUE), not a number",
        f"{where}:4: column D: a formula '=2*4096' has no value saved: open the workbook in Excel or LibreOffice and save it, or type the value",
    ]
    assert loaded.table.column("notes").to_pylist()[0] == "2024-01-05"  # text column: fine


def test_sheet_choice_scenarios_then_inputs_then_first(tmp_path, catalog):
    first = write_sheet(tmp_path / "a.xlsx", [HEADER, ROW], "Mine", "Other")
    assert load_scenarios(first, catalog).source.endswith("[Mine]")
    both = write_sheet(tmp_path / "b.xlsx", [HEADER, ROW], "Inputs", "Scenarios")
    with pytest.raises(ScenarioFileError, match=r"\[Scenarios\]: a header but no scenario rows"):
        load_scenarios(both, catalog)
    assert load_scenarios(both, catalog, sheet="Inputs").source.endswith("[Inputs]")


def test_the_tools_inputs_sheet_drops_line_and_warns_when_capped(tmp_path, catalog):
    rows = [["line", *HEADER], [4, *ROW], [5, "two", *ROW[1:]], [], [CAPPED_NOTE + ": ..."]]
    loaded = load_scenarios(write_sheet(tmp_path / "w.xlsx", rows, "Inputs"), catalog)
    assert "line" not in loaded.table.column_names and len(loaded.frame) == 2
    assert loaded.warnings == (
        f"{tmp_path / 'w.xlsx'}[Inputs]:5: this Inputs sheet holds only part of its run's input "
        "rows (--workbook-input-rows), so it cannot be run again whole; the rows it holds are read",
    )


def test_a_formatted_cell_on_row_a_million_costs_nothing(tmp_path, catalog):
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Scenarios"
    ws.append(HEADER)
    ws.append(ROW)
    ws.cell(row=1_000_000, column=3).font = Font(bold=True)
    wb.save(tmp_path / "s.xlsx")
    loaded = load_scenarios(tmp_path / "s.xlsx", catalog)
    assert loaded.lines.tolist() == [2] and loaded.problems == ()


def _error(path, catalog, **kw) -> str:
    with pytest.raises(ScenarioFileError) as err:
        load_scenarios(path, catalog, **kw)
    return str(err.value)


def test_a_sheet_that_does_not_exist_lists_those_that_do(tmp_path, catalog):
    path = write_sheet(tmp_path / "s.xlsx", [HEADER, ROW], "Scenarios", "Notes")
    assert _error(path, catalog, sheet="scenario") == (
        f"{path}: no sheet 'scenario'; the workbook has 'Scenarios', 'Notes'"
    )


def test_a_title_above_the_header_is_refused(tmp_path, catalog):
    path = write_sheet(tmp_path / "s.xlsx", [["Q3 plan"], [], HEADER, ROW])
    assert _error(path, catalog) == (
        f"{path}[Scenarios]:3: the header (name, op, hardware, ...) is on row 3, but row 1 is "
        "the first non-empty row: the header must be the first; delete rows 1 to 2"
    )


def test_merged_cells_in_the_table_are_refused(tmp_path, catalog):
    wb = openpyxl.Workbook()
    ws = wb.active
    for row in (HEADER, ROW, ["two", *ROW[1:]]):
        ws.append(row)
    ws.merge_cells("F2:F3")
    wb.save(tmp_path / "s.xlsx")
    assert _error(tmp_path / "s.xlsx", catalog) == (
        f"{tmp_path / 's.xlsx'}[Sheet]:2: cells F2:F3 are merged; a scenario table needs one "
        "value per cell: unmerge them"
    )


def test_not_a_zip(tmp_path, catalog):
    path = tmp_path / "s.xlsx"
    path.write_text("name,op\n")
    assert _error(path, catalog) == (
        f"{path}: not an .xlsx workbook (an .xlsx file is a zip archive, and this is not one); "
        "save it from Excel as .xlsx, or as CSV"
    )


def test_password_protected_and_xls_files(tmp_path, catalog):
    locked = tmp_path / "locked.xlsx"
    locked.write_bytes(OLE_MAGIC + bytes(504) + "EncryptedPackage".encode("utf-16-le"))
    assert _error(locked, catalog) == (
        f"{locked}: the workbook is password-protected (encrypted), so its cells cannot be "
        "read; save a copy without the password and give that"
    )
    old = tmp_path / "old.xls"
    old.write_bytes(OLE_MAGIC + bytes(504))
    assert _error(old, catalog) == (
        f"{old}: an Excel 97-2003 workbook (.xls), which is not read; save it as .xlsx "
        "(Excel Workbook) or as CSV"
    )


def test_ods_files(tmp_path, catalog):
    path = tmp_path / "s.ods"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("mimetype", "application/vnd.oasis.opendocument.spreadsheet")
        z.writestr("content.xml", "<office:document-content/>")
    assert _error(path, catalog) == (
        f"{path}: an OpenDocument spreadsheet (.ods), which is not read; save it as .xlsx "
        "(Excel 2007-365) or as CSV"
    )


def test_a_zip_bomb_is_refused_before_it_is_unpacked(tmp_path, catalog):
    bomb = b"<worksheet><sheetData/>" + bytes(17 << 20) + b"</worksheet>"  # 1,000 to 1
    path = raw_workbook(tmp_path / "bomb.xlsx", {"Scenarios": bomb})
    size = path.stat().st_size
    assert len(bomb) > MAX_RATIO * size
    read = ("_rels/.rels", "xl/_rels/workbook.xml.rels", "xl/workbook.xml")
    with zipfile.ZipFile(path) as z:
        total = len(bomb) + sum(z.getinfo(n).file_size for n in read)
    assert _error(path, catalog) == (
        f"{path}: the parts read ('_rels/.rels', 'xl/_rels/workbook.xml.rels', "
        f"'xl/workbook.xml', 'xl/worksheets/sheet1.xml') would unpack to {total:,} "
        f"bytes from {size:,} (a zip bomb?); the limit is 1,073,741,824 bytes, and "
        f"{MAX_RATIO} times its packed size for any part over 16 MB: save the scenarios as CSV"
    )


def test_an_empty_sheet_and_a_header_alone(tmp_path, catalog):
    empty = write_sheet(tmp_path / "e.xlsx", [])
    assert _error(empty, catalog) == (
        f"{empty}[Scenarios]: no header and no scenario rows (the sheet is empty)"
    )
    alone = write_sheet(tmp_path / "h.xlsx", [HEADER])
    assert _error(alone, catalog) == (
        f"{alone}[Scenarios]: a header but no scenario rows: nothing to compute"
    )


def test_header_problems_name_their_cells(tmp_path, catalog):
    twice = raw_workbook(
        tmp_path / "t.xlsx", {"Scenarios": cells_xml([[*HEADER, "x", "B"], [*ROW, 1, 2]])}
    )
    assert _error(twice, catalog) == (
        f"{twice}[Scenarios]:1: column names appear twice: 'B' (cells C1 and I1)"
    )
    nul = raw_workbook(
        tmp_path / "n.xlsx", {"Scenarios": cells_xml([[*HEADER, "te_x0000_am"], ROW])}
    )
    assert _error(nul, catalog) == (  # Excel's escape _x0000_ is the one way a NUL gets in
        f"{nul}[Scenarios]:1: cell H1: the header 'te\\x00am' holds a NUL byte at character 3; "
        "remove it (a scenario file is text)"
    )
    formula = [[*HEADER[:2], b'<c r="C1"><f>UPPER("b")</f></c>', *HEADER[3:]], ROW]
    path = raw_workbook(tmp_path / "f.xlsx", {"Scenarios": cells_xml(formula)})
    assert _error(path, catalog) == (
        f"{path}[Scenarios]:1: cell C1 of the header is a formula with no value saved "
        "('=UPPER(\"b\")'); type the column's name"
    )


def test_a_formula_or_error_past_the_values_read_is_still_a_cell_of_the_sheet(tmp_path, catalog):
    rows = [HEADER, [*ROW, None, None, b'<c r="J2"><f>A1</f></c>']]
    path = raw_workbook(tmp_path / "s.xlsx", {"Scenarios": cells_xml(rows)})
    assert _error(path, catalog) == (
        f"{path}[Scenarios]:2: cell J2 holds '=A1', but its column has no header (J1 is "
        "empty): name the column in J1, or clear the cell"
    )


def test_a_hidden_sheet_given_by_name_is_read_without_a_warning(tmp_path, catalog):
    body = cells_xml([HEADER, ROW])
    path = raw_workbook(tmp_path / "s.xlsx", {"Plan": body, "Mine": body}, hidden=("Mine",))
    assert load_scenarios(path, catalog, sheet="Mine").warnings == ()


def test_the_first_of_several_sheets_without_a_header_names_the_sheets(tmp_path, catalog):
    path = write_sheet(tmp_path / "s.xlsx", [["notes"], HEADER, ROW], "Read me", "Plan")
    assert _error(path, catalog) == (
        f"{path}[Read me]: no sheet is named 'Scenarios' or 'Inputs', so the first sheet, "
        "'Read me', was read, and its first row is not a scenario header (name, op, hardware, "
        "...); the workbook has 'Read me', 'Plan': give the scenario sheet with --sheet NAME"
    )


def test_when_the_check_and_python_calamine_disagree_the_sheet_is_refused(
    tmp_path, catalog, monkeypatch
):
    path = raw_workbook(tmp_path / "s.xlsx", {"Scenarios": cells_xml([HEADER, ROW])})
    monkeypatch.setattr(sheet_module, "scan_sheet", lambda *a: Scan((1, 2), {}))
    assert _error(path, catalog) == (
        f"{path}[Scenarios]: the sheet's XML reads two ways (python-calamine finds a value at G2, "
        "past the cells the check of the XML found); the file is damaged; open it in Excel or LibreOffice and save it again"
    )
    monkeypatch.setattr(
        sheet_module, "scan_sheet", lambda *a: Scan((9, 9), {(1, 0): ("error", "#N/A")})
    )
    assert _error(path, catalog) == (
        f"{path}[Scenarios]: cell A2 reads as a value, but its XML holds an error value ('#N/A'); "
        "the file is damaged; open it in Excel or LibreOffice and save it again"
    )
