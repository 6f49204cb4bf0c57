"""changes.csv and changes.html: the columns, CSV-injection safety, the page's sections: the
changes grouped by series and cause first (the edits before the catalog's), then the detail;
one page for several inputs (render_changes_sections)."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

import pipeline
from pipeline.changes.compare import compare_results, merge_changes
from pipeline.render.report.changes_page import (
    SHOWN_ROWS,
    render_changes_html,
    render_changes_sections,
)
from pipeline.run.tables import write_changes_csv
from tests.helpers import BOOK_SCENARIOS, HOSTILE, analyze_file


def _frames():
    old = pd.DataFrame(
        {"name": ["=HYPERLINK(1)", "flip", "gone"], "hardware": "h100",
         "bound": ["memory", "memory", "compute"], "t_lower": [1e-3, 2e-3, 1.0]}
    )  # fmt: skip
    new = pd.DataFrame(
        {"name": ["=HYPERLINK(1)", "flip", "<b>born</b>"], "hardware": "h100",
         "bound": ["memory", "compute", "compute"], "t_lower": [3e-3, 2e-3, 1.0]}
    )  # fmt: skip
    return old, new


def _changes():
    return compare_results(*_frames())


def test_csv_columns_and_formula_cells_neutralized(tmp_path):
    path = write_changes_csv(_changes(), tmp_path / "changes.csv")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "name,hardware,change,old,new,ratio,causes,series"
    assert '"\'=HYPERLINK(1)","h100","t_lower","0.001","0.003",3,,"\'=HYPERLINK(1)"' in lines
    back = pd.read_csv(path)
    assert sorted(back["change"]) == ["added", "bound", "removed", "t_lower"]


def test_empty_changes_give_a_header_only_csv(tmp_path, book):
    path = write_changes_csv(compare_results(book.results, book.results), tmp_path / "c.csv")
    assert path.read_text(encoding="utf-8") == "name,hardware,change,old,new,ratio,causes,series\n"


def test_page_sections_in_order_and_escaped():
    html = render_changes_html(_changes(), "old/<run>", "new")
    assert "&lt;b&gt;born&lt;/b&gt;" in html and "<b>born" not in html
    assert "old/&lt;run&gt;" in html
    order = [html.index(s) for s in ("class=\"counts\"", "grouped by series and cause",
             "Bound flips (1)", "Largest time changes (1)", "Added and removed (2)")]  # fmt: skip
    assert order == sorted(order)
    assert "3.00 ms" in html and "3.00×" in html  # through render.format


def test_many_rows_sharing_a_cause_are_one_line_per_series_and_sections_capped():
    hw = pd.DataFrame([{"name": "tpu-v5e", "hbm_bandwidth": 8.1e11}])
    old = pipeline.analyze(BOOK_SCENARIOS, hardware=hw).results
    hw2 = pd.DataFrame([{"name": "tpu-v5e", "hbm_bandwidth": 8.2e11}])
    new = pipeline.analyze(BOOK_SCENARIOS, hardware=hw2).results
    c = compare_results(old, new, threshold=0.0)
    html = render_changes_html(c, "a", "b")
    rows = c.table["name"].nunique()  # every change: the one cause
    assert rows > SHOWN_ROWS
    summary = _grouped(html)
    assert "<strong>tpu-v5e</strong><br><code>hbm_bandwidth 8.1e11 → 8.2e11</code>" in summary
    assert f"{rows:,} scenarios in 8 series" in summary
    assert summary.count("<strong>q3_D4096</strong>") == 1
    assert f"and {c.counts['t_lower'] - SHOWN_ROWS:,} more time changes in changes.csv" in html


def test_no_changes_page(book):
    html = render_changes_html(compare_results(book.results, book.results), "a", "b")
    assert "No changes since the baseline" in html and "None." in html


def _grouped(html: str) -> str:
    """The page's grouped summary, from its heading to the detail's first section."""
    return html[html.index('<section class="grouped">') : html.index('<section class="flips">')]


def _issue_case(tmp_path):
    """Issue 29's case: tpu-v5e's HBM bandwidth 8.2e11 -> 9e11 and q5_h100_bf16's B 512 -> 128."""
    text = BOOK_SCENARIOS.read_text(encoding="utf-8")
    path = tmp_path / "q1-q5.csv"
    path.write_text(text.replace("q5_h100_bf16,matmul,512,", "q5_h100_bf16,matmul,128,"))
    hardware = pd.DataFrame([{"name": "tpu-v5e", "hbm_bandwidth": 9e11}])
    return analyze_file(path, hardware=hardware).results


