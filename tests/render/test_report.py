"""The HTML review report: golden file, escaping, nothing external, table cap, index page."""

from __future__ import annotations

import base64
import re
from html.parser import HTMLParser

import jinja2
import numpy as np
import pandas as pd
import pytest

from pipeline.errors import OutputError
from pipeline.render import report
from pipeline.render.charts import Chart, png
from pipeline.render.index_page import render_index
from pipeline.render.report import render_report, report_context
from pipeline.render.templates import REPORT_TEMPLATE, environment
from tests.helpers import (
    DATA,
    EXTERNAL,
    GOLDEN,
    HOSTILE,
    INDEX_RUNS,
    analyze_file,
    analyze_rows,
    figure_png,
    planned_charts,
    tiny_png,
)

GOLDEN_REPORT = GOLDEN / "report_small.html"
NOTICES = ("The workbook's Results sheet holds the first 1,000,000 rows.",)


@pytest.fixture(scope="module")
def small():
    """The book's examples, Q3 cut to B = 1|512, two measured times and two rejected rows."""
    return analyze_file(DATA / "review.csv")


def golden_charts(analysis) -> list[tuple[Chart, bytes]]:
    charts = []
    for i, rec in enumerate(analysis.hardware):
        chart = Chart(
            "roofline",
            f"Roofline: {rec['name']}",
            f"plots/roofline-{rec['name']}.png",
            hardware=rec["name"],
        )
        charts.append((chart, tiny_png(4, 3, (30 * i, 120, 200))))
    sweep = Chart(
        "sweep",
        "Attainable FLOP/s vs B on tpu-v5e",
        "plots/sweep-q3.png",
        hardware="tpu-v5e",
        series=("q3_D4096", "q3_D1024"),
    )
    charts.append((sweep, tiny_png(6, 2, (250, 140, 40))))
    return charts


def html_of(analysis, charts=(), notices=NOTICES, rows=500, name="q1-q5") -> str:
    """The report as a run writes it: its notices, then what the table cap leaves out."""
    notices = [*notices, *report.table_cap_notices(analysis, rows)]
    return render_report(analysis, name, charts, notices, rows)


def test_golden_small_run(small, update_golden):
    html = html_of(small, golden_charts(small), rows=10)
    if update_golden:
        GOLDEN_REPORT.write_text(html, encoding="utf-8", newline="\n")
    assert html == GOLDEN_REPORT.read_text(encoding="utf-8"), (
        "report changed; if on purpose, rerun with --update-golden and review the diff"
    )


def test_golden_content_order_and_numbers(small):
    """The golden file's facts a reviewer relies on, in the order the report lists them."""
    html = html_of(small, golden_charts(small), rows=10)
    order = [
        small.source_sha256,
        'id="summary"',
        "compute-bound",
        "Compute- vs communication-bound, per hardware",
        'id="hw-1-h100"',
        'id="hw-2-tpu-v5e"',
        'id="sweeps"',
        'id="findings"',
        'id="method"',
        'id="rejected"',
    ]
    positions = [html.index(marker) for marker in order]
    assert positions == sorted(positions)
    assert "1.01 ms" in html  # intro: 1e12 FLOPs on an H100
    assert "197 TFLOP/s" in html and "16.0 GB" in html and "820 GB/s" in html
    assert "B=512 D=65536 F=65536" in html
    assert "bf16 \u00d7 int8 \u2192 bf16" in html
    assert "2 more rows in results.csv." in html  # tpu-v5e: 12 rows, cap 10
    assert "The workbook&#39;s Results sheet" in html  # notices shown, escaped
    assert "3.82\u00d7" in html  # q4: measured 20 ms / predicted 5.24 ms
    assert "unknown hardware &#39;h10&#39; (did you mean &#39;h100&#39;?)" in html
    assert html.count("data:image/png;base64,") == len(small.hardware) + 1


class _TagChecker(HTMLParser):
    """Fails on a closing tag that does not match the innermost open one."""

    VOID = {"meta", "img", "br", "hr", "input", "link", "col", "wbr", "source"}

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []

    def handle_starttag(self, tag, attrs) -> None:
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag) -> None:
        assert self.stack and self.stack[-1] == tag, (tag, self.stack[-5:], self.getpos())
        self.stack.pop()


