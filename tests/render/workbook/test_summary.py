"""The workbook's Summary sheet (the run, warnings and notices, bound counts per hardware and
op, critical batches, the legend in the bound tints) and its Charts sheet (each PNG under its
title), read back with openpyxl."""

from __future__ import annotations

import zipfile

import openpyxl
import pytest

from pipeline.render.charts import Chart
from pipeline.render.workbook.styles import BOUND_COLOURS
from pipeline.render.workbook.summary import CRITICAL_BATCH_LINES
from tests.helpers import analyze_rows, figure_png, sheet_text, workbook_of


def summary_rows(wb) -> list[tuple]:
    return list(wb["Summary"].iter_rows(values_only=True))


@pytest.fixture(scope="module")
def book_summary(book, tmp_path_factory):
    wb, _ = workbook_of(book, tmp_path_factory.mktemp("summary"))
    return wb


def test_summary_has_metadata_counts_and_critical_batches(book_summary, book):
    rows = summary_rows(book_summary)
    labels = {r[0]: r[1] for r in rows if r[0] is not None}
    assert labels["Input file"] == book.source
    assert labels["Input SHA-256"] == book.source_sha256
    assert labels["Started"] == book.started
    assert labels["Tool version"] == book.tool_version
    assert labels["Hardware catalog version"] == book.catalog_version
    assert (labels["Source rows"], labels["Scenarios computed"]) == (13, len(book.results))
    assert labels["Rejected rows"] == 0
    results = book.results
    for hw, group in results.groupby("hardware", observed=True):
        (line,) = [r for r in rows if r[0] == hw]
        counts = group["bound"].value_counts()
        expected = [int(counts.get(b, 0)) for b in ("compute", "memory", "network")]
        assert list(line[1:6]) == [*expected, int((group["fits"] == False).sum()), len(group)]  # noqa: E712
    (q5,) = [r for r in rows if r[0] == "q5_h100_bf16"]
    expected = results.loc[results["series"] == "q5_h100_bf16", "critical_batch"].iloc[0]
    assert q5[1:5] == ("h100", "matmul", "bf16", expected)


def test_counts_per_hardware_and_op_each_add_up_to_an_all_line(book_summary, book):
    rows = summary_rows(book_summary)
    alls = [r for r in rows if r[0] == "all"]
    assert len(alls) == 2  # under the hardware table and the op table
    for line in alls:
        assert list(line[1:6]) == [669, 365, 1, 0, 1035]
    assert "Bound per hardware (all 1,035 scenarios)" in sheet_text(book_summary["Summary"])
    assert "Bound per op (all 1,035 scenarios)" in sheet_text(book_summary["Summary"])


def test_the_legend_cells_are_tinted_like_the_charts(book_summary):
    sheet = book_summary["Summary"]
    (legend,) = [row for row in sheet.iter_rows() if row[0].value == "bound:"]
    tints = {c.value: c.fill.fgColor.rgb[-6:] for c in legend[1:4]}
    assert tints == {b: fill.lstrip("#").upper() for b, (fill, _) in BOUND_COLOURS.items()}
    assert all(c.quotePrefix for c in legend[1:4])


def test_rows_in_memory_warnings_and_notices(tmp_path):
    rows = [{"name": "split", "op": "matmul", "B": 4, "D": 2, "F": 3, "hardware": "v5e",
             "chips": 8, "shard": "B"}]  # fmt: skip
    analysis = analyze_rows(rows)
    wb, _ = workbook_of(analysis, tmp_path, notices=["first notice", "second notice"])
    text = sheet_text(wb["Summary"])
    assert text[text.index("Input SHA-256") + 1] == "(rows given in memory)"
    warning = text.index("Warnings about the input")
    assert "4 of the chips hold nothing" in text[warning + 1]
    notices = text.index("Notices")
    assert text[notices + 1 : notices + 3] == ["first notice", "second notice"]
    assert "No scenario in this run becomes compute-bound by growing its batch." in text


