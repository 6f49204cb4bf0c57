"""The workbook writer on every platform (render.workbook.xlsx_backend): q1-q5's workbook and the
starter workbook, written by rvgsrust-xlsxwriter and by XlsxWriter (render.workbook.xlsx_adapter), each
in a subprocess of its own (PIPELINE_XLSX_WRITER), are the same in every sheet, cell value and
format, column width, row height, merged range, freeze pane, autofilter, data validation,
conditional format, note, sheet protection, print setup and image, read back with openpyxl
(and, for the two things openpyxl does not read, ignored errors and note sizes, from the
sheets' XML); the comparison catches each format or setting the adapter could drop; cells at
the edges come out the same; and the choice of writer and its errors.

Left out of the comparison, as no part of what the writer was asked to write:
docProps/core.xml's created and modified times (when the file was written) and the run's start
time on the Summary (two runs start at different seconds). Data validations are keyed by their
cells, not by their place in the file (Excel gives that order no meaning; the Rust writer
sorts them, XlsxWriter keeps the order they were added in). A number is compared as a number
(XlsxWriter's 1 and the Rust writer's 1.0 are the same double). Not compared, as openpyxl does
not read it: the Rust writer's bold author line atop a note (XlsxWriter notes are plain)."""

from __future__ import annotations

import importlib.util
import math
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import openpyxl
import pyarrow as pa
import pytest

import pipeline
from pipeline.errors import OutputError
from pipeline.render.workbook import xlsx_adapter, xlsx_backend
from pipeline.render.workbook.xlsx_backend import ENV
from tests.helpers import (
    BOOK_SCENARIOS,
    MIX,
    ROOT,
    analyze_rows,
    sheet_cells,
    sheet_images,
    workbook_of,
)

RUST = importlib.util.find_spec("rvgsrust_xlsxwriter") is not None
needs_rust = pytest.mark.skipif(
    not RUST, reason="rvgsrust-xlsxwriter is not installed here: no second writer to compare"
)


# ------------------------------------------------------- a workbook taken apart to compare

PROPERTIES = ("title", "subject", "creator", "keywords", "description", "lastModifiedBy",
              "category", "contentStatus", "language", "identifier", "version")  # fmt: skip


def _color(color) -> str | None:
    if color is None:
        return None
    return f"{color.type}:{color.rgb if color.type == 'rgb' else color.value}"


def style(obj) -> tuple:
    """What a cell's (or a column's) format does: number format, font, fill, alignment,
    borders, protection and the quote prefix."""
    font, fill, align, border = obj.font, obj.fill, obj.alignment, obj.border
    return (
        ("number", obj.number_format),
        ("font", font.name, font.sz, font.b, font.i, font.u, font.strike, _color(font.color)),
        ("fill", fill.fill_type, _color(fill.fgColor), _color(fill.bgColor)),
        ("align", align.horizontal, align.vertical, align.wrap_text, align.indent,
         align.shrink_to_fit, align.text_rotation),
        ("border", *((s, getattr(border, s).style, _color(getattr(border, s).color))
                     for s in ("left", "right", "top", "bottom", "diagonal"))),
        ("protection", obj.protection.locked, obj.protection.hidden),
        ("quote", obj.quotePrefix),
    )  # fmt: skip


def _dxf(dxf) -> tuple | None:
    if dxf is None:
        return None
    font = dxf.font
    return (
        font and (font.b, font.i, _color(font.color)),
        dxf.fill and (dxf.fill.fill_type, _color(dxf.fill.fgColor), _color(dxf.fill.bgColor)),
        dxf.numFmt and dxf.numFmt.formatCode,
        dxf.border is not None,
    )


def _held(ws) -> list:
    """The cells of a sheet with a value or a style, row by row (which cells the file holds,
    blank ones too, is compared from its XML: parts())."""
    return [
        cell for row in ws.iter_rows() for cell in row if cell.value is not None or cell.has_style
    ]


