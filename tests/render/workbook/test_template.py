"""The starter workbook (`pipeline template`), read back with openpyxl: sheets, header, the
example rows, drop-downs, header notes, number formats, the Hardware sheet, overwriting, the
results of running it unedited, and LibreOffice opening it."""

from __future__ import annotations

import csv
import re
import shutil
import subprocess

import openpyxl
import pandas as pd
import pytest

import pipeline
from pipeline.catalogs.hardware import COLUMNS as CATALOG_COLUMNS
from pipeline.catalogs.hardware import load_catalog
from pipeline.errors import OutputError
from pipeline.render.workbook import template as tw
from pipeline.render.workbook.template_notes import notes
from pipeline.scenarios.header import KNOWN
from tests.helpers import BOOK_SCENARIOS, ROOT


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    return pipeline.write_template(tmp_path_factory.mktemp("template") / "scenarios.xlsx")


@pytest.fixture(scope="module")
def book(template):
    return openpyxl.load_workbook(template)


def book_rows() -> tuple[list[str], list[list[str]]]:
    lines = [ln for ln in BOOK_SCENARIOS.read_text().splitlines() if not ln.startswith("#")]
    header, *rows = list(csv.reader(lines))
    return header, rows


def test_shipped_examples_are_the_book_scenarios():
    # the package's copy (a wheel has no scenarios/ folder) must not drift from the file
    assert (ROOT / "pipeline" / "data" / tw.EXAMPLES).read_bytes() == BOOK_SCENARIOS.read_bytes()


def test_sheets_and_header(book):
    assert book.sheetnames == ["Scenarios", "Hardware", "Lists"]
    header = [c.value for c in book["Scenarios"][1]]
    assert header[:6] == ["name", "op", "B", "D", "F", "N"] and header[-1] == "notes"
    assert sorted(header) == sorted({*KNOWN, "B", "D", "F", "N"})
    assert book["Scenarios"].freeze_panes == "B2"


def test_rows_are_the_book_scenarios_cells(book):
    sheet = book["Scenarios"]
    header = [c.value for c in sheet[1]]
    names, rows = book_rows()
    assert sheet.max_row == len(rows) + 1
    for r, row in enumerate(rows, start=2):
        for name, text in zip(names, row, strict=True):
            cell = sheet.cell(r, header.index(name) + 1)
            if text == "":
                assert cell.value is None
            elif (
                name not in tw.TEXT_COLUMNS and re.fullmatch(r"[\d.e+]+", text) and ".." not in text
            ):
                assert cell.data_type == "n" and cell.value == float(text), (r, name)
            else:  # names, notes, sweeps: text cells, never formulas
                assert cell.data_type == "s" and cell.value == text, (r, name)
                assert cell.quotePrefix, (r, name)
    sweep = sheet.cell(11, header.index("B") + 1)
    assert sweep.value == "1..512" and sweep.alignment.horizontal == "right"


def test_number_formats_keep_integers(book):
    sheet = book["Scenarios"]
    header = [c.value for c in sheet[1]]
    column = {name: openpyxl.utils.get_column_letter(i + 1) for i, name in enumerate(header)}
    # q1_int8_book_constants: peak_flops 3.94e14 shows as its 15 digits, B as 256
    peak = sheet[f"{column['peak_flops']}8"]
    assert peak.value == 3.94e14 and peak.number_format == "0"
    assert sheet.column_dimensions[column["peak_flops"]].width >= len("394000000000000")
    assert sheet[f"{column['B']}8"].number_format == "0"
    for name in ("compute_efficiency", "measured_seconds"):  # fractions as typed
        assert sheet[f"{column[name]}2"].number_format == "General"


