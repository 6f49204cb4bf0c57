"""The batch index page: a line per run, relative links only, hostile text escaped."""

from __future__ import annotations

import pytest

from pipeline.errors import PipelineError
from pipeline.render.report.index_page import render_index, since_text
from tests.helpers import EXTERNAL, HOSTILE, INDEX_RUNS


def test_index_page_links_each_report_with_counts():
    html = render_index(INDEX_RUNS)
    assert '<a href="q1-q5/report.html">q1-q5</a>' in html
    assert 'href="bad%20run/report.html"' in html
    assert "1,035" in html and "366" in html and "(35.4%)" in html  # communication = 365 + 1
    assert "1,045" in html  # total scenarios
    for text in HOSTILE:
        assert text not in html
    for needle in EXTERNAL:
        assert needle not in html


@pytest.mark.parametrize("href", ["https://example.com/r.html", "/abs/report.html", "//x/r"])
def test_index_refuses_links_that_leave_the_output_folder(href):
    runs = [{**INDEX_RUNS[0], "report_href": href}]
    with pytest.raises(PipelineError, match="relative path"):
        render_index(runs)


def test_index_entry_missing_a_field_is_an_error():
    run = {k: v for k, v in INDEX_RUNS[0].items() if k != "status"}
    with pytest.raises(PipelineError, match="status"):
        render_index([run])


def test_since_text_names_only_the_kinds_that_changed():
    assert since_text({"total": 0, "counts": {}}) == "0 changes"
    assert since_text({"total": 1, "counts": {"bound": 0, "fits": 1}}) == "1 change: 1 fit change"
    counts = {"t_lower": 3, "t_estimate": 2, "added": 1}
    assert since_text({"total": 6, "counts": counts}) == (
        "6 changes: 3 time changes, 2 estimate changes, 1 added"
    )
