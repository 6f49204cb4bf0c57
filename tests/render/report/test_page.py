"""The HTML review report: the answer first (bottom line, series table, findings), golden
file, escaping, nothing external, table cap, nothing empty, index page."""

from __future__ import annotations

import base64
import dataclasses
import html as htmllib
import re
from html.parser import HTMLParser

import jinja2
import numpy as np
import pandas as pd
import pytest

from pipeline.errors import OutputError
from pipeline.render import format as fmt
from pipeline.render.charts import Chart, png
from pipeline.render.report import page as report
from pipeline.render.report.index_page import render_index
from pipeline.render.report.page import render_report, report_context
from pipeline.render.templates import REPORT_TEMPLATE, environment
from pipeline.render.text import answer
from pipeline.render.text.fleet import FLEET_SERIES, fleet_answers
from pipeline.render.text.serving import serving_sentences
from tests.helpers import (
    BOOK_SCENARIOS,
    DATA,
    EXTERNAL,
    GOLDEN,
    HOSTILE,
    INDEX_RUNS,
    ROOT,
    analyze_file,
    analyze_rows,
    figure_png,
    planned_charts,
    serving_frames,
    tiny_png,
)

SERIES_TABLE = re.compile(r'<table class="sortable series">(.*?)</table>', re.S)
SCENARIO_TABLE = re.compile(r'<table class="sortable wide rows[^"]*">(.*?)</table>', re.S)

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
    """The golden file's facts a reviewer relies on, in the order the report lists them: the
    answer (bottom line, tiles, series table), the findings, then the details."""
    html = html_of(small, golden_charts(small), rows=10)
    order = [
        small.source_sha256,
        'id="summary"',
        htmllib.escape(answer.bottom_line(small.summary.bottom)),
        '<div class="n">13 <span class="label">series</span>',
        "Series: how long, and bound by what",
        'id="findings"',
        "<h3>Slowest:</h3>",
        '<h3>Communication-bound <span class="term">(memory- or network-bound, the book\'s '
        "term)</span>:",
        "<h3>Not fitting in HBM:",
        "<h3>Measured vs predicted:</h3>",
        'id="sweeps"',
        'id="hardware"',
        'id="hw-1-h100"',
        'id="hw-2-tpu-v5e"',
        'id="method"',
        'id="rejected"',
    ]
    positions = [html.index(marker) for marker in order]
    assert positions == sorted(positions)
    assert "1.01 ms" in html  # intro: 1e12 FLOPs on an H100
    assert "197 TFLOP/s" in html and "16.0 GB" in html and "820 GB/s" in html
    assert "B=512 D=65536 F=65536" in html
    assert "bf16 \u00d7 int8 \u2192 bf16" in html
    # tpu-v5e: 12 rows, cap 10; the 2 past it are q3_D1024's slowest and q4: every row shown
    assert "more rows in results.csv." not in html and "table shows the first" not in html
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
    assert [base64.b64decode(p) for p in payloads] == [sweep, summary, roof]
    v5e = html.index('id="hw-2-tpu-v5e"')
    assert v5e < html.index('alt="Roofline: tpu-v5e"') < html.index('id="hw-3-tpu-v6e"')
    sweeps = html[html.index('id="sweeps"') : html.index('id="hardware"')]
    assert 'alt="Q3 sweep"' in sweeps and "q3_D4096" in sweeps and "q3_D1024" in sweeps
    by_hardware = html[html.index('id="hardware"') : html.index('id="hw-1-h100"')]
    assert 'alt="All chips"' in by_hardware  # the summary chart, below the answer


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
        "The h100 table shows the first 500 of 5,000 scenarios and, past them, each series' "
        "first and slowest row (1 more); the other 4,499 are in results.csv."
    )
    assert html.count("4,499 more rows in results.csv.") == 4
    for notice in notices:
        assert notice.replace("'", "&#39;") in html  # autoescaped
    tables = SCENARIO_TABLE.findall(html)
    # header + the first 500 rows + the sweep's slowest, its last
    assert [t.count("<tr>") for t in tables] == [502] * 4
    assert html.count('<details class="sweep-rows">') == 4  # one sweep per chip, folded
    assert html.count("5,000 scenarios (501 shown here)") == 4
    assert "Not fitting in HBM: 5,000 scenarios" in html
    assert "and 4,999 more of series huge_v5e" in html


