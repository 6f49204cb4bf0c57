"""changes.csv and changes.html: the columns, CSV-injection safety, the page's sections."""

from __future__ import annotations

import pandas as pd

import pipeline
from pipeline.model.changes import compare_results
from pipeline.render.changes import SHOWN_ROWS, render_changes_html, write_changes_csv
from tests.helpers import BOOK_SCENARIOS


def _changes():
    old = pd.DataFrame(
        {"name": ["=HYPERLINK(1)", "flip", "gone"], "hardware": "h100",
         "bound": ["memory", "memory", "compute"], "t_lower": [1e-3, 2e-3, 1.0]}
    )  # fmt: skip
    new = pd.DataFrame(
        {"name": ["=HYPERLINK(1)", "flip", "<b>born</b>"], "hardware": "h100",
         "bound": ["memory", "compute", "compute"], "t_lower": [3e-3, 2e-3, 1.0]}
    )  # fmt: skip
    return compare_results(old, new)


def test_csv_columns_and_formula_cells_neutralized(tmp_path):
    path = write_changes_csv(_changes(), tmp_path / "changes.csv")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "name,hardware,change,old,new,ratio,causes"
    assert '"\'=HYPERLINK(1)","h100","t_lower","0.001","0.003",3,' in "\n".join(lines)
    back = pd.read_csv(path)
    assert sorted(back["change"]) == ["added", "bound", "removed", "t_lower"]


def test_empty_changes_give_a_header_only_csv(tmp_path, book):
    path = write_changes_csv(compare_results(book.results, book.results), tmp_path / "c.csv")
    assert path.read_text(encoding="utf-8") == "name,hardware,change,old,new,ratio,causes\n"


def test_page_sections_in_order_and_escaped():
    html = render_changes_html(_changes(), "old/<run>", "new")
    assert "&lt;b&gt;born&lt;/b&gt;" in html and "<b>born" not in html
    assert "old/&lt;run&gt;" in html
    order = [html.index(s) for s in ("class=\"counts\"", "Bound flips (1)",
             "Largest time changes (1)", "Added and removed (2)")]  # fmt: skip
    assert order == sorted(order)
    assert "3.00 ms" in html and "3.00×" in html  # through render.format


def test_many_rows_sharing_a_cause_are_grouped_and_sections_capped():
    hw = pd.DataFrame([{"name": "tpu-v5e", "hbm_bandwidth": 8.1e11}])
    old = pipeline.analyze(BOOK_SCENARIOS, hardware=hw).results
    hw2 = pd.DataFrame([{"name": "tpu-v5e", "hbm_bandwidth": 8.2e11}])
    new = pipeline.analyze(BOOK_SCENARIOS, hardware=hw2).results
    c = compare_results(old, new, threshold=0.0)
    html = render_changes_html(c, "a", "b")
    rows = int(c.groups.iloc[0]["rows"])
    assert rows > SHOWN_ROWS
    assert (
        f"<strong>{rows:,} rows</strong>: tpu-v5e <code>hbm_bandwidth 8.1e11 → 8.2e11</code>"
        in html
    )
    assert f"and {c.counts['t_lower'] - SHOWN_ROWS:,} more time changes in changes.csv" in html


def test_no_changes_page(book):
    html = render_changes_html(compare_results(book.results, book.results), "a", "b")
    assert "No changes since the baseline" in html and "None." in html
