"""A comparison in a notebook: counts, the changes grouped and worded as changes.html words
them (changes.groups, render.text.changes), the first bound flips, every text escaped,
a few groups and flips only."""

from __future__ import annotations

from dataclasses import replace

import markupsafe
import pandas as pd

from pipeline.changes.compare import compare_results
from pipeline.render.report import notebook_changes
from pipeline.render.report.notebook_changes import comparison_data, render_comparison_html
from tests.helpers import HOSTILE


def _frames(n: int, names=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """n scenarios of one series on h100 flipping memory -> compute, their time halved, by
    a new HBM bandwidth."""
    names = names or [f"s[B={b}]" for b in range(1, n + 1)]
    base = {"name": names, "series": "s", "hardware": "h100", "B": range(1, n + 1),
            "critical_batch": 310.0}  # fmt: skip
    old = pd.DataFrame({**base, "bound": "memory", "t_lower": 2.0, "hbm_bandwidth": 3.35e12})
    new = pd.DataFrame({**base, "bound": "compute", "t_lower": 1.0, "hbm_bandwidth": 4.8e12})
    return old, new


def test_the_counts_the_groups_and_the_flips():
    data = comparison_data(compare_results(*_frames(3)), "old.csv", "new.csv")
    assert [(c["kind"], c["n"]) for c in data["counts"] if c["n"]] == [("bound", 3), ("t_lower", 3)]
    (origin,) = data["groups"]["origins"]
    assert origin["title"].startswith("Hardware numbers")
    (block,) = origin["blocks"]
    assert block["cause"] == "h100 hbm_bandwidth 3.35e12 → 4.8e12"
    assert [line["text"] for line in block["lines"]] == ["memory → compute; time 0.500×"]
    assert [f["name"] for f in data["flips"]] == ["s[B=1]", "s[B=2]", "s[B=3]"]
    html = render_comparison_html(compare_results(*_frames(3)), "old.csv", "new.csv")
    assert "<code>old.csv</code> &rarr; <code>new.csv</code>" in html
    assert "<strong>3</strong> bound flips, <strong>3</strong> time changes</p>" in html
    assert '>3 <span style="font-size:smaller">(B = 1…3)</span></td>' in html


def test_only_the_first_flips_and_groups_are_listed_and_the_rest_counted(monkeypatch):
    monkeypatch.setattr(notebook_changes, "NOTEBOOK_FLIPS", 2)
    monkeypatch.setattr(notebook_changes, "NOTEBOOK_GROUPS", 1)
    old, new = _frames(5)
    new.loc[4, "series"] = "t"  # a second series: a second group
    html = render_comparison_html(compare_results(old, new), "a", "b")
    assert "(the first 2)" in html and "and 3 more flips: <code>.table</code> has them all" in html
    assert html.count("memory &rarr; compute") == 2
    assert "and 1 more group: <code>.table</code> has every change" in html


def test_no_changes_says_so():
    old, _ = _frames(2)
    html = render_comparison_html(compare_results(old, old), "a", "b")
    assert "2 scenarios compared by name, no changes" in html and "<table>" not in html


def test_every_text_is_escaped():
    old, new = _frames(2, names=list(HOSTILE))
    html = render_comparison_html(compare_results(old, new), HOSTILE[0], HOSTILE[1])
    for text in HOSTILE:
        assert text not in html and str(markupsafe.escape(text)) in html


def test_the_groups_shown_are_the_comparisons_own():
    old, new = _frames(3)
    other = compare_results(old.iloc[:1], new.iloc[:1]).groups  # s[B=1] alone
    carried = replace(compare_results(old, new), groups=other)
    (block,) = comparison_data(carried, "a", "b")["groups"]["origins"][0]["blocks"]
    assert [line["scenarios"] for line in block["lines"]] == [1]