def test_a_capped_table_keeps_every_series_first_and_slowest_row(book):
    """q1-q5 capped at 500: q3_D1024 starts past the cap on tpu-v5e, yet has its rows."""
    notices = report.table_cap_notices(book, 500)
    assert notices == [
        "The tpu-v5e table shows the first 500 of 1,032 scenarios and, past them, each series' "
        "first and slowest row (4 more); the other 528 are in results.csv."
    ]
    html = html_of(book, notices=())
    assert "Scenarios (first 500 of 1,032 and, past them, each series' first and " in html
    folded = re.findall(r'<details class="sweep-rows">(.*?)</details>', html, re.S)
    names = [re.findall(r'<tr><td(?: title="[^"]*")?>([^<]+)<', f) for f in folded]
    assert names[0][-1] == "q3_D4096[B=512]"  # its slowest, past the cap
    assert names[1] == ["q3_D1024[B=1]", "q3_D1024[B=512]"]  # its first and its slowest
    assert "512 scenarios (2 shown here)" in html
    assert ">q4_batched_int8<" in html  # a single scenario past the cap


def test_table_cap_is_configurable(big):
    html = html_of(big, rows=20, notices=())
    assert html.count("4,979 more rows in results.csv.") == 4
    assert len(html) < 200_000


def test_strict_undefined_catches_a_missing_variable(small):
    context = report_context(small, "q1-q5")
    template = environment().get_template(REPORT_TEMPLATE)
    template.render(**context)  # complete: fine
    incomplete = {k: v for k, v in context.items() if k != "findings"}
    with pytest.raises(jinja2.UndefinedError, match="findings"):
        template.render(**incomplete)
    block = context["chips"][0]["blocks"][0]
    row = dict(block["rows"][0])
    del row["bound"]
    chips = [{**context["chips"][0], "blocks": [{**block, "rows": [row]}]}]
    with pytest.raises(jinja2.UndefinedError, match="bound"):
        template.render(**{**context, "chips": chips})


def test_empty_errors_and_no_measurements(book):
    html = html_of(book, notices=())
    assert "None: every input row was valid." in html
    assert "No measured_seconds were given." in html
    assert 'id="sweeps"' not in html  # no sweep charts given
    assert 'class="charts"' not in html and 'class="chip-grid"' not in html  # no room kept
    assert html.count('class="facts alone"') == len(book.summary.per_hardware)


def test_records_hold_plain_python_values(small):
    context = report_context(small, "q1-q5")
    row = context["chips"][1]["blocks"][0]["rows"][0]
    plain = (str, int, float, bool, type(None))
    assert all(isinstance(v, plain) for v in row.values()), row
    for line in context["answer"]["series"]:
        assert all(isinstance(v, plain) for v in line.values()), line
    assert all(isinstance(v, plain) for tile in context["tiles"] for v in tile.values())
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
    assert "besides the collective rows, every other scenario (1) is compute-bound" in html


# ---------------------------------------------------------------- the answer first


def _cells(row: str) -> list[str]:
    """A table row's cells as the text a reader sees."""
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
    cells = [re.sub(r"<br>", " ", c) for c in cells]  # a line break: a space in the text
    return [htmllib.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in cells]