def test_critical_batches_past_the_cap_are_counted_not_listed(tmp_path):
    n = CRITICAL_BATCH_LINES + 2
    rows = [{"name": f"s{i:02d}", "op": "matmul", "B": "64|1024", "D": 4096 + 128 * i,
             "F": 4096, "hardware": "v5e"} for i in range(n)]  # fmt: skip
    analysis = analyze_rows(rows)
    assert len(analysis.summary.critical_batches) == n
    wb, _ = workbook_of(analysis, tmp_path)
    listed = [r for r in summary_rows(wb) if str(r[0]).startswith("s") and r[1] == "tpu-v5e"]
    assert [r[0] for r in listed] == [f"s{i:02d}" for i in range(CRITICAL_BATCH_LINES)]
    assert "... and 2 more series; filter critical_batch on the Results sheet." in sheet_text(
        wb["Summary"]
    )


def test_charts_sheet_embeds_each_png_under_its_title(book, tmp_path):
    (tmp_path / "plots").mkdir()
    charts = []
    for chart, dpi in (
        (Chart("roofline", "=Roofline: TPU v5e", "plots/roofline-tpu-v5e.png", "tpu-v5e"), 100),
        (Chart("sweep", "Q3 sweep", "plots/sweep-q3.png", "tpu-v5e", ("q3_D4096",)), 200),
    ):
        path = tmp_path / chart.path
        path.write_bytes(figure_png(size=(4, 3), dpi=dpi))
        charts.append((chart, path))
    wb, notices = workbook_of(book, tmp_path, charts=charts)
    assert wb.sheetnames == ["Answer", "Summary", "Results", "Hardware", "Inputs", "Charts"]
    assert notices == []
    cells = [c for row in wb["Charts"].iter_rows() for c in row if c.value]
    assert [c.value for c in cells] == [
        "=Roofline: TPU v5e", "plots/roofline-tpu-v5e.png", "Q3 sweep", "plots/sweep-q3.png",
    ]  # fmt: skip
    assert all(c.data_type == "s" and c.quotePrefix for c in cells)  # titles stay text
    with zipfile.ZipFile(tmp_path / "workbook.xlsx") as z:
        media = sorted(n for n in z.namelist() if n.startswith("xl/media/"))
        drawing = z.read("xl/drawings/drawing1.xml").decode()
    assert media == ["xl/media/image1.png", "xl/media/image2.png"]
    # one below the other, the second title under the first image (sized by its dpi)
    anchors = [int(part.split("</xdr:row>")[0]) for part in drawing.split("<xdr:row>")[1::2]]
    assert anchors[0] < anchors[1]
    second_title = next(c.row for c in cells if c.value == "Q3 sweep") - 1  # 0-based
    assert anchors[0] < second_title < anchors[1]


def test_the_summary_shows_the_workbooks_notices_not_the_reports(tmp_path):
    """A run's notices are each about one output: the workbook's row cap on the Summary, the
    report's table cap only in the report; the run's list (manifest) has both."""
    rows = [{"name": "sweep", "op": "matmul", "B": "1..30", "D": 64, "F": 64, "hardware": "v5e"}]
    written = analyze_rows(rows).write(tmp_path / "out", plots=False, workbook_rows=10,
                                       report_rows=5)  # fmt: skip
    workbook = "Results sheet holds the first 10 of 30 rows; results.csv has them all."
    report = (
        "The tpu-v5e table shows the first 5 of 30 scenarios and, past them, each series' "
        "first and slowest row (1 more); the other 24 are in results.csv."
    )  # the sweep's slowest row is kept past the cap (issue 30)
    assert sorted(written.notices) == sorted([workbook, report])
    book = openpyxl.load_workbook(tmp_path / "out" / "workbook.xlsx")
    summary = sheet_text(book["Summary"])
    notices = summary.index("Notices")
    assert summary[notices + 1] == workbook and report not in summary
    assert not [s for s in book.sheetnames if report in sheet_text(book[s])]
    assert "See the Summary sheet: 1 notice about this run." in sheet_text(book["Answer"])
    html = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert report.replace("'", "&#39;") in html and workbook not in html  # autoescaped
