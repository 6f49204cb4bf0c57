"""Issue 27, round three: scenarios from workbooks (P7, P8, P11, P20, P21, P26, P27, P28,
P29), one test per finding."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

import pipeline
from pipeline.errors import ScenarioFileError
from pipeline.scenarios.xlsx import package as xlsx_package
from tests.helpers import FAST, MAIN_NS, cells_xml, invoke, raw_workbook, write_scenarios

HEADER = ["name", "op", "B", "D", "F", "hardware", "chips"]
ROW = ["a", "matmul", 8, 8192, 8192, "v5e", 1]


def _problems(path) -> list[str]:
    return [str(p) for p in pipeline.analyze(path).problem_list]


def test_p07_an_error_cell_is_a_row_problem_quoting_the_error_and_the_cell(tmp_path):
    rows = [
        HEADER,
        [*ROW[:6], b'<c r="G2" t="e"><f>1/0</f><v>#DIV/0!</v></c>'],  # chips: would be 1
        ["b", "matmul", 8, 8192, 8192, b'<c r="F3" t="e"><v>#N/A</v></c>', 1],
        ["c", "matmul", b'<c r="C4" t="e"><f>Z9</f><v>#REF!</v></c>', 8192, 8192, "v5e", 1],
        ["ok", *ROW[1:]],
    ]
    path = raw_workbook(tmp_path / "s.xlsx", {"Scenarios": cells_xml(rows)})
    analysis = pipeline.analyze(path)
    where = f"{path}[Scenarios]"
    assert [str(p) for p in analysis.problem_list] == [
        f"{where}:2: column chips: the error value '#DIV/0!' (cell G2): Excel could not compute "
        "it; fix what its formula refers to, or type the value",
        f"{where}:3: column hardware: the error value '#N/A' (cell F3): Excel could not compute "
        "it; fix what its formula refers to, or type the value",
        f"{where}:4: column B: the error value '#REF!' (cell C4): Excel could not compute it; "
        "fix what its formula refers to, or type the value",
    ]
    assert list(analysis.results["name"]) == ["ok"]


def _no_r(rows: list[list]) -> str:
    return cells_xml(rows).replace(' r="', ' x="')  # neither rows nor cells say where they are


def _prefixed(rows: list[list]) -> bytes:
    body = cells_xml(rows)
    for name in ("row", "c", "is", "t", "v", "f"):
        body = body.replace(f"<{name}>", f"<x:{name}>").replace(f"<{name} ", f"<x:{name} ")
        body = body.replace(f"</{name}>", f"</x:{name}>")
    return (
        f'<x:worksheet xmlns:x="{MAIN_NS}"><x:sheetData>{body}</x:sheetData></x:worksheet>'
    ).encode()


@pytest.mark.parametrize("written", ["cells without r", "part name in other case", "prefixed"])
def test_p08_a_formula_without_a_saved_value_is_found_however_the_xml_is_written(tmp_path, written):
    rows = [HEADER, [*ROW[:2], b'<c r="C2"><f>4*2</f></c>', *ROW[3:]]]
    sheets, parts = {"Scenarios": cells_xml(rows)}, None
    if written == "cells without r":
        sheets = {"Scenarios": _no_r(rows)}
    elif written == "prefixed":
        sheets = {"Scenarios": _prefixed(rows)}
    else:
        whole = f'<worksheet xmlns="{MAIN_NS}"><sheetData>{cells_xml(rows)}</sheetData></worksheet>'
        parts = {"xl/worksheets/sheet1.xml": None, "xl/worksheets/Sheet1.XML": whole.encode()}
    path = raw_workbook(tmp_path / "s.xlsx", sheets, parts=parts)
    assert _problems(path) == [
        f"{path}[Scenarios]:2: column B: a formula '=4*2' has no value saved: open the "
        "workbook in Excel or LibreOffice and save it, or type the value"
    ]


FAR = {
    "a value at XFD1048576": ('<row r="1048576"><c r="XFD1048576"><v>1</v></c></row>', None),
    "a space at AZ1048576": (
        '<row r="1048576"><c r="AZ1048576" t="inlineStr"><is><t xml:space="preserve"> </t>'
        "</is></c></row>",
        None,
    ),
    "a 15 MB string used by 200 cells": (
        "".join(f'<row r="{r}"><c r="H{r}" t="s"><v>0</v></c></row>' for r in range(3, 203)),
        ["x" * 15_000_000],
    ),
}
# the child: its address space capped at 3 GB (the old reader asked for 2.9 to 512 GB)
CHILD = textwrap.dedent(
    """
    import resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
    from pipeline.cli import cli
    cli(["validate", sys.argv[1]])
    """
)


@pytest.mark.parametrize("case", list(FAR))
def test_p11_far_cells_and_shared_string_fan_out_are_refused_before_the_read(tmp_path, case):
    rows, strings = FAR[case]
    body = cells_xml([HEADER, ROW]) + rows
    path = raw_workbook(tmp_path / "s.xlsx", {"Scenarios": body}, strings=strings)
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(path)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 1, done.stderr[-2000:]  # never SIGABRT (-6), never a traceback
    where = f"Error: {path}[Scenarios]: cell"
    expected = {
        "a value at XFD1048576": f"{where} XFD1048576 lies past the cells a scenario sheet may "
        "span: reading it means a grid of 1,048,576 rows by 16,384 columns from A1 "
        "(17,179,869,184 cells), and the limit is 10,000,000; clear it, or save the scenarios "
        "as CSV",
        "a space at AZ1048576": f"{where} AZ1048576 lies past the cells a scenario sheet may "
        "span: reading it means a grid of 1,048,576 rows by 52 columns from A1 (54,525,952 "
        "cells), and the limit is 10,000,000; clear it, or save the scenarios as CSV",
        "a 15 MB string used by 200 cells": f"{where} H16 takes the text of the sheet's cells "
        "past 200,000,000 characters (shared string 0 is 15,000,000 characters, used by 14 "
        "cells up to it); shorten the text, or save the scenarios as CSV",
    }[case]
    assert done.stderr.splitlines() == [expected]
    assert "--max-rows" not in done.stderr  # an option that bounds nothing here


def test_p20_the_tools_own_workbook_of_a_large_run_runs_again(tmp_path, monkeypatch):
    source = write_scenarios(tmp_path, "name,op,B,D,F,hardware\nsweep,matmul,1..20000,64,64,v5e\n")
    first = pipeline.analyze(source)
    book = first.write(tmp_path / "out", plots=False, report=False).folder / "workbook.xlsx"
    # the Results sheet of 20,000 rows unpacks to some 40 MB; the parts read, to under 100 KB
    monkeypatch.setattr(xlsx_package, "MAX_UNPACKED", 5 << 20)
    again = pipeline.analyze(book)
    assert again.source == f"{book}[Inputs]"
    assert len(again.results) == 20_000 and not again.problem_list


def test_p21_the_summary_line_names_the_sheet_read_and_a_hidden_one_is_warned_of(tmp_path):
    body = cells_xml([HEADER, ROW])
    path = raw_workbook(
        tmp_path / "s.xlsx", {"Plan": body, "Scenarios": body}, hidden=("Scenarios",)
    )
    done = invoke("run", path, "-o", tmp_path / "out", *FAST)
    assert done.exit_code == 0, done.output
    assert done.stdout.startswith(f"{path}[Scenarios]: 1 scenario (")
    assert done.stderr.splitlines() == [
        f"warning: {path}[Scenarios]: the sheet read, 'Scenarios', is hidden in the workbook "
        "(a sheet named 'Scenarios' is read first, then 'Inputs', then the first sheet); the "
        "visible ones are 'Plan': give --sheet NAME to read another"
    ]
    checked = invoke("validate", path)
    assert checked.stdout == f"{path}[Scenarios]: 1 row read, 1 valid scenario, 0 rejected rows\n"


def test_p26_excels_lock_file_is_skipped_by_a_glob_and_named_when_given(tmp_path):
    plan = raw_workbook(tmp_path / "plan.xlsx", {"Scenarios": cells_xml([HEADER, ROW])})
    lock = tmp_path / "~$plan.xlsx"
    lock.write_bytes(b"\x05alice" + b" " * 49 + b"\x05\x00a\x00l\x00i\x00c\x00e\x00" + bytes(100))
    done = invoke("validate", str(tmp_path / "*.xlsx"))
    assert done.exit_code == 0, done.output
    assert done.stdout == f"{plan}[Scenarios]: 1 row read, 1 valid scenario, 0 rejected rows\n"
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "~$x.xlsx").write_bytes(lock.read_bytes())
    refused = invoke("validate", str(alone / "*.xlsx"))
    assert refused.exit_code == 2
    assert (
        "no file matches" in refused.stderr
        and "but Excel's lock files (~$*, skipped)" in refused.stderr
    )
    named = invoke("validate", lock)
    assert named.exit_code == 1
    assert named.stderr == (
        f"Error: {lock}: Excel's lock file for 'plan.xlsx' (Excel writes it while the workbook "
        "is open; it holds no cells): give 'plan.xlsx'\n"
    )


def test_p27_a_stray_cell_is_named_by_its_spreadsheet_letter(tmp_path):
    rows = [HEADER, ROW, ["b", *ROW[1:], None, "left here"]]  # H empty, I3 holds a value
    path = raw_workbook(tmp_path / "s.xlsx", {"Scenarios": cells_xml(rows)})
    with pytest.raises(ScenarioFileError) as err:
        pipeline.analyze(path)
    assert str(err.value) == (
        f"{path}[Scenarios]:3: cell I3 holds 'left here', but its column has no header (I1 is "
        "empty): name the column in I1, or clear the cell"
    )


def test_p28_a_missing_shared_string_names_the_cell(tmp_path):
    rows = [HEADER, [*ROW[:5], b'<c r="F2" t="s"><v>7</v></c>', 1]]
    path = raw_workbook(tmp_path / "s.xlsx", {"Scenarios": cells_xml(rows)}, strings=["v5e"])
    with pytest.raises(ScenarioFileError) as err:
        pipeline.analyze(path)
    assert str(err.value) == (
        f"{path}[Scenarios]: cell F2 uses shared string 7, but the workbook has 1; the file "
        "is damaged; open it in Excel or LibreOffice and save it again"
    )


def test_p29_a_renamed_inputs_sheet_names_the_sheets_present(tmp_path):
    source = write_scenarios(tmp_path, "name,op,B,D,F,hardware\nq,matmul,8,64,64,v5e\n")
    book = pipeline.analyze(source).write(tmp_path / "out", plots=False, report=False).folder
    import openpyxl

    workbook = openpyxl.load_workbook(book / "workbook.xlsx")
    workbook["Inputs"].title = "Inputs (old)"
    workbook.save(tmp_path / "renamed.xlsx")
    with pytest.raises(ScenarioFileError) as err:
        pipeline.analyze(tmp_path / "renamed.xlsx")
    sheets = "'Answer', 'Summary', 'Results', 'Hardware', 'Inputs (old)'"
    assert str(err.value) == (
        f"{tmp_path / 'renamed.xlsx'}[Answer]: no sheet is named 'Scenarios' or 'Inputs', so "
        "the first sheet, 'Answer', was read, and its first row is not a scenario header "
        f"(name, op, hardware, ...); the workbook has {sheets}: give the scenario sheet with "
        "--sheet NAME"
    )
    assert "delete rows" not in str(err.value)
