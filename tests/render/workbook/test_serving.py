"""The workbook's Serving sheet (render.workbook.serving), read back with openpyxl against
Summary.serving: right after Answer, the planner's columns first, units in the headers, every
configuration's line with numbers as numbers and their formats, the verdict naming each miss,
cost columns only when priced, text that stays text; no sheet without serve rows."""

from __future__ import annotations

from dataclasses import replace

import openpyxl
import pytest

from pipeline.render.format import excel_seconds
from pipeline.render.workbook.serving import HEADER_ROW, SHEET, USD, write_serving
from tests.helpers import (
    ROOT,
    analyze_file,
    header_and_lines,
    serving_frames,
    sheet_alone,
    sheet_text,
    workbook_of,
)

PRICES = {"h100": 2.5, "h200": 3.5, "b200": 5.0, "mi300x": 3.0}
FIRST = ["configuration", "B", "tokens/s per chip", "TTFT (s)", "TPOT (s)",
         "meets the targets / why not"]  # fmt: skip


def served(analysis, **kwargs):
    """The analysis with a serving answer (made as issue 43's contract lays it out)."""
    serving, curves = serving_frames(**kwargs)
    summary = replace(analysis.summary._summary, serving=serving, serving_curves=curves)
    return replace(analysis, summary=summary)


def written(tmp_path, serving, lang=None):
    return sheet_alone(tmp_path, write_serving, SHEET, serving, lang)


def table(sheet) -> tuple[list[str], list[dict]]:
    return header_and_lines(sheet, HEADER_ROW)


def test_the_serving_sheet_follows_the_answer(book, tmp_path):
    wb, notices = workbook_of(served(book), tmp_path)
    assert wb.sheetnames[:3] == ["Answer", SHEET, "Summary"] and notices == []
    # a run without serve rows has none
    (tmp_path / "plain").mkdir()
    plain, _ = workbook_of(book, tmp_path / "plain")
    assert SHEET not in plain.sheetnames


def test_every_line_with_numbers_as_numbers(tmp_path):
    serving, _curves = serving_frames()
    sheet = written(tmp_path, serving)
    head, lines = table(sheet)
    assert (
        head[:6] == FIRST and "request latency (s)" in head and "USD per million tokens" not in head
    )
    assert len(lines) == len(serving) == 32
    first, want = lines[0], serving.iloc[0]
    assert first["configuration"].value == "b200 fp8 ×4" and first["B"].value == 512
    assert first["tokens/s per chip"].value == pytest.approx(want["tokens_per_second_per_chip"])
    assert first["tokens/s per chip"].number_format == "#,##0"
    ttft = first["TTFT (s)"]
    assert ttft.value == pytest.approx(want["ttft"])  # seconds, shown as '16.1 ms'
    assert ttft.number_format == excel_seconds(want["ttft"])
    assert first["meets the targets / why not"].value == "yes"
    assert first["rank"].value == 1 and first["series"].value == "llama3-70b"
    assert first["TPOT target (s)"].value == pytest.approx(0.015)
    assert first["input tokens (isl)"].value == 2048 and first["time basis"].value == "floor"
    missed = lines[15]
    assert missed["rank"].value is None
    assert missed["meets the targets / why not"].value == "no: TTFT over target"
    assert missed["meets the targets / why not"].fill.fgColor.rgb.endswith("FFC7CE")
    assert first["configuration"].quotePrefix  # text stays text when edited
    assert sheet.auto_filter.ref == f"A{HEADER_ROW + 1}:T{HEADER_ROW + 1 + 32}"
    assert sheet.freeze_panes == f"B{HEADER_ROW + 2}"
    assert "Serving: which configuration gives the most tokens/s per chip within the targets" in (
        sheet_text(sheet)
    )


def test_cost_columns_when_priced(tmp_path):
    serving, _curves = serving_frames(prices=PRICES)
    head, lines = table(written(tmp_path, serving))
    assert head[-4:] == ["USD per million tokens", "tokens per joule", "cost rank", "energy rank"]
    usd = lines[0]["USD per million tokens"]
    assert usd.value == pytest.approx(serving["usd_per_million_tokens"].iloc[0])
    assert usd.number_format == USD
    assert lines[0]["cost rank"].value == 3 and lines[15]["cost rank"].value is None


def test_hostile_names_stay_text_and_korean_headers(tmp_path):
    serving, _curves = serving_frames()
    serving = serving.assign(config=serving["config"].where(serving.index > 0, "=1+1"))
    sheet = written(tmp_path, serving, lang="ko")
    head, lines = table(sheet)
    assert lines[0][head[0]].value == "=1+1" and lines[0][head[0]].data_type == "s"
    assert head[3] == "TTFT (초)" and lines[0][head[5]].value == "예"


def test_a_serve_run_writes_its_serving_sheet(tmp_path):
    a = analyze_file(ROOT / "scenarios" / "serving.csv")
    folder = a.write(tmp_path / "serving", plots=False, report=False).folder
    head, lines = table(openpyxl.load_workbook(folder / "workbook.xlsx")[SHEET])
    serving = a.summary.serving
    assert [r["configuration"].value for r in lines] == serving["config"].tolist()
    assert [r["B"].value for r in lines] == serving["B"].tolist()
    tpot = [r["TPOT (s)"].value for r in lines]
    assert tpot == pytest.approx(serving["tpot"].tolist(), rel=1e-12)
    assert {r["series"].value for r in lines} == {
        "llama3-70b",
        "mixtral-8x7b",
        "llama3-70b-by-batch",
    }
