"""The workbook's Models sheet (render.workbook.steps), read back with openpyxl against the
results' total rows: right after Answer (before Fleet), a line per step, slowest first, its
numbers as numbers with their formats; names stay text; the cap and the sample are said; no
sheet without steps; and a workbook with it runs again from its Inputs sheet, which holds
the transformer rows as written."""

from __future__ import annotations

import openpyxl
import pytest

import pipeline
from pipeline.model.ops import TRANSFORMER as STEP_OP
from pipeline.render.format import EXCEL, excel_seconds
from pipeline.render.text.steps_table import models_table
from pipeline.render.workbook.cells import FittedSheet
from pipeline.render.workbook.steps import COLUMNS, HEADER_ROW, SHEET, write_models
from pipeline.render.workbook.styles import BOUND_COLOURS, Styles
from pipeline.render.workbook.xlsx_backend import rx
from tests.helpers import ROOT, analyze_file, analyze_rows, sheet_text, workbook_of

MODELS = ROOT / "scenarios" / "models.csv"
HEADERS = [h for h, *_ in COLUMNS]
STEP = {"op": "transformer", "model": "llama3-8b", "hardware": "h100", "B": 8, "T": 1, "S": 1024}


@pytest.fixture(scope="module")
def models():
    return analyze_file(MODELS)


@pytest.fixture(scope="module")
def sheets(models, tmp_path_factory):
    wb, _ = workbook_of(models, tmp_path_factory.mktemp("models"))
    return wb


def lines(sheet) -> list[dict]:
    """The sheet's lines below its header, each {header: cell}."""
    rows = list(sheet.iter_rows(min_row=HEADER_ROW + 1))
    assert [c.value for c in rows[0]] == HEADERS
    return [dict(zip(HEADERS, cells, strict=True)) for cells in rows[1:] if cells[0].value]


def test_the_models_sheet_follows_the_answer(sheets):
    assert sheets.sheetnames[:3] == ["Answer", SHEET, "Summary"]
    assert sheets.active.title == "Answer"


def test_a_line_per_step_with_the_total_rows_numbers(sheets, models):
    results = models.results
    steps = results[results["op"] == STEP_OP].sort_values("t_lower", ascending=False, kind="stable")
    found = lines(sheets[SHEET])
    assert [line["step"].value for line in found] == steps["name"].tolist()
    best = models.summary.steps.set_index("name")["best"]
    assert [line["best"].value for line in found] == [
        "best" if best[n] else None for n in steps["name"]
    ]
    dtypes = {line["dtype"].value for line in found}
    assert dtypes == {"bf16", "bf16, KV fp8"}  # llama3_70b_decode_v5e: its KV cache in fp8
    for line, (_, step) in zip(found, steps.iterrows(), strict=True):
        for header, column in (("time per step", "t_lower"), ("time per token", "time_per_token")):
            cell = line[header]
            assert cell.data_type == "n" and cell.value == step[column]
            assert cell.number_format == excel_seconds(step[column])
        assert line["tokens/s"].value == step["tokens_per_second"]
        assert line["tokens/s"].number_format == EXCEL["count"]
        for header, column in (("weights", "weight_bytes"), ("KV cache", "kv_cache_bytes"),
                               ("footprint per chip", "memory_footprint"),
                               ("HBM per chip", "hbm_capacity")):  # fmt: skip
            assert line[header].value == step[column]
            assert line[header].number_format == EXCEL["size"]
        share = line["bound share"]
        assert share.value == step[f"{step['bound']}_share"]
        assert share.number_format == EXCEL["percent"]
        bound = line["bound"]
        assert bound.value == step["bound"]
        assert bound.fill.fgColor.rgb[-6:] == BOUND_COLOURS[step["bound"]][0].lstrip("#").upper()
        assert line["fits in HBM"].value == ("yes" if step["fits"] else "no")
        assert line["max batch"].value == step["max_batch"]
        assert (line["B"].value, line["T"].value, line["S"].value) == (
            step["B"], step["T"], step["S"]
        )  # fmt: skip
    tops = [(r["top_op"], r["top_share"]) for r in models_table(models)["rows"]]
    assert [(line["most time"].value, line["its share"].value) for line in found] == tops


def test_names_stay_text(tmp_path):
    a = analyze_rows([{"name": "=cmd|' /C calc'!A0", **STEP}, {"name": "<script>", **STEP}])
    wb, own = workbook_of(a, tmp_path)
    assert own == []
    names = [line["step"] for line in lines(wb[SHEET])]
    assert [c.value for c in names] == ["=cmd|' /C calc'!A0", "<script>"]
    assert all(c.data_type == "s" and c.quotePrefix for c in names)


def test_the_cap_is_said(tmp_path, models):
    path = tmp_path / "capped.xlsx"
    book = rx.Workbook(str(path))
    styles = Styles()
    write_models(FittedSheet(book.add_worksheet(SHEET)), styles, models_table(models, limit=2))
    book.close()
    wb = openpyxl.load_workbook(path)
    assert (
        "This sheet shows the 2 slowest of 20 steps, with each fleet point's best; "
        "results.csv has every step (op transformer or group), and --models-rows lists more."
        in sheet_text(wb[SHEET])
    )
    assert len(lines(wb[SHEET])) == 2


def test_no_models_sheet_without_steps(book, tmp_path):
    wb, _ = workbook_of(book, tmp_path)
    assert SHEET not in wb.sheetnames


def test_a_workbook_with_a_models_sheet_runs_again_from_its_source_rows(models, tmp_path):
    models.write(tmp_path / "models", plots=False, report=False)
    path = tmp_path / "models" / "workbook.xlsx"
    inputs = openpyxl.load_workbook(path)["Inputs"]
    written = [r for r in inputs.iter_rows(min_row=2, values_only=True) if r[0] is not None]
    assert len(written) == models.summary.source_rows == 11  # the rows as written, not their ops
    assert {r[2] for r in written} == {STEP_OP}
    again = pipeline.analyze(path)
    assert again.results["name"].tolist() == models.results["name"].tolist()
    assert again.results["t_lower"].tolist() == models.results["t_lower"].tolist()
    assert models_table(again)["rows"] == models_table(models)["rows"]


def test_the_models_sheet_comes_before_the_fleet_sheet(tmp_path):
    a = analyze_rows([{"name": "fleet", **STEP, "hardware": "h100|b200"}])
    assert not a.summary.fleet.empty
    wb, _ = workbook_of(a, tmp_path)
    assert wb.sheetnames[:3] == ["Answer", SHEET, "Fleet"]
    assert [line["hardware"].value for line in lines(wb[SHEET])] == [
        "h100",
        "b200",
    ]  # slowest first