def _sheet(ws) -> dict[str, object]:
    parts: dict[str, object] = {}
    for cell in _held(ws):
        parts[f"cell {cell.coordinate}"] = (cell.data_type, cell.value, style(cell))
    for letter, dim in sorted(ws.column_dimensions.items()):
        parts[f"column {letter}"] = (dim.min, dim.max, dim.width, dim.hidden, style(dim))
    for row, dim in sorted(ws.row_dimensions.items()):
        parts[f"row {row}"] = (dim.ht, dim.customHeight, dim.hidden)
    parts["merged"] = sorted(str(r) for r in ws.merged_cells.ranges)
    parts["freeze panes"] = ws.freeze_panes
    view = ws.sheet_view
    parts["view"] = (view.tabSelected, view.showGridLines, view.zoomScale,
                     [(s.activeCell, s.sqref, s.pane) for s in view.selection])  # fmt: skip
    parts["autofilter"] = ws.auto_filter.ref
    for dv in ws.data_validations.dataValidation:
        parts[f"validation {dv.sqref}"] = (
            dv.type, dv.formula1, dv.formula2, dv.operator, dv.errorStyle,
            dv.allow_blank, dv.showDropDown, dv.showInputMessage, dv.showErrorMessage,
            dv.promptTitle, dv.prompt, dv.errorTitle, dv.error,
        )  # fmt: skip
    for cf in ws.conditional_formatting:
        parts[f"conditional {cf.sqref}"] = [
            (r.type, r.operator, r.formula, r.stopIfTrue, r.priority, _dxf(r.dxf)) for r in cf.rules
        ]
    for cell in _held(ws):
        if cell.comment is not None:
            parts[f"note {cell.coordinate}"] = (cell.comment.text, cell.comment.author)
    p = ws.protection
    parts["protection"] = {k: getattr(p, k) for k in (
        "sheet", "objects", "scenarios", "formatCells", "formatColumns", "formatRows",
        "insertColumns", "insertRows", "insertHyperlinks", "deleteColumns", "deleteRows",
        "selectLockedCells", "selectUnlockedCells", "sort", "autoFilter", "pivotTables",
        "password")}  # fmt: skip
    setup = ws.page_setup
    parts["print"] = {
        "orientation": setup.orientation,
        "paper": setup.paperSize,
        "dpi": (setup.horizontalDpi, setup.verticalDpi),
        "scale": setup.scale,
        "fit": (ws.sheet_properties.pageSetUpPr and ws.sheet_properties.pageSetUpPr.fitToPage,
                setup.fitToWidth, setup.fitToHeight),
        "gridlines": ws.print_options.gridLines,
        "headings": ws.print_options.headings,
        "title rows": ws.print_title_rows,
        "title columns": ws.print_title_cols,
        "area": ws.print_area,
        "margins": tuple(getattr(ws.page_margins, k) for k in
                         ("left", "right", "top", "bottom", "header", "footer")),
        "header": [str(getattr(ws.oddHeader, s).text) for s in ("left", "center", "right")],
        "footer": [str(getattr(ws.oddFooter, s).text) for s in ("left", "center", "right")],
    }  # fmt: skip
    return parts


def _raw(path: Path) -> dict[str, object]:
    """From the XML: each sheet's ignored errors and each note's box (VML), by sheet file."""
    parts: dict[str, object] = {}
    with zipfile.ZipFile(path) as z:
        for name in sorted(z.namelist()):
            text = z.read(name).decode("utf-8", "replace")
            if name.startswith("xl/worksheets/sheet"):
                parts[f"{name} ignored errors"] = sorted(re.findall(r"<ignoredError [^>]*>", text))
            elif name.startswith("xl/drawings/vmlDrawing"):
                # the note's size and place: the anchor (columns, rows, offsets) and the style
                parts[f"{name} notes"] = [
                    (re.sub(r"z-index:\d+;", "", style), anchor)
                    for style, anchor in re.findall(
                        r'<v:shape [^>]*style="([^"]*)".*?<x:Anchor>\s*([^<]*?)\s*</x:Anchor>',
                        text,
                        re.S,
                    )
                ]
    return parts


def parts(path: Path) -> dict[str, object]:
    """Everything compared, by a name saying where it is."""
    wb = openpyxl.load_workbook(path)
    out: dict[str, object] = {"sheets": wb.sheetnames}
    for key in PROPERTIES:
        out[f"property {key}"] = getattr(wb.properties, key)
    out["defined names"] = sorted(
        (name, str(d.value), d.localSheetId, d.hidden) for name, d in wb.defined_names.items()
    )
    for ws in wb.worksheets:
        for key, value in _sheet(ws).items():
            out[f"{ws.title}: {key}"] = value
        out[f"{ws.title}: cells held"] = sheet_cells(path, ws.title)
        for i, image in enumerate(sheet_images(path, ws.title)):  # anchor, cells, SHA-256
            out[f"{ws.title}: image {i}"] = image
        out[f"{ws.title}: local names"] = sorted(
            (name, str(d.value), d.hidden) for name, d in ws.defined_names.items()
        )
    out.update(_raw(path))
    return out