def test_the_edit_leads_and_a_sweeps_flips_are_one_line(tmp_path, book):
    c = compare_results(book.results, _issue_case(tmp_path))
    html = render_changes_html(c, "old", "new")
    summary = _grouped(html)
    lines = summary.split('<tr class="first">')[1:]
    assert "<code>B 512 → 128</code>" in lines[0] and "q5_h100_bf16" in lines[0]
    assert "Edits to the scenarios" in summary.split('<tr class="first">')[0]
    assert summary.index("Edits to the scenarios") < summary.index("Hardware numbers")
    q3 = summary[summary.index("<strong>q3_D4096</strong>") :]
    q3 = q3[: q3.index("</tr>")]
    assert 'memory</span> &rarr; <span class="bound compute">compute</span>' in q3
    assert "14 of 512: B = 123…136" in q3 and "B = 1…512" in q3
    assert "q3_D4096[B=" not in summary  # the points are in the detail, not the summary
    flips = html[html.index('<section class="flips">') :]
    assert flips.index("q5_h100_bf16") < flips.index("q3_D4096[B=123]")  # the edit first


def test_names_in_the_grouped_summary_are_escaped():
    old = pd.DataFrame({"name": list(HOSTILE), "series": list(HOSTILE), "hardware": "h100",
                        "bound": "memory", "t_lower": 1.0})  # fmt: skip
    html = render_changes_html(compare_results(old, old.assign(t_lower=2.0)), "a", "b")
    for text in HOSTILE:
        assert text not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in _grouped(html)


def test_sections_give_one_page_grouped_over_every_input_first(tmp_path, book):
    edited = compare_results(book.results, _issue_case(tmp_path))
    quiet = compare_results(book.results, book.results)
    sections = [("q1-q5", edited, "old/q1-q5", "new/q1-q5"), ("same", quiet, "old/s", "new/s")]
    merged = merge_changes([("q1-q5", edited), ("same", quiet)])
    html = render_changes_sections(merged, sections, "Changes: old → new")
    assert "<title>Changes: old → new</title>" in html
    summary = _grouped(html.replace('<section class="input"', '<section class="flips"', 1))
    assert "<th>Input</th>" in summary and '<td class="nw">q1-q5</td>' in summary
    heads = [html.index(s) for s in ('class="grouped"', "<h2>q1-q5</h2>", "<h2>same</h2>")]
    assert heads == sorted(heads)
    assert "Bound flips (51)" in html and "Bound flips (0)" in html
    assert html.count("<code>old/q1-q5</code>") == 1


def test_the_one_input_page_is_the_sections_page_of_one():
    c = _changes()
    one = render_changes_sections(c, [("", c, "a", "b")], "Changes: a \u2192 b")
    assert render_changes_html(c, "a", "b") == one


def test_the_page_shows_the_comparisons_own_groups():
    changes = _changes()  # a time change, a flip, one added, one removed: four origins' lines
    other = compare_results(*(f[f["name"] == "flip"] for f in _frames()))
    assert len(changes.groups) == 4 and len(other.groups) == 1
    page = render_changes_html(replace(changes, groups=other.groups), "a", "b")
    assert page.count('<tbody class="origin ') == 1
