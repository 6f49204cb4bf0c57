"""The workbook's Answer sheet (the bottom line and the series table, read back with openpyxl
against the results; each fleet series' answer under it), the one-cell time formats (format.excel_seconds) and the Results
sheet's column order."""

from __future__ import annotations

import dataclasses

import pytest

from pipeline.render.format import EXCEL, excel_seconds
from pipeline.render.text.answer import bottom_line, meaning
from pipeline.render.text.fleet import first_sentences
from pipeline.render.text.serving import serving_sentences
from pipeline.render.workbook.answer import COLUMNS, fleet_pointer, results_columns
from pipeline.render.workbook.styles import BOUND_COLOURS, NOT_FITTING_COLOURS
from tests.helpers import (
    ROOT,
    analyze_file,
    analyze_rows,
    serving_frames,
    sheet_text,
    workbook_of,
)

HEADER_ROW = 4  # 1-based: title, bottom line, a blank row, then the table


@pytest.fixture(scope="module")
def answer(book, tmp_path_factory):
    wb, _ = workbook_of(book, tmp_path_factory.mktemp("answer"))
    return wb


def table(sheet) -> dict[str, dict]:
    """The series table as {series: {header: cell}}."""
    headers = [c.value for c in sheet[HEADER_ROW]]
    rows = {}
    for row in sheet.iter_rows(min_row=HEADER_ROW + 1):
        if row[1].value is None:  # past the table (a blank row, or "... and N more")
            break
        rows[row[0].value] = dict(zip(headers, row, strict=False))
    return rows


def test_the_answer_is_the_first_and_active_sheet(answer, book):
    assert answer.sheetnames[:3] == ["Answer", "Summary", "Results"]
    assert answer.active.title == "Answer"
    sheet = answer["Answer"]
    assert sheet["A1"].value == "Roofline run q1-q5: how long, and bound by what"
    assert sheet["A2"].value == bottom_line(book.summary.bottom)
    assert [c.value for c in sheet[HEADER_ROW]] == [h for h, _ in COLUMNS if "estimate" not in h]


def test_each_series_time_is_the_min_and_max_of_its_results(answer, book):
    rows = table(answer["Answer"])
    results = book.results
    assert list(rows) == list(book.summary.lines.index)  # every series, in file order
    times = results.groupby("series", sort=False)["t_lower"].agg(["min", "max"])
    for series, cells in rows.items():
        t_min, t_max = cells["time min"], cells["time max"]
        assert (t_min.value, t_max.value) == (times.at[series, "min"], times.at[series, "max"])
        assert t_min.data_type == "n" and t_min.number_format == excel_seconds(t_min.value)
        group = results[results["series"] == series]
        assert cells["scenarios"].value == len(group)
        assert cells["hardware"].value == group["hardware"].iloc[0]
        assert cells["op"].value == group["op"].iloc[0]


def test_times_show_as_the_report_words_them(answer):
    rows = table(answer["Answer"])
    shown = {s: _shown(c["time min"]) + " / " + _shown(c["time max"]) for s, c in rows.items()}
    assert shown["intro_h100_1e12_flops"] == "1.01 ms / 1.01 ms"
    assert shown["dot_product"] == "4.88 µs / 4.88 µs"
    assert shown["q3_D4096"] == "20.5 µs / 87.2 µs"
    assert shown["q2_int8_weights_bf16"] == "11.2 ms / 11.2 ms"


def test_bounds_in_words_tinted_critical_batch_and_fit(answer, book):
    rows = table(answer["Answer"])
    q3 = rows["q3_D4096"]
    assert q3["bound"].value == "memory below B = 137, compute from B = 137"
    assert q3["critical batch"].value == 137 == book.summary.lines.at["q3_D4096", "critical_max"]
    assert q3["shape"].value == "B=1..512 D=4096 F=4096"
    q5 = rows["q5_h100_bf16"]
    assert (q5["bound"].value, q5["critical batch"].value, q5["fits"].value) == (
        "compute", 298, "yes",
    )  # fmt: skip
    assert rows["dot_product"]["critical batch"].value is None  # none: an empty cell
    fill = q5["bound"].fill.fgColor.rgb[-6:]
    assert fill == BOUND_COLOURS["compute"][0].lstrip("#").upper()
    for cells in rows.values():
        assert cells["series"].data_type == "s" and cells["series"].quotePrefix


def test_what_each_bound_means_is_said_under_the_table(answer):
    text = sheet_text(answer["Answer"])
    at = text.index("What the bound means")
    assert text[at + 1 : at + 9] == [
        "compute", meaning()["compute"], "memory", meaning()["memory"],
        "network", meaning()["network"], "mixed", meaning()["mixed"],
    ]  # fmt: skip


def test_it_prints_on_one_landscape_page(answer):
    sheet = answer["Answer"]
    assert sheet.page_setup.orientation == "landscape"
    assert sheet.sheet_properties.pageSetUpPr.fitToPage
    assert (sheet.page_setup.fitToWidth or 1, sheet.page_setup.fitToHeight or 1) == (1, 1)
    last = max(c.row for row in sheet.iter_rows() for c in row if c.value is not None)
    assert sheet.print_area == f"'Answer'!$A$1:$L${last}"  # dtype and chips shown: int8, 2