def differing(a: dict[str, object], b: dict[str, object]) -> list[str]:
    """The names of the parts that differ between two workbooks."""
    return [key for key in sorted(set(a) | set(b)) if a.get(key, "absent") != b.get(key, "absent")]


def differences(a: dict[str, object], b: dict[str, object], limit: int = 20) -> list[str]:
    """What differs between two workbooks' parts, one line each (at most `limit`)."""
    lines = [f"{key}: {a.get(key, '(absent)')!r} != {b.get(key, '(absent)')!r}"
             for key in differing(a, b)]  # fmt: skip
    return lines[:limit] + ([f"... and {len(lines) - limit} more"] if len(lines) > limit else [])


# -------------------------------------------------------------- the same workbook both ways

WRITERS = {"rvgsrust": "rvgsrust_xlsxwriter", "xlsxwriter": "pipeline.render.workbook.xlsx_adapter"}
# the command line, noting in a file which writer module each process (workers too) used
SPY = """
import os, sys
from pipeline.render.workbook import xlsx_backend
chosen = xlsx_backend._chosen
def spy():
    name, module = chosen()
    with open(os.environ["WRITER_LOG"], "a") as log:
        log.write(module.__name__ + "\\n")
    return name, module
xlsx_backend._chosen = spy
from pipeline.cli import cli
sys.exit(cli.main(sys.argv[1:], standalone_mode=False))
"""


