"""render/workbook/training.py: the Training sheet, after Answer (and Serving) only when the run
has train rows; a line per train row in Summary.training's order, the planner's columns first,
numbers as numbers with their formats, units in the headers, the user's names as text."""

from __future__ import annotations

import dataclasses

import pytest

from pipeline.render.workbook.training import DAYS, HEADER_ROW, SHEET, USD, write_training
from tests.helpers import header_and_lines, sheet_alone, workbook_of

FIRST = ["configuration", "days", "step time (s)", "MFU", "bound", "fits in HBM / why not"]


def written(tmp_path, training, lang=None):
    return sheet_alone(tmp_path, write_training, SHEET, training, lang)


def table(sheet) -> tuple[list[str], list[dict]]:
    return header_and_lines(sheet, HEADER_ROW)


def test_the_training_sheet_follows_the_answer_only_with_train_rows(training, book, tmp_path):
    wb, notices = workbook_of(training, tmp_path)
    assert wb.sheetnames[:3] == ["Answer", SHEET, "Summary"] and notices == []
    answer = [c.value for c in wb["Answer"]["A"] if c.value]
    assert any(str(v).startswith("llama3-70b on 15.0T tokens (fsdp): h100 bf16 ×4096 fsdp=4096, "
                                 "40.3 days at 45.0% MFU") for v in answer)  # fmt: skip
    (tmp_path / "plain").mkdir()
    plain, _ = workbook_of(book, tmp_path / "plain")
    assert SHEET not in plain.sheetnames


def test_every_line_with_numbers_as_numbers(training, tmp_path):
    lines_of = training.summary.training
    head, lines = table(written(tmp_path, lines_of))
    assert head[: len(FIRST)] == FIRST
    assert [r["configuration"].value for r in lines] == lines_of["config"].tolist()
    first = lines[0]
    assert first["days"].value == pytest.approx(lines_of["days"][0], rel=1e-12)
    assert first["days"].number_format == DAYS
    assert first["step time (s)"].value == pytest.approx(lines_of["step_time"][0], rel=1e-12)
    assert first["MFU"].value == pytest.approx(0.45) and first["MFU"].number_format == "0.0%"
    assert first["memory a chip (bytes)"].value == lines_of["memory_footprint"][0]
    assert first["rank"].value == 1 and first["fits in HBM / why not"].value == "yes"
    last = lines[5]  # pure FSDP on 256 chips: does not fit, unranked, says why
    assert last["rank"].value is None
    assert last["fits in HBM / why not"].value.startswith("no: ")
    assert "cost (USD)" not in head


def test_cost_columns_when_priced(training, tmp_path):
    lines_of = training.summary.training.assign(
        usd_per_chip_hour=2.0, train_cost=lambda t: t["days"] * 1e5, cost_rank=1
    )
    head, lines = table(written(tmp_path, lines_of))
    assert head[-2:] == ["cost (USD)", "cost rank"]
    assert lines[0]["cost (USD)"].value == pytest.approx(lines_of["train_cost"][0])
    assert lines[0]["cost (USD)"].number_format == USD


def test_hostile_names_stay_text_and_korean_headers(training, tmp_path):
    lines_of = training.summary.training
    lines_of = lines_of.assign(config=lines_of["config"].where(lines_of.index > 0, "=1+1"))
    head, lines = table(written(tmp_path, lines_of, lang="ko"))
    assert lines[0][head[0]].value == "=1+1" and lines[0][head[0]].data_type == "s"
    assert head[1] != "days" and lines[0][head[5]].value == "예"


def test_a_summary_with_no_training_writes_no_sheet(training, tmp_path):
    empty = training.summary.training.iloc[:0]
    summary = dataclasses.replace(training.summary._summary, training=empty)
    wb, _ = workbook_of(dataclasses.replace(training, summary=summary), tmp_path)
    assert SHEET not in wb.sheetnames


def test_a_million_train_rows_write_their_first_lines_and_say_so(training, tmp_path, monkeypatch):
    from pipeline.render.workbook import training as sheet_module

    monkeypatch.setattr(sheet_module, "DEFAULT_WORKBOOK_ROWS", 3)
    sheet = written(tmp_path, training.summary.training)
    assert sheet.cell(4, 1).value == (
        "The first 3 of 8 lines; summary.json (training) and the results hold every train row."
    )
    _head, lines = table(sheet)
    assert len(lines) == 3