def test_serve_and_train_columns_keep_what_is_typed(book):
    # a target of 0.03 s is not shown as 0, a parallel layout stays text; counts as integers
    sheet = book["Scenarios"]
    header = [c.value for c in sheet[1]]
    formats = {}  # openpyxl keeps a run of alike columns under its first letter
    for dimension in sheet.column_dimensions.values():
        for col in range(dimension.min, dimension.max + 1):
            formats[header[col - 1]] = dimension
    for name in ("ttft_target", "tpot_target", "acceptance"):
        assert formats[name].number_format == "General", name
    for name in ("isl", "osl", "draft_tokens", "tokens", "train_tokens", "microbatches"):
        assert formats[name].number_format == "0", name
    for name in ("draft_model", "parallel", "mesh_axes", "remat", "optimizer"):
        assert name in tw.TEXT_COLUMNS and formats[name].number_format == "General", name


def test_drop_downs(book):
    sheet, lists = book["Scenarios"], book["Lists"]
    header = [c.value for c in sheet[1]]
    found = {}
    for rule in sheet.data_validations.dataValidation:
        (cells,) = str(rule.sqref).split()
        first, last = cells.split(":")
        col = re.match(r"[A-Z]+", first)[0]
        assert first == f"{col}2" and last == f"{col}{tw.VALIDATED_ROWS + 1}"
        assert rule.type == "list" and rule.formula1.startswith("Lists!")
        values = [
            c.value for row in lists[rule.formula1.split("!")[1].replace("$", "")] for c in row
        ]
        found[header[openpyxl.utils.column_index_from_string(col) - 1]] = (values, rule.errorStyle)
    dtypes = ["fp32", "tf32", "bf16", "fp16", "fp8", "fp8_e4m3", "fp8_e5m2", "int8", "int4", "fp4"]
    dtypes += ["float32", "bfloat16", "float16", "half", "float"]
    assert found == {
        "op": (
            ["matmul", "dot", "batched_matmul", "custom", "all_gather", "reduce_scatter",
             "all_reduce", "all_to_all", "transformer", "serve", "train"],
            "information",  # an einsum is typed, and kept
        ),
        "hardware": (found["hardware"][0], "warning"),
        **{c: (dtypes, "warning") for c in ("dtype", "x_dtype", "y_dtype", "out_dtype", "compute_dtype")},
        "link": (["ici", "nvlink", "xgmi", "roce", "pcie", "dcn"], "warning"),
        "shard": (["B", "D", "F", "N"], "warning"),
    }  # fmt: skip
    chips = load_catalog([]).chips
    names = {*chips.index, *(a for s in chips["aliases"] for a in s.split(";"))}
    assert set(found["hardware"][0]) == names and {"h100", "v5e", "tpu-v5e"} <= names


def test_notes_on_every_header_cell(book):
    for cell in book["Scenarios"][1]:
        assert cell.comment is not None, cell.value
        text = cell.comment.text
        assert text.endswith(tw.note(cell.value)) and "Unit: " in text and "Default: " in text
    assert "Default: bf16" in tw.note("dtype") and "Unit: FLOP/s" in tw.note("peak_flops")
    assert "1..4096*2" in tw.note("B") and "Unit: elements" in tw.note("B")


def test_every_documented_column_has_its_own_note():
    documented = re.findall(r"^\| `([a-z_]+)`", (ROOT / "docs" / "input.md").read_text(), re.M)
    documented += ["x_dtype", "y_dtype", "out_dtype", "hbm_capacity", "hbm_efficiency"]
    documented += ["network_efficiency"]  # documented several to a table row
    assert set(documented) <= set(notes()) and set(notes()) == set(KNOWN)


def test_hardware_sheet_is_the_catalog(book):
    sheet = book["Hardware"]  # a note on row 1 (for reference only), the table from row 3
    header = [c.value for c in sheet[3]]
    assert set(header) == set(CATALOG_COLUMNS) and header[-1] == "source"
    catalog = pipeline.catalog()
    names = [sheet.cell(r, 1).value for r in range(4, sheet.max_row + 1)]
    assert names == list(catalog.index)
    peak = sheet.cell(names.index("h100") + 4, header.index("peak_bf16") + 1)
    assert peak.value == catalog.loc["h100", "peak_bf16"] and "TFLOP/s" in peak.number_format
    sources = [sheet.cell(r, header.index("source") + 1).value for r in range(4, sheet.max_row + 1)]
    assert sources == list(catalog["source"])