def _series_table(html: str) -> list[list[str]]:
    (table,) = SERIES_TABLE.findall(html)
    return [_cells(r) for r in re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>")[1], re.S)]


# each series' time (its range over a sweep) to 3 figures, as worked by hand from the book:
# 1e12 FLOP at H100's 989 TFLOP/s is 1.01 ms, at v6e's 918 TFLOP/s 1.09 ms
BOOK_TIMES = {
    "intro_h100_1e12_flops": "1.01 ms", "intro_v6e_1e12_flops": "1.09 ms",
    "v5e_critical_intensity": "10.6 ms", "dot_product": "4.88 µs", "two_chip_D8192": "2.98 ms",
    "two_chip_D9216": "3.14 ms", "q1_int8_book_constants": "5.58 ms", "q1_int8_catalog": "5.58 ms",
    "q2_int8_weights_bf16": "11.2 ms", "q3_D4096": "20.5 µs – 87.2 µs",
    "q3_D1024": "1.28 µs – 5.45 µs", "q4_batched_int8": "5.24 ms", "q5_h100_bf16": "4.45 ms",
}  # fmt: skip


def test_the_top_is_the_answer_with_the_series_of_results_csv(book, tmp_path):
    """The bottom line, then one line per series whose time, bound, critical batch and fit
    are those of results.csv (min-max over a sweep; a sweep's change point is its critical
    batch), then the findings: all before any chart or per-scenario table."""
    book.write(tmp_path / "q", plots=False, workbook=False)
    html = (tmp_path / "q" / "report.html").read_text(encoding="utf-8")
    results = pd.read_csv(tmp_path / "q" / "results.csv")
    body = html[html.index("<body>") :]
    top = body[: body.index('id="hardware"')]  # written without charts: no sweeps section
    assert "<img" not in top and '<details class="sweep-rows">' not in top
    assert not SCENARIO_TABLE.findall(top)
    assert top.index("bottom-line") < top.index('class="cards"') < top.index("sortable series")
    assert top.index("sortable series") < top.index('id="findings"')
    assert htmllib.escape(answer.bottom_line(book.summary.bottom)) in top
    assert '<div class="n">13 <span class="label">series</span></div>' in top
    assert '<div class="share">1,035 scenarios</div>' in top
    assert '<div class="n">7 <span class="label">compute-bound</span></div>' in top
    assert '<div class="share">series \u00b7 669 scenarios</div>' in top

    table = _series_table(html)
    groups = results.groupby("series", sort=False)
    assert [row[6] for row in table] == list(BOOK_TIMES.values())
    assert [row[0] for row in table] == list(groups.groups)  # every series, in file order
    for row, (name, rows) in zip(table, groups, strict=True):
        _, hardware, op, _, dtype, chips, time, bound, critical, fits = row
        assert (hardware, op) == (rows["hardware"].iloc[0], rows["op"].iloc[0]), name
        assert chips == "|".join(map(str, pd.unique(rows["chips"]))), name  # q1-q5: 1 or 2
        assert dtype in ("bf16", "int8", "bf16 \u00d7 int8 \u2192 bf16"), name
        assert time == BOOK_TIMES[name], name
        assert fits == ("yes" if rows["fits"].all() else "no"), name
        bounds = set(rows["bound"])
        if len(bounds) == 1:
            assert bound == bounds.pop(), name
        else:  # a batch sweep: memory-bound below its critical batch, compute-bound from it
            turn = int(rows.loc[rows["bound"] == "compute", "B"].min())
            assert set(rows["critical_batch"]) == {turn}, name
            at = fmt.count(turn)
            assert bound == f"memory below B = {at}, compute from B = {at}", name
            assert critical == at, name
    assert sum(1 for row in table if "below" in row[7]) == 2  # q3_D4096 and q3_D1024


def test_findings_come_before_the_per_scenario_tables_folded_by_series(book):
    html = html_of(book, rows=2000, notices=())
    findings = html.index('id="findings"')
    tables = [m.start() for m in SCENARIO_TABLE.finditer(html)]
    assert tables and findings < html.index('id="hardware"') < min(tables)
    assert html.count('<details class="sweep-rows">') == 2  # q3_D4096, q3_D1024; 512 rows each
    folded = re.findall(r'<details class="sweep-rows">(.*?)</details>', html, re.S)
    assert [f.count("<tr>") for f in folded] == [513, 513]
    assert all("memory below B = " in f.split("</summary>")[0] for f in folded)
    plain = html[html.index('id="hw-2-tpu-v5e"') : html.index('<details class="sweep-rows">')]
    assert ">v5e_critical_intensity<" in plain  # a single scenario: listed plainly
    for finding in ("Slowest:", "Communication-bound", "Not fitting in HBM:"):
        assert html.index(f"<h3>{finding}") < min(tables)


def test_a_collectives_only_run_shows_nothing_empty():
    analysis = analyze_file(BOOK_SCENARIOS.parent / "collectives.csv")
    charts = [
        (Chart("summary", "All chips", "plots/summary.png"), tiny_png(3, 2, (1, 2, 3))),
        (
            Chart(
                "sweep", "V on tpu-v5e", "plots/s.png", "tpu-v5e", ("v5e_allgather_message_sweep",)
            ),
            tiny_png(3, 2, (4, 5, 6)),
        ),
    ]
    html = html_of(analysis, charts, notices=())
    assert "No chart for this hardware" not in html
    assert 'class="charts"' not in html and 'class="chip-grid"' not in html
    assert "Intensity<br>" not in html and "Critical<br>" not in html  # no math, no batch
    assert 'class="card compute' not in html and 'class="card memory' not in html
    assert '<div class="n">15 <span class="label">network-bound</span></div>' in html
    assert '<div class="n">1 <span class="label">not fitting in HBM</span></div>' in html
    terms = html[html.index('class="terms') :]
    terms = terms[: terms.index("</p>")]
    assert "a faster link, or less data between chips, helps" in terms
    assert "more FLOP/s helps" not in terms  # only the bounds the table shows are explained
    assert "not counted here" not in html  # the findings' sentence already says so, once
    assert "27 collective rows: network-bound by nature" in html
    assert html.count('<details class="sweep-rows">') == 2  # the two message-size sweeps


def _text(html: str, start: str, end: str) -> str:
    """The words of the page between two marks, tags and runs of spaces gone."""
    part = html[html.index(start) : html.index(end)]
    return htmllib.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", part)))


def test_a_collectives_only_run_does_not_contradict_itself():
    """27 network-bound collective rows: the findings do not say "0 scenarios" of
    communication, the sweeps say time against message size (not FLOP/s), and the sweeps'
    table shows the chips, no critical batch and no % of peak (a collective does no math)."""
    analysis = analyze_file(BOOK_SCENARIOS.parent / "collectives.csv")
    sweep = Chart("sweep", "tpu-v5e: collective time vs bytes", "plots/s.png", "tpu-v5e",
                  ("v5e_allgather_message_sweep", "v5e_allreduce_message_sweep"))  # fmt: skip
    html = html_of(analysis, [(sweep, tiny_png(3, 2, (4, 5, 6)))], notices=())
    findings = _text(html, 'id="findings"', 'id="sweeps"')
    comm = findings[findings.index("Communication-bound") : findings.index("Not fitting")]
    assert "no op with FLOPs" in comm
    assert "27 collective rows: network-bound by nature" in comm
    assert "time against message size is in Sweeps" in comm
    for never in ("0 scenarios", "0 network", "None"):
        assert never not in comm
    sweeps = _text(html, 'id="sweeps"', 'id="hardware"')
    assert "FLOP/s" not in sweeps
    assert "time against its message size" in sweeps
    assert "hop-latency floor" in sweeps and "bandwidth is reached" in sweeps
    for never in ("Critical batch", "% of peak", "—", "0%"):
        assert never not in sweeps
    part = html[html.index('id="sweeps"') : html.index('id="hardware"')]
    (table,) = re.findall(r'<table class="sortable">(.*?)</table>', part, re.S)
    assert '<th class="r" title="chips the op runs on">Chips</th>' in table
    assert '>v5e_allgather_message_sweep</td><td>tpu-v5e</td><td class="r">16</td>' in table
    # each series' latency knee in its own column; no bound counts (all network-bound)
    assert ">Latency knee (V)</th>" in table and ">compute</th>" not in table
    assert "v5e_allreduce_message_sweep tpu-v5e 16 7 720 kB (45.0 kB per chip) 16.0 µs" in sweeps


def test_bounds_are_explained_where_they_appear(book):
    html = html_of(book, notices=())
    for bound in ("compute", "memory", "network"):
        meaning = htmllib.escape(answer.meaning()[bound])
        assert f'<span class="bound {bound}" title="{meaning}">' in html
        assert answer.meaning()[bound].partition(": ")[2] in html  # in the legend, as text
    (header,) = re.findall(r"<thead>(.*?)</thead>", SERIES_TABLE.findall(html)[0], re.S)
    assert "Critical<br>batch" in header and "Time<br>(t_lower)" in header
    assert "smallest batch at which the op is compute-bound" in header  # its tooltip


def test_the_series_table_says_when_it_shows_only_the_first(tmp_path):
    rows = [
        {"name": f"m{i}", "op": "matmul", "B": i + 1, "D": 64, "F": 64, "hardware": "v5e"}
        for i in range(answer.SERIES_ROWS + 7)
    ]
    html = html_of(analyze_rows(rows), notices=())
    assert len(_series_table(html)) == answer.SERIES_ROWS
    assert f"The first {answer.SERIES_ROWS} of {answer.SERIES_ROWS + 7} series" in html


def test_nothing_computed_gives_a_bottom_line_and_no_series_table():
    analysis = analyze_rows([{"name": "bad", "op": "matmul", "B": -1, "D": 2, "F": 3,
                              "hardware": "v5e"}])  # fmt: skip
    html = html_of(analysis, notices=())
    assert "No scenario was computed: every row was rejected" in html
    assert not SERIES_TABLE.findall(html)
    assert '<div class="n">1 <span class="label">rejected row</span></div>' in html
    assert_well_formed(html)


# ---------------------------------------------------------------- the fleet answer

FLEET_TABLE = re.compile(r'<table class="fleet">(.*?)</table>', re.S)


@pytest.fixture(scope="module")
def fleet_run():
    """scenarios/fleet.csv: seven fleet series (chips, dtypes, chip counts)."""
    return analyze_file(ROOT / "scenarios" / "fleet.csv")


def _fleet_section(html: str) -> str:
    return html[html.index('<div class="fleet" id="fleet">') : html.index('id="findings"')]


def test_the_fleet_answer_follows_the_series_table(fleet_run):
    html = html_of(fleet_run, notices=())
    assert_well_formed(html)
    assert '<a href="#fleet">Which chip</a>' in html
    assert html.index("Series: how long") < html.index("Which chip, precision and chip count")
    section = _fleet_section(html)
    answers = fleet_answers(fleet_run.summary.fleet)
    tables = FLEET_TABLE.findall(section)
    assert len(tables) == len(answers) == 7 and "fleet series;" not in section  # not capped
    ranking = fleet_run.summary.fleet
    for a, table in zip(answers, tables, strict=True):
        assert f"<h3>{htmllib.escape(a['series'])}:</h3>" in section
        assert htmllib.escape(a["sentence"], quote=False) in section
        labels = [_cells(row)[0] for row in re.findall(r"<tr>(.*?)</tr>", table)[1:]]
        lead = a["columns"][a["lead"]]["point"]
        ranked = ranking[(ranking["series"] == a["series"]) & (ranking["point"] == lead)]
        assert labels == [r["label"] for r in a["rows"]]
        assert [r["hardware"] for r in a["rows"]] == list(ranked.sort_values("rank")["hardware"])
    mlp = tables[0]
    assert 'B = 256<br><span class="point">(critical batch)</span>' in mlp
    assert (
        'class="r lead"' in mlp and len(re.findall("<th[ >]", mlp)) == 5
    )  # point, 3 batches, fits
    first = re.findall(r"<tr>(.*?)</tr>", mlp)[1]
    assert _cells(first) == ["gb200", "58.7 µs 1.00×", "61.1 µs 1.00×", "770 µs 1.00×",
                             "at every point"]  # fmt: skip
    assert '<td class="r nw memory" title="rank 1, memory-bound">58.7 µs' in first
    assert '<td class="r nw compute" title="rank 1, compute-bound">770 µs' in first
    assert "fastest one&rsquo;s at the same point" in section  # what the ratio means


def test_the_fleet_answer_is_capped_and_escaped():
    rows = [
        {"name": f"{HOSTILE[0]}{i}", "op": "matmul", "B": 8, "D": 64, "F": 64,
         "hardware": "v5e|h100", "dtype": "bf16|fp8"}
        for i in range(FLEET_SERIES + 2)
    ]  # fmt: skip
    html = html_of(analyze_rows(rows), notices=())
    section = _fleet_section(html)
    assert HOSTILE[0] not in html
    assert f"<h3>{htmllib.escape(HOSTILE[0])}0:</h3>" in section
    assert len(FLEET_TABLE.findall(section)) == FLEET_SERIES
    assert f"The first {FLEET_SERIES} of {FLEET_SERIES + 2} fleet series; 2 more" in section


def test_a_run_without_fleet_series_has_no_fleet_answer(small):
    html = html_of(small, notices=())
    assert 'id="fleet"' not in html and "Which chip" not in html
    fleet = report_context(small, "q1-q5")["fleet"]
    assert {k: v for k, v in fleet.items() if k != "fits_reading"} == {
        "series": [], "bounds": [], "total": 0, "more": 0
    }  # fmt: skip


MODELS_TABLE = re.compile(r'<table class="sortable series models">(.*?)</table>', re.S)
STEP = {"op": "transformer", "model": "llama3-8b", "hardware": "h100", "B": 8, "T": 1, "S": 1024}


def test_the_models_table_leads_with_a_line_per_step():
    run = analyze_file(ROOT / "scenarios" / "models.csv")
    html = html_of(run, notices=())
    assert_well_formed(html)
    assert '<a href="#models">Models</a>' in html
    heading = html.index("Models: per step, how long, what bounds it, does it fit")
    assert html.index('class="bottom-line"') < heading < html.index("Series: how long")
    (table,) = MODELS_TABLE.findall(html)
    lines = [_cells(row) for row in re.findall(r"<tr>(.*?)</tr>", table)[1:]]
    steps = run.results[run.results["op"] == "transformer"]
    steps = steps.sort_values("t_lower", ascending=False, kind="stable")  # the slowest first
    best = run.summary.steps.set_index("name")["best"]
    assert [line[0] for line in lines] == [
        f"{n} best" if best[n] else n for n in steps["name"]
    ]  # one per step, each configuration's best marked
    for line, (_, step) in zip(lines, steps.iterrows(), strict=True):
        assert line[11].startswith(step["bound"] + " ")
    by_name = {line[0].removesuffix(" best"): line for line in lines}
    # a prefill of 2,048 tokens in 180.6 ms: 88.2 µs a token, 11,339 tokens/s; a decode step of
    # 32 sequences in 29.2 ms: 29.2 ms a token, 1,095 tokens/s
    assert by_name["llama3_8b_prefill_v5e"][8:11] == ["181 ms", "88.2 µs", "11,339"]
    decode = by_name["llama3_8b_decode_v5e"]
    assert decode[8:11] == ["29.2 ms", "29.2 ms", "1,095"]
    assert decode[1:8] == ["llama3-8b", "tpu-v5e", "bf16", "1", "32", "1", "2,048"]
    assert decode[11:] == ["memory 100%", "16.1 GB", "8.59 GB", "no 24.7 GB of 16.0 GB", "0",
                           "attention 35.9%"]  # fmt: skip
    assert by_name["llama3_70b_decode_v5e"][3] == "bf16, KV fp8"


def test_model_step_names_stay_text():
    names = [*HOSTILE, "=cmd|' /C calc'!A0"]
    html = html_of(analyze_rows([{"name": n, **STEP} for n in names]), notices=())
    assert_well_formed(html)
    assert not any(n in html for n in HOSTILE)
    (table,) = MODELS_TABLE.findall(html)
    rows = re.findall(r"<tr>(.*?)</tr>", table)[1:]
    assert [_cells(row)[0] for row in rows] == names  # rows of their own: no best
    assert f'<td class="name">{htmllib.escape(HOSTILE[0])}</td>' in rows[0]


def test_a_run_without_steps_has_no_models_table(small):
    html = html_of(small, notices=())
    assert 'id="models"' not in html and "Models:" not in html and "#models" not in html
    assert report_context(small, "q1-q5")["models"]["rows"] == []


def test_a_model_chart_without_sweep_charts_is_not_introduced_as_a_sweep():
    """The Sweeps section's words describe sweep charts: with only a model chart (its step's
    lines are on no sweep chart) they are not said."""
    analysis = analyze_rows([{"name": "m", "op": "transformer", "model": "llama3-8b",
                              "hardware": "h100", "B": "1|8", "T": 1, "S": 2048}])  # fmt: skip
    chart = Chart("model", "m: tokens/s", "plots/model-m.png", series=("m",))
    html = html_of(analysis, [(chart, tiny_png(4, 3, (10, 20, 30)))])
    section = html[html.index('id="sweeps"') : html.index('id="hardware"')]
    assert 'alt="m: tokens/s"' in section and "One line per series" not in section


def test_rows_measured_below_the_floor_come_first_with_their_likely_cause():
    """Issue 41: the measured findings open with the rows faster than t_lower, each with its
    likely cause; a run with none has no such list."""
    rows = [
        {"name": "l2", "op": "matmul", "B": 32768, "D": 512, "F": 32, "hardware": "h100",
         "measured_seconds": 7.5e-6},
        {"name": "ar", "op": "all_reduce", "bytes": 32768, "chips": 8, "hardware": "h100",
         "measured_seconds": 1e-6},
        {"name": "math", "op": "matmul", "B": 8192, "D": 8192, "F": 8192, "hardware": "h100",
         "measured_seconds": 2e-4},
    ]  # fmt: skip
    a = analyze_rows(rows)
    page = htmllib.unescape(re.sub(r"<[^>]+>", "", render_report(a, "run")))
    below = _text(page, "Measured below the floor: 3 scenarios", "Measured vs predicted")
    for said in ("cache reuse (L2 holds an operand the benchmark replays)",
                 "a one-shot all_reduce under the ring's latency floor",
                 "check the catalog's rates"):  # fmt: skip
        assert said in below, said
    above = analyze_rows([{**rows[2], "measured_seconds": 1.0}])  # none under: no such list
    assert "Measured below the floor" not in render_report(above, "run")


def test_the_serving_answer_opens_the_report_under_the_bottom_line(small):
    serving, curves = serving_frames()
    serving.loc[serving["series"] == "llama3-70b", "config"] = "b200 <fp8> ×4"  # escaped
    record = dataclasses.replace(
        small,
        summary=dataclasses.replace(small.summary._summary, serving=serving, serving_curves=curves),
    )
    page = render_report(record, "serve")
    said = serving_sentences(serving)
    assert len(said) == 2 and "<fp8>" in said[0]
    at = [page.index(htmllib.escape(s, quote=False)) for s in said]
    assert page.index('<p class="bottom-line">') < at[0] < at[1] < page.index('<div class="cards">')
    assert "<fp8>" not in page
    assert page.count("serving-answer") == 2
    assert "serving-answer" not in render_report(small, "small")  # none without serve rows
