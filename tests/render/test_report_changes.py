"""The records of "Since the baseline" (report and workbook): counts per kind, bound flips
and time changes grouped by cause, the biggest first, capped."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd
import pytest

from pipeline.model.changes import compare_results
from pipeline.render.report_changes import (
    NO_CAUSE,
    bound_flips,
    changes_summary,
    time_changes,
)


def _frame(rows: list[tuple]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["name", "hardware", "bound", "t_lower", "hbm_bandwidth"])


OLD = _frame(
    [(f"m{i}", "tpu-v5e", "memory", 1e-3, 8.1e11) for i in range(5)]
    + [("slow", "h100", "compute", 1e-3, 3.35e12), ("gone", "h100", "compute", 1.0, 3.35e12)]
)
NEW = _frame(
    [(f"m{i}", "tpu-v5e", "compute", 1e-3 * (0.9 - i / 100), 8.2e11) for i in range(5)]
    + [("slow", "h100", "compute", 3e-3, 3.35e12), ("born", "h100", "compute", 1.0, 3.35e12)]
)


def _summary(old=OLD, new=NEW):
    return changes_summary(SimpleNamespace(path="yesterday/q1", changes=compare_results(old, new)))


def test_counts_every_kind_in_order_and_a_line():
    since = _summary()
    assert since["baseline"] == "yesterday/q1" and since["compared"] == 6
    assert [(c["kind"], c["n"]) for c in since["counts"]] == [
        ("bound", 5), ("fits", 0), ("critical_batch", 0), ("t_lower", 6), ("added", 1),
        ("removed", 1),
    ]  # fmt: skip
    assert since["total"] == 13
    assert since["line"].startswith("5 bound flips, 0 fit changes,")
    assert since["line"].endswith("6 time changes, 1 added, 1 removed")


def test_bound_flips_grouped_by_cause():
    (group,) = _summary()["flips"]
    assert group == {
        "rows": 5, "example": "m0", "hardware": "tpu-v5e", "old": "memory", "new": "compute",
        "cause": "hbm_bandwidth 8.1e11 → 8.2e11",
    }  # fmt: skip


def test_time_changes_largest_first_with_their_range():
    first, second = _summary()["times"]
    assert (first["example"], first["rows"], first["ratio"]) == ("slow", 1, pytest.approx(3.0))
    assert first["cause"] == NO_CAUSE  # nothing of its inputs moved
    assert (second["rows"], second["example"]) == (5, "m4")  # 0.86: furthest from 1
    assert (second["low"], second["high"]) == (pytest.approx(0.86), pytest.approx(0.9))
    assert second["old"] == pytest.approx(1e-3) and second["new"] == pytest.approx(0.86e-3)


def test_no_changes_gives_empty_tables():
    since = _summary(OLD, OLD)
    assert since["total"] == 0 and since["flips"] == [] and since["times"] == []


def test_groups_are_capped():
    table = pd.DataFrame(
        {
            "name": [f"r{i}" for i in range(9)],
            "hardware": [f"c{i}" for i in range(9)],
            "change": "bound",
            "old": "memory",
            "new": "compute",
            "ratio": float("nan"),
            "causes": "",
        }  # fmt: skip
    )
    assert len(bound_flips(table, limit=4)) == 4
    assert len(time_changes(table)) == 0
