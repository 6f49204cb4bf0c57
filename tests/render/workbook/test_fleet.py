"""The workbook's Fleet sheet (render.workbook.fleet), read back with openpyxl against
Summary.fleet: right after Answer, a block per fleet series with its sentence and its fleet
points in ranking order, times in seconds and ratios as numbers; text stays text; the caps are
said; no sheet without fleet series; and a workbook with it still runs again."""

from __future__ import annotations

import openpyxl
import pandas as pd
import pytest

import pipeline
from pipeline.render.format import EXCEL, excel_seconds
from pipeline.render.text.fleet import first_sentences
from pipeline.render.workbook.cells import FittedSheet
from pipeline.render.workbook.fleet import SHEET, point_header, write_fleet
from pipeline.render.workbook.styles import BOUND_COLOURS, Styles
from pipeline.render.workbook.xlsx_backend import rx
from tests.helpers import ROOT, analyze_file, analyze_rows, sheet_text, workbook_of

FLEET = ROOT / "scenarios" / "fleet.csv"
POINT = ["hardware", "dtype", "chips"]


@pytest.fixture(scope="module")
def fleet():
    return analyze_file(FLEET)


@pytest.fixture(scope="module")
def sheets(fleet, tmp_path_factory):
    wb, _ = workbook_of(fleet, tmp_path_factory.mktemp("fleet"))
    return wb


def blocks(sheet, names) -> dict[str, dict]:
    """The sheet's blocks as {series: {sentence, points (the upper header), headers, rows}},
    a block found by its series' name in column A above its sentence."""
    rows = list(sheet.iter_rows())
    found = {}
    for i, row in enumerate(rows):
        if row[0].value not in names or row[1].value is not None:
            continue
        body = []
        for cells in rows[i + 4 :]:
            if cells[0].value is None or str(cells[0].value).startswith("..."):
                break
            body.append(cells)
        found[row[0].value] = {
            "name": row[0],
            "sentence": rows[i + 1][0].value,
            "points": [c.value for c in rows[i + 2]],
            "headers": [c.value for c in rows[i + 3]],
            "rows": body,
        }
    return found


def test_the_fleet_sheet_follows_the_answer(sheets):
    assert sheets.sheetnames[:3] == ["Answer", SHEET, "Summary"]
    assert sheets.active.title == "Answer"


def test_each_fleet_series_has_its_sentence_in_file_order(sheets, fleet):
    said = first_sentences(fleet.summary.fleet)
    found = blocks(sheets[SHEET], {s for s, _ in said})
    assert [(s, b["sentence"]) for s, b in found.items()] == said
    mlp = found["mlp_bf16"]
    assert mlp["points"][:10:3] == [
        "fleet point", "B = 1 (first)", "B = 256 (critical batch)", "B = 4,096 (last)"
    ]  # fmt: skip
    assert mlp["headers"] == ["hardware", "dtype", "chips", *["time", "× fastest", "bound"] * 3,
                              "fits in HBM"]  # fmt: skip
    assert found["tp"]["points"][3] == "its only point"


def test_rows_are_the_ranking_with_its_times_and_ratios(sheets, fleet):
    ranking = fleet.summary.fleet
    found = blocks(sheets[SHEET], set(ranking["series"]))
    assert list(found) == list(dict.fromkeys(ranking["series"]))
    for series, block in found.items():
        rows = ranking[ranking["series"] == series]
        points = list(dict.fromkeys(zip(rows["point"], rows["at"], strict=True)))
        lead = next((p for p in points if p[0] == "critical batch"), points[0])
        ranked = rows[(rows["point"] == lead[0]) & (rows["at"] == lead[1])].sort_values("rank")
        shown = [(c[0].value, c[1].value, int(c[2].value)) for c in block["rows"]]
        assert shown == list(ranked[POINT].itertuples(index=False, name=None)), series
        for k, (point, at) in enumerate(points):
            at_point = rows[(rows["point"] == point) & (rows["at"] == at)].set_index(POINT)
            for cells in block["rows"]:
                fact = at_point.loc[(cells[0].value, cells[1].value, int(cells[2].value))]
                time, ratio, bound = cells[3 + 3 * k : 6 + 3 * k]
                assert time.data_type == "n" and time.value == fact["t_lower"]
                assert time.number_format == excel_seconds(fact["t_lower"])
                assert ratio.value == pytest.approx(fact["ratio"])
                assert ratio.number_format == EXCEL["ratio"]
                assert bound.value == fact["bound"]
                fill = BOUND_COLOURS[fact["bound"]][0].lstrip("#").upper()
                assert bound.fill.fgColor.rgb[-6:] == fill
        fits = rows.groupby(POINT)["fits"]
        said = {"all": "at every point", "none": "at no point", "some": "at some points"}
        if len(points) == 1 and not points[0][1]:  # its only point
            said = {"all": "yes", "none": "no"}
        for cells in block["rows"]:
            key = (cells[0].value, cells[1].value, int(cells[2].value))
            where = rows.set_index(POINT).loc[[key], "fits_where"].iloc[0]
            assert where == ("all" if fits.all()[key] else "none" if not fits.any()[key]
                             else where)  # fmt: skip
            up_to = rows.set_index(POINT).loc[[key], "fits_up_to"].iloc[0]
            text = said.get(where) or "up to " + up_to.replace("=", " = ")
            assert cells[3 + 3 * len(points)].value == text


