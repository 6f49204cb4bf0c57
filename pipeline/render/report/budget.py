"""The report's size budget (docs/outputs.md#caps): report.html is one self-contained file
that is mailed, attached to tickets and opened in a browser, so it stays within
REPORT_BUDGET bytes on any run. Past it, first the per-chip tables are shortened (their row
cap cut to what the page's tables took, down to MIN_TABLE_ROWS; each series keeps its first
and slowest row, report_tables.shown_rows), then the last charts are left out (the sweep
charts first: they come last in the plan); each step is said in the report's notices. Every
row stays in the results and every chart in plots/."""

from __future__ import annotations

import base64
import re
from collections.abc import Sequence

import numpy as np

from pipeline.i18n import _
from pipeline.record import Record
from pipeline.render import format as fmt
from pipeline.render.charts import Chart
from pipeline.render.report.page import render_report, table_cap_notices

# bytes of report.html: it mails (most mail systems take 10-25 MB) and opens at once; the
# shipped fleet.csv (418 scenarios, 25 charts) fits whole at 1.4 MB, a 2.7 M-scenario Dask
# sweep (its sample) at about 2.7 MB
REPORT_BUDGET = 3_000_000
MIN_TABLE_ROWS = 50  # the least a chip's table is cut to before charts are left out


def render_report_within(
    analysis: Record,
    run_name: str,
    charts: Sequence[tuple[Chart, bytes]],
    notices: Sequence[str],
    max_table_rows: int,
    baseline=None,
    budget: int = REPORT_BUDGET,
) -> tuple[str, list[str]]:
    """render_report's page within `budget` bytes (see the module), and the notices of what
    it had to thin to stay there (none when the page fits as it is)."""
    first, kept, fitting = _first_cap(analysis, max_table_rows, charts, budget), list(charts), None
    # a page known to be too big at the cap asked is measured first at the least cap: what its
    # tables take there gives the cap they fit at (a guess of a row's bytes can be 3 x off)
    probing = MIN_TABLE_ROWS < first < max_table_rows
    rows = MIN_TABLE_ROWS if probing else first
    while True:
        said = _notices(analysis, notices, max_table_rows, rows, charts, kept, budget)
        html = render_report(analysis, run_name, kept, said[0], rows, baseline)
        size = len(html.encode("utf-8"))
        if size <= budget:
            better = min(first, _fitting_cap(html, size, rows, budget)) if probing else rows
            if better <= rows:
                return html, said[1]
            fitting, probing, rows = (html, said[1]), False, better
            continue
        if fitting:  # the measured cap overshot after all: the least cap's page, which fits
            return fitting
        probing = False
        if rows > MIN_TABLE_ROWS:  # the cap the tables fit at, from what they took here
            rows = max(MIN_TABLE_ROWS, min(rows - 1, _fitting_cap(html, size, rows, budget)))
        elif kept:
            kept = kept[: _charts_kept(kept, size - budget)]
        else:  # nothing left to thin (a long list of rejected rows, say): said, as it is
            over = _(
                "report.html is {size}, past its size budget of {budget} even with its tables "
                "cut and its charts left out: what is left (the rejected rows, the findings) is "
                "all on it.",
                size=fmt.size(size),
                budget=fmt.size(budget),
            )
            said = _notices(analysis, notices, max_table_rows, rows, charts, kept, budget)
            html = render_report(analysis, run_name, kept, [*said[0], over], rows, baseline)
            return html, [*said[1], over]


ROW_BYTES = 500  # about what a scenario table row costs on the page (measured: 1 M rows)
TABLES = re.compile(r'<table class="sortable wide rows.*?</table>', re.S)  # scenario tables


def _fitting_cap(html: str, size: int, rows: int, budget: int) -> int:
    """The cap a page rendered at `rows` fits the budget at: its scenario tables' bytes
    scale with the cap, the rest of the page does not (one more render, not two or three);
    a tenth of the room is kept for the series each table always shows."""
    tables = sum(len(m.group(0).encode("utf-8")) for m in TABLES.finditer(html))
    if tables <= 0:
        return int(rows * budget / size * 0.9)
    return int(rows * (budget - (size - tables)) * 0.9 / tables)


def _first_cap(analysis: Record, cap: int, charts, budget: int) -> int:
    """The table cap to render with first: `cap`, unless the chips' tables at it (each up
    to about 2 x cap rows: report_tables.shown_rows) and the charts already pass the budget,
    then the cap they would fit at (a render of a million-row run takes seconds: not one
    spent on a page known to be too big)."""
    totals = analysis.summary.per_hardware["total"].to_numpy()
    pictures = sum(len(data) * 4 // 3 for _chart, data in charts)
    rows = int(np.minimum(totals, 2 * cap).sum())
    room = budget - pictures - budget // 5  # the rest of the page: a fifth of the budget
    if rows * ROW_BYTES <= room or room <= 0:
        return cap
    return max(MIN_TABLE_ROWS, int(cap * room / (rows * ROW_BYTES)))


def _charts_kept(kept: list[tuple[Chart, bytes]], excess: int) -> int:
    """How many of the first charts to keep so the page loses `excess` bytes (a chart costs
    its base64 text); at least one fewer."""
    cost = [len(base64.b64encode(data)) for _chart, data in kept]
    n, freed = len(kept), 0
    while n > 0 and (freed < excess or n == len(kept)):
        n -= 1
        freed += cost[n]
    return n


def _notices(analysis, notices, cap, rows, charts, kept, budget) -> tuple[list[str], list[str]]:
    """The page's notices (the run's, its table cap ones said at the cap used) and those the
    budget adds."""
    added = []
    if rows < cap:
        added.append(
            _(
                "To stay within the report's size budget of {budget}, each chip's table shows "
                "its first {rows} scenarios (not {cap}) and the first and slowest of as many "
                "more series; every row is in {rows_in}.",
                budget=fmt.size(budget),
                rows=fmt.count(rows),
                cap=fmt.count(cap),
                rows_in=analysis.rows_in,
            )
        )
    if len(kept) < len(charts):
        left = len(charts) - len(kept)
        kinds = dict.fromkeys(c.kind for c, _data in charts[len(kept) :])  # in plan order
        values = {
            "budget": fmt.size(budget),
            "kept": fmt.count(len(kept)),
            "total": fmt.count(len(charts)),
            "left": fmt.count(left),
            "kinds": _(" and ").join(kinds),
        }
        if len(charts) == 1:
            text = _(
                "To stay within the report's size budget of {budget}, it embeds {kept} of "
                "{total} chart: the other {left} ({kinds} charts) are in plots/ and on the "
                "workbook's Charts sheet.",
                **values,
            )
        else:
            text = _(
                "To stay within the report's size budget of {budget}, it embeds {kept} of "
                "{total} charts: the other {left} ({kinds} charts) are in plots/ and on the "
                "workbook's Charts sheet.",
                **values,
            )
        added.append(text)
    if not added:
        return list(notices), []
    old = set(table_cap_notices(analysis, cap))
    own = [n for n in notices if n not in old] + table_cap_notices(analysis, rows)
    return [*own, *added], added
