"""The records of "Since the baseline" (report and workbook): counts per kind, then the
changes grouped by series and cause as changes.html groups them, capped."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import pandas as pd

from pipeline.changes.compare import compare_results
from pipeline.render.report.changes import MAX_GROUPS, changes_summary


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


def _summary(old=OLD, new=NEW, **kw):
    baseline = SimpleNamespace(path="yesterday/q1", changes=compare_results(old, new))
    return changes_summary(baseline, **kw)


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


def test_changes_grouped_by_origin_cause_and_series():
    grouped = _summary()["grouped"]
    assert [o["origin"] for o in grouped["origins"]] == ["catalog", "model", "added", "removed"]
    (block,) = grouped["origins"][0]["blocks"]
    assert (block["chip"], block["inputs"]) == ("tpu-v5e", "hbm_bandwidth 8.1e11 → 8.2e11")
    assert block["scenarios"] == "5 scenarios" and block["series"] == "5 series"
    first = block["lines"][0]
    assert (first["series"], first["scenarios"]) == ("m0", 1)
    assert first["text"] == "memory → compute; time 1.00 ms → 900 µs (0.900×)"
    slow = grouped["origins"][1]["blocks"][0]["lines"][0]
    assert slow["text"] == "time 1.00 ms → 3.00 ms (3.00×)"  # nothing of its inputs moved


def test_the_order_reads_like_the_groups():
    since = _summary()
    table = compare_results(OLD, NEW).table
    assert table.iloc[since["order"]]["name"].tolist()[:2] == ["m0", "m0"]


def test_no_changes_give_no_groups():
    since = _summary(OLD, OLD)
    assert since["total"] == 0 and since["grouped"]["origins"] == []


def test_groups_are_capped():
    old = _frame([(f"r{i}", f"c{i}", "memory", 1.0, 1.0) for i in range(MAX_GROUPS + 3)])
    new = old.assign(bound="compute")
    grouped = _summary(old, new)["grouped"]
    assert (grouped["groups"], grouped["shown"], grouped["more"]) == (MAX_GROUPS + 3, MAX_GROUPS, 3)
    assert _summary(old, new, limit=None)["grouped"]["more"] == 0


def test_the_groups_are_the_comparisons_own_never_worked_out_again():
    other = compare_results(OLD.iloc[:1], NEW.iloc[:1]).groups  # m0's line only
    carried = replace(compare_results(OLD, NEW), groups=other)
    since = changes_summary(SimpleNamespace(path="p", changes=carried))
    assert since["grouped"]["groups"] == len(other) == 1
