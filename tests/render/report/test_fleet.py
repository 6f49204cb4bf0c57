"""The report's fleet answer (render.report.fleet): two-line headings naming each chosen
point, the bounds its cells show, and how many fleet series the cap leaves out."""

from __future__ import annotations

import pytest

import pipeline
from pipeline.render.report.fleet import column_heading, fleet_context
from pipeline.render.text.fleet import fleet_answers
from tests.helpers import ROOT


@pytest.fixture(scope="module")
def fleet():
    return pipeline.analyze(ROOT / "scenarios" / "fleet.csv").summary.fleet


@pytest.mark.parametrize(
    ("point", "at", "heading"),
    [
        ("critical batch", "B = 256", ("B = 256", "critical batch")),
        ("first", "B = 1, D = 8,192", ("B = 1, D = 8,192", "first")),
        ("only", "", ("t_lower", "")),  # a series of fleet axes alone
    ],
)
def test_a_column_heading_names_its_point(point, at, heading):
    assert column_heading({"point": point, "at": at}) == heading


def test_the_context_is_fleet_text_answers_with_headings(fleet):
    context = fleet_context(fleet)
    answers = fleet_answers(fleet)
    assert [a["series"] for a in context["series"]] == [a["series"] for a in answers]
    assert context["series"][0]["rows"] == answers[0]["rows"]
    assert [c["heading"] for c in context["series"][0]["columns"]] == [
        ("B = 1", "first"),
        ("B = 256", "critical batch"),
        ("B = 4,096", "last"),
    ]
    assert context["bounds"] == ["compute", "memory", "network"]
    assert (context["total"], context["more"]) == (7, 0)


def test_the_cap_counts_what_it_leaves_out(fleet):
    context = fleet_context(fleet, limit=2)
    assert len(context["series"]) == 2 and (context["total"], context["more"]) == (7, 5)
    assert context["bounds"] == ["compute", "memory"]  # the two matmul series
    empty = fleet_context(fleet.iloc[:0])
    assert {k: v for k, v in empty.items() if k != "fits_reading"} == {
        "series": [], "bounds": [], "total": 0, "more": 0
    }  # fmt: skip
