"""render/report/budget.py: report.html within REPORT_BUDGET on any run: a page within it
is render_report's own; past it the chips' tables are cut, then the last charts left out,
each said in a notice (tested with a lowered budget: a real 3 MB page takes a big run)."""

from __future__ import annotations

from pipeline.render import format as fmt
from pipeline.render.charts import Chart
from pipeline.render.report.budget import MIN_TABLE_ROWS, REPORT_BUDGET, render_report_within
from pipeline.render.report.page import render_report, table_cap_notices
from tests.helpers import figure_png


def _charts(n: int) -> list[tuple[Chart, bytes]]:
    png = figure_png("a sweep", size=(6, 4), dpi=100)
    return [(Chart("sweep", f"s{i}", f"plots/s{i}.png", "tpu-v5e", ("x",)), png) for i in range(n)]


def test_a_page_within_the_budget_is_left_as_it_is(book):
    notices = table_cap_notices(book, 500)
    html, said = render_report_within(book, "q1-q5", _charts(1), notices, 500)
    assert said == [] and html == render_report(book, "q1-q5", _charts(1), notices, 500)
    assert len(html.encode()) <= REPORT_BUDGET


def test_past_the_budget_the_tables_are_cut_then_charts_left_out_and_it_says_so(big):
    charts = _charts(6)
    full = render_report(big, "big", charts, table_cap_notices(big, 500), 500)
    budget = len(full.encode()) * 2 // 3  # a page a third too big
    html, said = render_report_within(big, "big", charts, table_cap_notices(big, 500), 500,
                                       budget=budget)  # fmt: skip
    assert len(html.encode()) <= budget
    assert said and all(n in html.replace("&#39;", "'") for n in said)
    assert said[0].startswith(f"To stay within the report's size budget of {fmt.size(budget)}")
    assert "shows its first" in said[0] and "(not 500)" in said[0]
    assert table_cap_notices(big, 500)[0] not in html  # the cap notices said at the cap used
    tiny = len(render_report(big, "big", [], [], MIN_TABLE_ROWS).encode()) + 5000
    html, said = render_report_within(big, "big", charts, [], 500, budget=tiny)
    assert len(html.encode()) <= tiny and html.count("data:image/png") < len(charts)
    assert "(sweep charts) are in plots/" in said[-1]


def test_a_page_known_to_be_too_big_is_first_rendered_at_a_cap_that_fits(book, big):
    """A million-row run spent a render of seconds on a page its tables alone put past the
    budget; the first cap comes from the rows each chip would list (report_budget)."""
    from pipeline.render.report.budget import _first_cap

    assert _first_cap(book, 500, _charts(1), REPORT_BUDGET) == 500  # it fits: as asked
    # big: 4 chips of 5,000 rows, up to 2 x 500 listed each
    cap = _first_cap(big, 500, [], 1_000_000)
    assert MIN_TABLE_ROWS <= cap < 500
    html, said = render_report_within(big, "big", [], table_cap_notices(big, 500), 500,
                                       budget=1_000_000)  # fmt: skip
    assert len(html.encode()) <= 1_000_000 and said


def test_past_the_budget_the_next_cap_is_what_the_pages_own_tables_took():
    """The tables scale with the cap and the rest of the page does not: a 3,000-byte page
    whose tables took 2,000 bytes at a cap of 100 fits 1,500 bytes at a cap of 22
    (a tenth kept for the rows every series shows); a page without tables is cut in
    proportion."""
    from pipeline.render.report.budget import _fitting_cap

    table = '<table class="sortable wide rows">' + "r" * (2_000 - 42) + "</table>"
    page = "p" * 1_000 + table
    assert len(table) == 2_000
    assert _fitting_cap(page, len(page), 100, 1_500) == 22  # 100 x 500 x 0.9 / 2,000
    assert _fitting_cap("p" * 3_000, 3_000, 100, 1_500) == 45  # 100 x 1,500 / 3,000 x 0.9


def test_a_page_known_to_be_too_big_is_measured_at_the_least_cap_then_filled(big, monkeypatch):
    """The first guess of a row's bytes can be far off (a transformer step's rows cost three
    times a plain matmul's): a page known to be too big at the cap asked is rendered at the
    least cap first, and what its tables took there gives the cap the page fills the budget
    at: two renders, the second within the budget and at more rows than the least."""
    from pipeline.render.report import budget as module

    caps = []

    def counted(analysis, name, kept, notices, rows, baseline):
        caps.append(rows)
        return render_report(analysis, name, kept, notices, rows, baseline)

    monkeypatch.setattr(module, "render_report", counted)
    html, said = render_report_within(big, "big", [], table_cap_notices(big, 500), 500,
                                       budget=1_000_000)  # fmt: skip
    assert caps[0] == MIN_TABLE_ROWS and len(caps) == 2
    assert MIN_TABLE_ROWS < caps[1] < 500
    assert len(html.encode()) <= 1_000_000 and said
