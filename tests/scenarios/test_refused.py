"""scenarios/refused.py: the scenarios the model refused leave the rows and their problems
join the file's, in line order."""

from __future__ import annotations

import numpy as np

from pipeline.errors import RowProblem
from pipeline.scenarios import load_records
from pipeline.scenarios.refused import refuse_rows, with_problems

ROWS = [
    {"name": "a", "op": "matmul", "B": "8", "D": "8", "F": "8", "hardware": "v5e"},
    {"name": "s", "op": "matmul", "B": "1|2|3", "D": "8", "F": "8", "hardware": "v5e"},
    {"name": "bad", "op": "matmul", "B": "8", "D": "8", "F": "8", "hardware": "h10"},
]  # fmt: skip


def test_nothing_refused_changes_nothing(catalog):
    loaded = load_records(ROWS, catalog)
    assert refuse_rows(loaded, np.ones(len(loaded.frame), bool), []) is loaded


def test_refused_scenarios_leave_and_their_problems_join_in_line_order(catalog):
    loaded = load_records(ROWS, catalog)
    assert loaded.frame["name"].tolist() == ["a", "s[B=1]", "s[B=2]", "s[B=3]"]
    refused = [RowProblem("<rows>", 3, "s", "hbm_efficiency", "too slow (at 's[B=2]')")]
    after = refuse_rows(loaded, np.array([True, True, False, True]), refused)
    assert after.frame["name"].tolist() == ["a", "s[B=1]", "s[B=3]"]
    assert [(p.line, p.name, p.column) for p in after.problems] == [
        (3, "s", "hbm_efficiency"),
        (4, "bad", "hardware"),  # the file's own problem, after: line order
    ]
    assert after.table is loaded.table and after.source == loaded.source


def test_with_problems_keeps_a_lines_own_problems_first():
    own = [RowProblem("f", 5, "x", "B", "bad"), RowProblem("f", 2, "y", "D", "bad")]
    refused = [RowProblem("f", 5, "x", "hardware", "past float64")]
    assert [(p.line, p.column) for p in with_problems(own, refused)] == [
        (2, "D"), (5, "B"), (5, "hardware")]  # fmt: skip