def test_not_fitting_series_are_red_and_more_series_are_counted(tmp_path):
    a = analyze_file(ROOT / "scenarios" / "collectives.csv")
    wb, _ = workbook_of(a, tmp_path)
    rows = table(wb["Answer"])
    unfit = [c for c in rows.values() if c["fits"].value != "yes"]
    assert len(unfit) == a.summary.bottom["not_fitting"] == 1
    assert unfit[0]["fits"].font.color.rgb[-6:] == NOT_FITTING_COLOURS[1].lstrip("#")
    assert rows[next(iter(rows))]["shape"].value.startswith("V = ")  # a collective's size
    rows = [{"name": f"s{i}", "op": "matmul", "B": 8, "D": 64, "F": 64, "hardware": "v5e"}
            for i in range(52)]  # fmt: skip
    wb, _ = workbook_of(analyze_rows(rows), tmp_path)
    assert len(table(wb["Answer"])) == 50
    assert (
        "... and 2 more series: every scenario is on the Results sheet (filter its series column)."
        in sheet_text(wb["Answer"])
    )


def test_each_fleet_series_is_answered_in_a_line_under_the_table(tmp_path):
    a = analyze_file(ROOT / "scenarios" / "fleet.csv")
    wb, _ = workbook_of(a, tmp_path)
    sheet = wb["Answer"]
    assert list(table(sheet)) == list(a.summary.lines.index)  # the table as before
    text = sheet_text(sheet)
    said = [f"Fleet {series}: {sentence}" for series, sentence in first_sentences(a.summary.fleet)]
    at = text.index(said[0])
    assert len(said) == 7 and text[at : at + 8] == [*said, fleet_pointer()]
    assert text[at + 8] == "What the bound means"
    # the bounds the fleet lines name are explained too (the table's are network and mixed)
    meant = text[at + 9 : at + 9 + 8 : 2]
    assert meant == ["compute", "memory", "network", "mixed"]
    assert said[0].startswith("Fleet mlp_bf16: At B = 256 gb200 and mi355x tie as the fastest, ")


def test_a_time_cell_shows_its_words_while_it_rounds_to_them():
    """The format holds the words for the values that round to them, engineering notation for
    any other (an edited cell never shows a wrong time)."""
    assert excel_seconds(1.01e-3) == '[<0.001005]##0.00E+0" s";[<0.001015]"1.01 ms";##0.00E+0" s"'
    assert excel_seconds(4.88e-6) == (
        '[<0.000004875]##0.00E+0" s";[<0.000004885]"4.88 µs";##0.00E+0" s"'
    )
    assert excel_seconds(0.178).endswith('[<0.1785]"178 ms";##0.00E+0" s"')
    assert excel_seconds(2.5).startswith('[<2.495]##0.00E+0" s";[<2.505]"2.50 s"')
    assert excel_seconds(0.0009996).startswith("[<0.0009995]")  # 1.00 ms from 0.9995 ms
    assert '"1.00 ms"' in excel_seconds(0.0009996)
    assert excel_seconds(0.0) == '[=0]"0 s";##0.00E+0" s"'
    assert excel_seconds(float("nan")) == excel_seconds(float("inf")) == EXCEL["seconds"]


def test_results_columns_put_the_answer_first():
    assert results_columns(["name", "series", "bound", "t_lower", "extra", "op"]) == [
        "name", "op", "t_lower", "bound", "series", "extra",
    ]  # fmt: skip


def _shown(cell) -> str:
    """What the cell's format shows for its value: the words of its middle section."""
    low, words, _ = cell.number_format.split(";")
    below, above = float(low[2:].split("]")[0]), float(words[2:].split("]")[0])
    assert below <= cell.value < above
    return words.split('"')[1]


def test_the_serving_answer_is_said_first_under_the_bottom_line(book, tmp_path):
    serving, curves = serving_frames(prices={"h100": 2.0, "h200": 3.0, "b200": 6.0, "mi300x": 2.0})
    record = dataclasses.replace(
        book,
        summary=dataclasses.replace(book.summary._summary, serving=serving, serving_curves=curves),
    )
    wb, _ = workbook_of(record, tmp_path)
    sheet = wb["Answer"]
    said = serving_sentences(serving)
    assert len(said) == 2  # one per serve series (and model)
    assert [sheet["A3"].value, sheet["A4"].value] == said
    assert said[0].startswith("llama3-70b, 2,048 in / 256 out, TTFT ≤ 60.0 ms, TPOT ≤ 15.0 ms: ")
    assert "b200 fp8 ×4 at batch " in said[0] and "; cheapest: mi300x fp8 ×4" in said[0]
    headers = [c.value for c in sheet[6]]  # a blank row, then the series table as before
    assert headers[:3] == ["series", "hardware", "op"]
    assert sheet["A7"].value == book.summary.lines.index[0]
