"""The report's Serving table (render.report.serving and _serving.html.j2): after the answer
and before the steps, per serve series its configurations in the summary's order with their
numbers in words, the misses said in red and why, its charts under it, cost columns when
priced, every value autoescaped; no table (and no link to it) without serve rows."""

from __future__ import annotations

import dataclasses
import re

import pytest

from pipeline.render.charts import Chart
from pipeline.render.report.page import render_report
from pipeline.render.report.serving import serving_context
from tests.helpers import HOSTILE, figure_png, report_section, row_cells, serving_frames

PRICES = {"h100": 2.5, "h200": 3.5, "b200": 5.0, "mi300x": 3.0}


def served(analysis, **kwargs):
    serving, curves = serving_frames(**kwargs)
    summary = dataclasses.replace(analysis.summary._summary, serving=serving,
                                  serving_curves=curves)  # fmt: skip
    return dataclasses.replace(analysis, summary=summary)


def test_the_context_carries_the_tables_and_their_charts():
    serving, _curves = serving_frames()
    context = serving_context(serving, {"llama3-70b": [{"title": "chart"}]})
    assert [s["series"] for s in context["series"]] == ["llama3-70b", "mixtral-8x7b"]
    assert context["series"][0]["charts"] == [{"title": "chart"}]
    assert context["series"][1]["charts"] == []
    assert (context["estimated"], context["targets"], context["cost"]) == (False, True, False)
    capped = serving_context(serving, limit=1)
    assert (capped["total"], capped["more"]) == (2, 1)


def test_the_table_comes_after_the_answer_before_the_steps(book):
    html = render_report(served(book), "run")
    table = report_section("serving", html)
    assert html.index('id="summary"') < html.index('id="serving"') < html.index('id="findings"')
    assert '<a href="#serving">Serving</a>' in html
    assert '<h3>llama3-70b <span class="muted small">2,048 in / 256 out &middot; ' in table
    rows = re.findall(r"<tr><td.*?</tr>", table, re.S)
    assert len(rows) == 32
    assert row_cells(rows[0]) == ["1", "b200 fp8 ×4", "512", "16,181", "126", "16.1 ms", "7.91 ms",
                              "2.03 s", "yes"]  # fmt: skip
    missed = row_cells(rows[15])
    assert missed[0] == "—" and missed[-1] == "no: TTFT over target"
    assert '<span class="no">no: TTFT over target</span>' in rows[15]
    assert "USD per" not in table


def test_its_charts_go_under_its_table_and_cost_when_priced(book):
    charts = [
        (Chart("serving", "llama3-70b chart", "plots/serving-llama3-70b.png", None,
               ("llama3-70b",)), figure_png("a")),
        (Chart("serving", "llama3-70b cost", "plots/serving-cost-llama3-70b.png", None,
               ("llama3-70b",)), figure_png("b")),
    ]  # fmt: skip
    table = report_section("serving", render_report(served(book, prices=PRICES), "run", charts))
    llama = table[: table.index("<h3>mixtral-8x7b")]
    assert llama.count('<figure class="serving">') == 2
    assert llama.index('title="llama3-70b chart"') < llama.index('title="llama3-70b cost"')
    assert "USD per<br>M tokens" in table
    assert "$0.0858" in row_cells(re.findall(r"<tr><td.*?</tr>", table, re.S)[0])


@pytest.mark.parametrize("hostile", HOSTILE)
def test_every_value_is_escaped(book, hostile):
    analysis = served(book)
    serving = analysis.summary.serving
    serving["config"] = serving["config"].where(serving.index > 0, hostile)
    summary = dataclasses.replace(analysis.summary._summary, serving=serving)
    table = report_section(
        "serving", render_report(dataclasses.replace(analysis, summary=summary), "run")
    )
    assert hostile not in table and "&lt;" in table


def test_no_serve_rows_no_table(book):
    html = render_report(book, "run")
    assert 'id="serving"' not in html and "#serving" not in html