def assert_well_formed(html: str) -> None:
    checker = _TagChecker()
    checker.feed(html)
    checker.close()
    assert checker.stack == []


def test_report_markup_is_balanced(small):
    assert_well_formed(html_of(small, golden_charts(small)))
    assert_well_formed(render_index(INDEX_RUNS))  # the index page too


def test_report_references_nothing_external(small):
    charts = [(Chart("roofline", "Roofline: tpu-v5e", "plots/r.png", "tpu-v5e"), figure_png("v5e"))]
    html = html_of(small, charts, rows=3)
    for needle in EXTERNAL:
        assert needle not in html, needle
    for ref in re.findall(r'(?:src|href)="([^"]*)"', html):
        assert ref.startswith(("#", "data:image/png;base64,")), ref
    assert "url(" not in html


def test_charts_are_embedded_and_placed(small):
    roof, sweep, summary = figure_png("v5e"), figure_png("Q3"), figure_png("all")
    charts = [
        (Chart("summary", "All chips", "plots/summary.png"), summary),
        (Chart("roofline", "Roofline: tpu-v5e", "plots/roofline-tpu-v5e.png", "tpu-v5e"), roof),
        (Chart("sweep", "Q3 sweep", "plots/sweep.png", "tpu-v5e", ("q3_D4096", "q3_D1024")), sweep),
    ]
    html = html_of(small, charts)
    payloads = re.findall(r'src="data:image/png;base64,([^"]+)"', html)
    assert [base64.b64decode(p) for p in payloads] == [summary, roof, sweep]
    v5e = html.index('id="hw-2-tpu-v5e"')
    assert v5e < html.index('alt="Roofline: tpu-v5e"') < html.index('id="hw-3-tpu-v6e"')
    sweeps = html[html.index('id="sweeps"') : html.index('id="findings"')]
    assert 'alt="Q3 sweep"' in sweeps and "q3_D4096" in sweeps and "q3_D1024" in sweeps


def test_a_chart_that_is_not_a_png_is_an_output_error(small):
    fake = [(Chart("roofline", "fake", "fake.png", "tpu-v5e"), b"not a png")]
    with pytest.raises(OutputError, match="not a PNG"):
        html_of(small, fake)


def test_hostile_text_is_escaped():
    rows = [
        {
            "name": HOSTILE[1],
            "op": "matmul",
            "B": 1,
            "D": 2,
            "F": 3,
            "hardware": "v5e",
            "notes": HOSTILE[1],
        },
        {"name": HOSTILE[0], "op": "matmul", "B": 4, "D": 5, "F": 6, "hardware": "v5e"},
        {"name": HOSTILE[1] + "2", "op": "matmul", "B": 1, "D": 2, "F": 3, "hardware": "h10"},
    ]
    chips = pd.DataFrame({"name": ["tpu-v5e"], "source": [HOSTILE[0]], "aliases": [HOSTILE[1]]})
    analysis = analyze_rows(rows, hardware=chips, name=HOSTILE[1])
    assert analysis.hardware[0]["source"] == HOSTILE[0] and analysis.source == HOSTILE[1]
    charts = [(Chart("roofline", HOSTILE[1], "c.png", "tpu-v5e"), tiny_png(2, 2, (0, 0, 0)))]
    html = html_of(analysis, charts, notices=HOSTILE, name=HOSTILE[0])
    for text in HOSTILE:
        assert text not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&#34;&gt;&lt;img src=x onerror=1&gt;" in html
    assert "<img src=x" not in html and "<script>alert" not in html
    assert html.count("<script>") == 1  # only the table sorter


def test_html_ids_are_safe_for_any_chip_name():
    chips = pd.DataFrame({"name": [HOSTILE[1]], "hbm_bandwidth": [1e12], "peak_bf16": [1e14]})
    rows = [
        {"name": "a", "op": "matmul", "B": 1, "D": 2, "F": 3, "hardware": "v5e"},
        {"name": "b", "op": "matmul", "B": 1, "D": 2, "F": 3, "hardware": HOSTILE[1]},
    ]
    analysis = analyze_rows(rows, hardware=chips)
    assert not analysis.problem_list
    ids = re.findall(r'id="([^"]*)"', html_of(analysis))
    assert all(re.fullmatch(r"[a-z0-9-]+", i) for i in ids), ids
    assert len(ids) == len(set(ids))