def test_a_hardware_file_adds_its_chips(tmp_path):
    chip = tmp_path / "mine.csv"
    chip.write_text(
        "name,aliases,peak_bf16,hbm_bandwidth,hbm_capacity,source\n"
        'mychip,mc,1e15,2e12,8e10,"=HYPERLINK(""http://x.example"",""y"")"\n'
    )
    path = pipeline.write_template(tmp_path / "t.xlsx", hardware=chip)
    book = openpyxl.load_workbook(path)
    names = [c.value for c in book["Hardware"]["A"]]
    assert "mychip" in names
    header = [c.value for c in book["Hardware"][3]]
    source = book["Hardware"].cell(names.index("mychip") + 1, header.index("source") + 1)
    assert source.data_type == "s" and source.value.startswith("=HYPERLINK(")  # text, not a formula
    assert {"mychip", "mc"} <= {c.value for c in book["Lists"]["B"]}


def test_refuses_to_overwrite_unless_forced(tmp_path):
    path = tmp_path / "scenarios.xlsx"
    path.write_bytes(b"mine")
    with pytest.raises(OutputError) as err:
        pipeline.write_template(path)
    assert str(err.value) == (
        f"{path} already exists; give another name, or pass --force to replace it"
    )
    assert path.read_bytes() == b"mine"
    pipeline.write_template(path, force=True)
    assert openpyxl.load_workbook(path).sheetnames[0] == "Scenarios"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["scenarios.xlsx"]  # no temp left


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("t.csv", "t.csv: a template is an Excel workbook; name it *.xlsx"),
        ("missing/t.xlsx", "folder {tmp}/missing does not exist; create it first"),
    ],
)
def test_refused_paths(tmp_path, name, message):
    with pytest.raises(OutputError) as err:
        pipeline.write_template(tmp_path / name)
    assert str(err.value).endswith(message.format(tmp=tmp_path))


def test_cell_values():
    assert tw.cell_value("B", "4096") == 4096 and isinstance(tw.cell_value("B", "4096"), int)
    assert tw.cell_value("flops", "1e12") == 10**12
    assert tw.cell_value("compute_efficiency", "0.5") == 0.5
    assert tw.cell_value("B", "1..512*2") == "1..512*2"
    assert tw.cell_value("name", "4096") == "4096"  # a text column keeps digits as text
    assert tw.cell_value("notes", "=1+1") == "=1+1"


def test_unedited_template_gives_the_book_results(template):
    got = pipeline.analyze(template).results
    want = pipeline.analyze(BOOK_SCENARIOS).results
    assert list(got["series"].unique()) == list(want["series"].unique())
    pd.testing.assert_frame_equal(got, want)


@pytest.mark.skipif(shutil.which("soffice") is None, reason="LibreOffice (soffice) is absent")
def test_libreoffice_opens_it(template, tmp_path):
    # converting to .xlsx again makes LibreOffice parse every part, the drop-downs included
    home = tmp_path / "home"  # a profile of its own: no clash with a running LibreOffice
    done = subprocess.run(
        ["soffice", f"-env:UserInstallation=file://{home}", "--headless", "--convert-to",
         "xlsx", "--outdir", str(tmp_path / "out"), str(template)],
        capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    again = openpyxl.load_workbook(tmp_path / "out" / "scenarios.xlsx")
    assert again.sheetnames == ["Scenarios", "Hardware", "Lists"]
    sheet = again["Scenarios"]
    assert sheet["A2"].value == "intro_h100_1e12_flops" and sheet["C11"].value == "1..512"
    # LibreOffice saves a drop-down over the rows it keeps (1014 of them here), not 10,000
    lists = {
        str(rule.sqref).split(":")[0]: rule.formula1
        for rule in sheet.data_validations.dataValidation
    }
    assert (
        lists["B2"] == "Lists!$A$2:$A$12"
        and lists["G2"].startswith("Lists!$B$2")
        and len(lists) == 9
    )
    assert sheet["B1"].comment is not None