def _written_by(writer: str, folder: Path, *args: str) -> None:
    """`pipeline ARGS` in a subprocess with PIPELINE_XLSX_WRITER=writer; checks it wrote with
    that writer and no other."""
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "writer.log"
    env = {**os.environ, ENV: writer, "WRITER_LOG": str(log)}
    done = subprocess.run([sys.executable, "-c", SPY, *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert set(log.read_text().split()) == {WRITERS[writer]}


def _started_blank(found: dict[str, object]) -> dict[str, object]:
    """The run's start time on the Summary (beside "Started") left out: two runs start at
    different seconds; the writer has nothing to do with it."""
    for key, value in list(found.items()):
        if key.startswith("Summary: cell A") and value[1] == "Started":
            right = "Summary: cell B" + key.removeprefix("Summary: cell A")
            found[right] = found[right][0], "(the run's start)", found[right][2]
            return found
    raise AssertionError("no Started line on the Summary sheet")


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """q1-q5 run by `pipeline run` (charts included) with each writer: its workbook."""
    out = tmp_path_factory.mktemp("runs")
    books = {}
    for writer in WRITERS:
        _written_by(writer, out / writer, "run", str(BOOK_SCENARIOS), "-o", str(out / writer),
                    "--no-report", "-q")  # fmt: skip
        books[writer] = out / writer / BOOK_SCENARIOS.stem / "workbook.xlsx"
    return books


@needs_rust
def test_q1_q5_workbook_is_the_same_with_either_writer(runs):
    rust, python = (_started_blank(parts(runs[w])) for w in WRITERS)
    assert differences(rust, python) == []
    sheets = rust["sheets"]
    assert sheets == ["Answer", "Summary", "Results", "Hardware", "Inputs", "Charts"]
    # every kind of thing compared is there to compare
    for kind in ("cell", "column", "row", "conditional", "image"):
        assert any(k.startswith(f"Results: {kind}") or k.startswith(f"Charts: {kind}")
                   or k.startswith(f"Hardware: {kind}") for k in rust), kind  # fmt: skip
    assert (
        rust["Answer: merged"] == ["A2:L2"] and rust["Results: freeze panes"] == "B2"
    )  # +dtype, chips
    assert rust["Results: autofilter"] == "A1:AV1036"  # tdp and energy after the efficiencies
    assert rust["Results: print"]["area"] == "'Results'!$A$1:$G$501"


@needs_rust
def test_starter_workbook_is_the_same_with_either_writer(tmp_path):
    books = {}
    for writer in WRITERS:
        books[writer] = tmp_path / writer / "scenarios.xlsx"
        _written_by(writer, tmp_path / writer, "template", str(books[writer]))
    rust, python = (parts(books[w]) for w in WRITERS)
    assert differences(rust, python) == []
    assert sum(k.startswith("Scenarios: validation") for k in rust) == 9
    headers = [k for k in rust if re.fullmatch(r"Scenarios: cell [A-Z]+1", k)]
    assert len(headers) > 20
    assert sorted(k for k in rust if k.startswith("Scenarios: note")) == sorted(
        k.replace("cell", "note") for k in headers
    )
    assert (
        rust["Hardware: protection"]["sheet"]
        and rust["Hardware: protection"]["autoFilter"] is False
    )


# ------------------------------------------------- the comparison catches what goes missing


@pytest.fixture
def adapter(monkeypatch):
    """The XlsxWriter adapter as the writer of this process."""
    monkeypatch.setattr(xlsx_backend, "_chosen", lambda: ("xlsxwriter", xlsx_adapter))


def _run_book(analysis, folder: Path) -> dict[str, object]:
    folder.mkdir()
    workbook_of(analysis, folder)
    return parts(folder / "workbook.xlsx")


def _template(folder: Path) -> dict[str, object]:
    folder.mkdir()
    return parts(pipeline.write_template(folder / "scenarios.xlsx"))


def _dropped(self, *args, **kwargs):
    return self


A, W = xlsx_adapter.Format, xlsx_adapter.Worksheet
# (what the adapter drops, a part of the workbook that must then differ)
RUN_DROPS = [
    ((A, "set_bold"), "Results: cell A1"),
    ((A, "set_font_size"), "Summary: cell A1"),
    ((A, "set_num_format"), "Results: cell D2"),
    ((A, "set_background_color"), "Summary: cell"),
    ((A, "set_font_color"), "Summary: cell"),
    ((A, "set_quote_prefix"), "Results: cell A2"),
    ((A, "set_border_bottom"), "Results: cell A1"),
    ((A, "set_text_wrap"), "Answer: cell A2"),
    ((A, "set_vertical_align"), "Answer: cell A2"),
    ((A, "set_indent"), "Answer: cell"),
    ((W, "set_column_format"), "Results: column"),
    ((W, "set_column_width"), "Results: column"),
    ((W, "set_row_height"), "Answer: row 2"),
    ((W, "merge_range"), "Answer: merged"),
    ((W, "freeze_panes"), "Results: freeze panes"),
    ((W, "autofilter"), "Results: autofilter"),
    ((W, "add_conditional_format"), "Results: conditional"),
    ((W, "set_landscape"), "Results: print"),
    ((W, "set_print_area"), "Results: print"),
    ((W, "set_repeat_rows"), "Results: print"),
    ((W, "set_print_fit_to_pages"), "Results: print"),
    ((W, "set_footer"), "Results: print"),
    ((W, "ignore_error_range"), "sheet3.xml ignored errors"),
    ((xlsx_adapter.Workbook, "set_properties"), "property title"),
]
TEMPLATE_DROPS = [
    ((W, "add_data_validation"), "Scenarios: validation"),
    ((W, "insert_note"), "Scenarios: note A1"),
    ((xlsx_adapter.Note, "set_width"), "vmlDrawing1.vml notes"),
    ((W, "protect_with_options"), "Hardware: protection"),
]


@pytest.fixture(scope="module")
def small() -> pipeline.Analysis:
    """A few scenarios, each bound, one derated, sweeps: every sheet and format, read fast."""
    tiny = {"name": "=tiny", "op": "matmul", "B": "1", "D": "64", "F": "64", "hardware": "h100"}
    return analyze_rows([*MIX, tiny])


@pytest.fixture(scope="module")
def whole(small, tmp_path_factory) -> dict[str, dict[str, object]]:
    """A run's workbook and the starter workbook as the adapter writes them, whole."""
    folder = tmp_path_factory.mktemp("whole")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(xlsx_backend, "_chosen", lambda: ("xlsxwriter", xlsx_adapter))
        return {"run": _run_book(small, folder / "run"), "template": _template(folder / "tpl")}


def test_the_adapter_writes_the_same_workbook_twice(whole, small, adapter, tmp_path):
    """The control for the next test: with nothing dropped, nothing differs."""
    assert differences(whole["run"], _run_book(small, tmp_path / "run")) == []
    assert differences(whole["template"], _template(tmp_path / "tpl")) == []


@pytest.mark.parametrize(("drop", "part"), RUN_DROPS + TEMPLATE_DROPS,
                         ids=[f"{d[1]}" for d, _ in RUN_DROPS + TEMPLATE_DROPS])  # fmt: skip
def test_a_dropped_format_or_setting_is_a_difference(whole, small, adapter, monkeypatch,
                                                     tmp_path, drop, part):  # fmt: skip
    monkeypatch.setattr(*drop, _dropped)
    if (drop, part) in RUN_DROPS:
        full, broken = whole["run"], _run_book(small, tmp_path / "run")
    else:
        full, broken = whole["template"], _template(tmp_path / "tpl")
    found = differing(full, broken)
    assert any(part in key for key in found), found[:10]


# ------------------------------------------------------------- cells at the edges, both ways


def _edges(rx, path: Path) -> None:
    """Values and formats at the edges, through every call shape the workbook modules use."""
    book = rx.Workbook(str(path))
    text = rx.Format()
    text.set_quote_prefix()
    number = rx.Format()
    number.set_num_format("0.000")
    flag = rx.Format()
    flag.set_num_format('"TRUE";"TRUE";"FALSE"')
    flag.set_bold()
    sheet = book.add_worksheet("Cells")
    sheet.set_column_format(0, number)
    sheet.set_column_format(1, text)
    sheet.set_infinity_value("inf")
    values = [0.1 + 0.2, 2**53 + 1, 1e-300, -0.0, math.inf, -math.inf, math.nan, True, None, "",
              "=1+1", "http://x.example", "4096", "a\tb", "é ✓ 𝔘"]  # fmt: skip
    for row, value in enumerate(values):
        sheet.write(row, 0, value)
        sheet.write(row, 1, value, None)
        sheet.write(row, 2, value, flag)
    data = book.add_worksheet("Data", constant_memory=True)
    data.set_column_format(1, number)
    data.set_infinity_value("inf")
    data.set_neg_infinity_value("-inf")
    table = pa.table({
        "text": ["=2+2", "", None, "x" * 100],
        "float": [1 / 3, math.inf, None, -math.inf],
        "int": pa.array([1, None, 2**40, -5], type=pa.int64()),
        "flag": [True, False, None, True],
    })  # fmt: skip
    data.write_dataframe(2, 0, table, header_format=flag, column_formats={"flag": flag})
    data.write(8, 0, "after the table")
    book.close()


@needs_rust
def test_cells_at_the_edges_are_the_same_with_either_writer(tmp_path):
    import rvgsrust_xlsxwriter

    _edges(rvgsrust_xlsxwriter, tmp_path / "rust.xlsx")
    _edges(xlsx_adapter, tmp_path / "python.xlsx")
    rust, python = parts(tmp_path / "rust.xlsx"), parts(tmp_path / "python.xlsx")
    assert differences(rust, python) == []
    assert rust["Cells: cell A1"][1] == 0.1 + 0.2  # every bit of the number
    assert rust["Cells: cell A5"][:2] == ("s", "inf") and rust["Cells: cell A7"][:2] == ("s", "NAN")
    assert rust["Cells: cell B11"][:2] == ("s", "=1+1")  # text, never a formula


# -------------------------------------------------------------------------------- the choice


@pytest.fixture
def choose(monkeypatch):
    """Choose again, under this test's environment; the process's choice is back after."""
    xlsx_backend._chosen.cache_clear()
    yield lambda: xlsx_backend._chosen()
    xlsx_backend._chosen.cache_clear()


def test_the_variable_forces_xlsxwriter(choose, monkeypatch):
    monkeypatch.setenv(ENV, "xlsxwriter")
    assert choose() == ("xlsxwriter", xlsx_adapter)


def test_without_the_rust_wheel_xlsxwriter_is_chosen(choose, monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.setitem(sys.modules, "rvgsrust_xlsxwriter", None)  # import fails
    assert choose() == ("xlsxwriter", xlsx_adapter)


@needs_rust
def test_with_the_rust_wheel_it_is_chosen(choose, monkeypatch):
    monkeypatch.setenv(ENV, "")
    assert choose()[0] == "rvgsrust"


def test_rvgsrust_asked_for_but_missing_is_an_error(choose, monkeypatch):
    monkeypatch.setenv(ENV, "rvgsrust")
    monkeypatch.setitem(sys.modules, "rvgsrust_xlsxwriter", None)
    with pytest.raises(OutputError) as caught:
        choose()
    assert str(caught.value) == (
        "PIPELINE_XLSX_WRITER=rvgsrust, but rvgsrust-xlsxwriter does not import here; install "
        "it (pip install rvgsrust-xlsxwriter) or unset PIPELINE_XLSX_WRITER"
    )


def test_an_unknown_writer_is_an_error_of_the_command(tmp_path):
    env = {**os.environ, ENV: "openpyxl"}
    done = subprocess.run([sys.executable, "-m", "pipeline", "template", str(tmp_path / "t.xlsx")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 1
    assert done.stderr == (
        "Error: PIPELINE_XLSX_WRITER=openpyxl names no workbook writer; set it to xlsxwriter or "
        "rvgsrust, or unset it (the Rust writer where it is installed)\n"
    )
    assert not (tmp_path / "t.xlsx").exists()