def test_text_stays_text_and_more_points_are_counted(tmp_path):
    a = analyze_rows([
        {"name": "=1+1", "op": "matmul", "B": 8, "D": 64, "F": 64, "hardware": "h100|b200"},
        {"name": "many", "op": "matmul", "B": 64, "D": 1024, "F": 1024, "dtype": "bf16|fp32",
         "hardware": "h100|h200|b200|mi300x|tpu-v5e|tpu-v6e|gaudi3|mi355x",
         "chips": "1|2|4|8", "shard": "B"},
    ])  # fmt: skip
    wb, own = workbook_of(a, tmp_path)
    assert own == []
    found = blocks(wb[SHEET], {"=1+1", "many"})
    name = found["=1+1"]["name"]
    assert name.value == "=1+1" and name.data_type == "s" and name.quotePrefix
    assert [c[0].value for c in found["=1+1"]["rows"]] == ["b200", "h100"]
    assert len(found["many"]["rows"]) == 50
    more = a.summary.fleet.query("series == 'many'").pipe(len) - 50
    said = (
        f"... and {more} more fleet points, slower at its only point than the 50 above: "
        "summary.json lists them all (fleet)."
    )
    assert said in sheet_text(wb[SHEET])
    assert "Fleet =1+1: " + dict(first_sentences(a.summary.fleet))["=1+1"] in sheet_text(
        wb["Answer"]
    )


def test_a_capped_sheet_says_how_many_series_it_shows(tmp_path, fleet):
    path = tmp_path / "capped.xlsx"
    book = rx.Workbook(str(path))
    write_fleet(FittedSheet(book.add_worksheet(SHEET)), Styles(), fleet.summary.fleet, limit=2)
    book.close()
    sheet = openpyxl.load_workbook(path)[SHEET]
    text = sheet_text(sheet)
    said = (
        "This sheet shows the first 2 of 7 fleet series; summary.json lists the rankings of the "
        "rest (fleet)."
    )
    assert said in text
    assert list(blocks(sheet, set(fleet.summary.fleet["series"]))) == ["mlp_bf16", "mlp_fp8"]


def test_no_fleet_sheet_without_fleet_series(book, tmp_path):
    assert book.summary.fleet.empty
    wb, _ = workbook_of(book, tmp_path)
    assert SHEET not in wb.sheetnames
    assert not any(t.startswith("Fleet ") for t in sheet_text(wb["Answer"]))


def test_a_workbook_with_a_fleet_sheet_runs_again(fleet, tmp_path):
    fleet.write(tmp_path / "fleet", plots=False, report=False)
    again = pipeline.analyze(tmp_path / "fleet" / "workbook.xlsx")
    assert again.name == "fleet-rerun"
    assert again.results["t_lower"].tolist() == fleet.results["t_lower"].tolist()
    pd.testing.assert_frame_equal(again.summary.fleet, fleet.summary.fleet)


def test_point_headers_name_the_point():
    assert point_header({"point": "critical batch", "at": "B = 256"}) == "B = 256 (critical batch)"
    assert point_header({"point": "only", "at": ""}) == "its only point"
