"""render/report/headline.py: the report's top, the answer (bottom line, series, legend), the
headline tiles and the findings, as plain records for the template."""

from __future__ import annotations

import pytest

from pipeline.render.report.headline import answer_context, findings, no_comm, tiles
from tests.helpers import DATA, analyze_file, analyze_rows


@pytest.fixture(scope="module")
def small():
    """The book's examples, Q3 cut to B = 1|512, two measured times and two rejected rows."""
    return analyze_file(DATA / "review.csv")


def test_tiles_count_series_per_bound_and_the_rejected_rows(small):
    got = {t["key"]: t for t in tiles(small)}
    assert got["series"]["count"] == small.summary.bottom["series"]
    assert got["rejected"]["count"] == 2 and got["rejected"]["label"] == "rejected rows"
    assert got["rejected"]["detail"] == f"of {small.summary.source_rows} input rows"
    per = small.summary.bottom["bounds"]
    assert {k for k in got if k in ("compute", "memory", "network")} == {
        b for b, n in per.items() if n and b in ("compute", "memory", "network")
    }


def test_no_comm_says_why_no_row_is_communication_bound():
    assert no_comm(0, 0) == "None: there are no scenarios."
    assert no_comm(5, 0) == "None: every scenario is compute-bound."
    assert no_comm(1, 1) == "1 collective row: network-bound by nature (no FLOPs)."
    assert no_comm(3, 3) == "3 collective rows: network-bound by nature (no FLOPs)."
    assert no_comm(5, 2) == (
        "None: besides the collective rows, every other scenario (3) is compute-bound."
    )


def test_the_answer_explains_only_the_bounds_it_shows():
    a = analyze_rows([{"name": "m", "op": "matmul", "B": 8, "D": 4096, "F": 4096,
                       "hardware": "h100"}])  # fmt: skip
    got = answer_context(a)
    assert [r["bound"] for r in got["series"]] == ["memory"]
    assert [item["bound"] for item in got["legend"]] == ["memory"]
    assert got["series_total"] == 1 and got["serving"] == []


def test_findings_are_records_with_the_comm_sentence(small):
    got = findings(small)
    assert isinstance(got["slowest"], list) and got["slowest"]
    assert got["comm_none"] == no_comm(
        small.summary.scenarios, int(small.summary.findings["collective_rows"])
    )
