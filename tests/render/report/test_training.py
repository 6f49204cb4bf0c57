"""render/report/training.py and _training.html.j2: the report's Training table after the
answer (its sentences on the first screen), a line per train row, the fewest days first, the
chart under its series' table; every value escaped; none without train rows."""

from __future__ import annotations

import dataclasses
import re
from html import unescape

import pytest

from pipeline.render.charts import Chart
from pipeline.render.report.page import render_report
from pipeline.render.report.training import training_context
from tests.helpers import HOSTILE, figure_png, report_section, row_cells


def test_the_context_carries_the_tables_and_their_charts(training):
    context = training_context(training.summary.training, {"fsdp": [{"title": "chart"}]})
    assert [s["series"] for s in context["series"]] == ["fsdp", "tp"]
    assert context["series"][0]["charts"] == [{"title": "chart"}]
    assert context["series"][1]["charts"] == []
    assert (context["estimated"], context["cost"]) == (False, False)
    capped = training_context(training.summary.training, limit=1)
    assert (capped["total"], capped["more"]) == (2, 1)


def test_the_table_comes_after_the_answer_with_its_sentence_first(training):
    charts = [(Chart("training", "fsdp chart", "plots/training-fsdp.png", None, ("fsdp",)),
               figure_png("a"))]  # fmt: skip
    html = render_report(training, "run", charts)
    table = report_section("training", html)
    assert html.index('id="summary"') < html.index('id="training"') < html.index('id="findings"')
    assert '<a href="#training">Training</a>' in html
    first = re.search(r'<p class="bottom-line training-answer">(.*?)</p>', html).group(1)
    assert unescape(first).startswith("llama3-70b on 15.0T tokens (fsdp): h100 bf16 ×4096 "
                                      "fsdp=4096, 40.3 days at 45.0% MFU")  # fmt: skip
    rows = re.findall(r"<tr><td.*?</tr>", table, re.S)
    assert len(rows) == 8
    head = row_cells(rows[0])
    assert head[:5] == ["1", "h100 bf16 ×4096 fsdp=4096", "40.3", "3.72 s", "45.0%"]
    assert row_cells(rows[5])[0] == "—" and row_cells(rows[5])[-1].startswith("no: ")
    fsdp = table[: table.index("<h3>tp")]
    assert fsdp.count('<figure class="training">') == 1 and 'title="fsdp chart"' in fsdp


@pytest.mark.parametrize("hostile", HOSTILE)
def test_every_value_is_escaped(training, hostile):
    lines = training.summary.training
    lines = lines.assign(config=lines["config"].where(lines.index > 0, hostile))
    summary = dataclasses.replace(training.summary._summary, training=lines)
    html = render_report(dataclasses.replace(training, summary=summary), "run")
    table = report_section("training", html)
    assert hostile not in table and "&lt;" in table


def test_no_train_rows_no_table(book):
    html = render_report(book, "run")
    assert 'id="training"' not in html and "#training" not in html
    assert "training-answer" not in html