def test_table_cap_keeps_a_big_run_small(big):
    assert big.summary.scenarios == 20_000
    notices = report.table_cap_notices(big, 500)
    html = html_of(big, notices=())
    assert len(html.encode()) < 5_000_000
    assert len(notices) == 4
    assert notices[0] == (
        "The h100 table shows the first 500 of 5,000 scenarios; the other 4,500 are in results.csv."
    )
    assert html.count("4,500 more rows in results.csv.") == 4
    for notice in notices:
        assert notice in html
    tables = re.findall(r'<table class="sortable wide rows">(.*?)</table>', html, re.S)
    assert [t.count("<tr>") for t in tables] == [501] * 4  # header + the first 500 rows
    assert "Not fitting in HBM: 5,000 scenarios" in html
    assert "and 4,999 more of series huge_v5e" in html


def test_table_cap_is_configurable(big):
    html = html_of(big, rows=20, notices=())
    assert html.count("4,980 more rows in results.csv.") == 4
    assert len(html) < 200_000


def test_strict_undefined_catches_a_missing_variable(small):
    context = report_context(small, "q1-q5")
    template = environment().get_template(REPORT_TEMPLATE)
    template.render(**context)  # complete: fine
    incomplete = {k: v for k, v in context.items() if k != "findings"}
    with pytest.raises(jinja2.UndefinedError, match="findings"):
        template.render(**incomplete)
    row = dict(context["chips"][0]["rows"][0])
    del row["bound"]
    chips = [{**context["chips"][0], "rows": [row]}]
    with pytest.raises(jinja2.UndefinedError, match="bound"):
        template.render(**{**context, "chips": chips})


def test_empty_errors_and_no_measurements(book):
    html = html_of(book, notices=())
    assert "None: every input row was valid." in html
    assert "No measured_seconds were given." in html
    assert 'id="sweeps"' not in html  # no sweep charts given
    assert "No chart for this hardware in this run." in html


def test_records_hold_plain_python_values(small):
    context = report_context(small, "q1-q5")
    row = context["chips"][1]["rows"][0]
    plain = (str, int, float, bool, type(None))
    assert all(isinstance(v, plain) for v in row.values()), row
    assert not any(isinstance(v, pd.DataFrame | pd.Series | np.ndarray) for v in context.values())


def test_real_charts_embed(book):
    summary = planned_charts(book)[0]
    html = html_of(book, [(summary.chart, png(summary.build()))])
    assert html.count("data:image/png;base64,") == 1


def test_method_has_the_collective_formulas_and_facts_show_derated_rates():
    analysis = analyze_rows(
        [
            {"name": "mm", "op": "matmul", "B": "512", "D": "8192", "F": "8192",
             "hardware": "v5e", "compute_efficiency": "0.9", "hbm_efficiency": "0.5"},
            {"name": "ag", "op": "all_gather", "bytes": "2e9", "chips": "16", "hardware": "v5e",
             "network_efficiency": "0.5"},
        ]
    )  # fmt: skip
    html = render_report(analysis, "mix")
    method = html[html.index('id="method"') :]
    for formula in ("V / W<sub>bidi</sub>", "2V / W<sub>bidi</sub>", "V / (4 W<sub>bidi</sub>)",
                    "V(N&minus;1) / (N W)", "V(N&minus;1) / (N<sup>2</sup> W)"):  # fmt: skip
        assert formula in method
    context = report_context(analysis, "mix")
    (facts,) = context["chips"]
    assert facts["derate"] == "compute 90.0%, HBM 50.0%"
    assert facts["hbm_derated"] == pytest.approx(0.5 * 8.2e11)
    assert facts["other_derates"] == ["network 50.0% (1 row)"]
    assert 'derated">derated 410 GB/s<' in html  # under the nominal 820 GB/s
    assert "V = 2.00 GB" in html  # a collective row's size in the scenarios table
    assert "not counted here" in html  # the collective is left out of communication-bound
