"""scenarios/problems.py: problems found by masks, then sorted and filtered as reported."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from pipeline.errors import RowProblem
from pipeline.scenarios.problems import flag, flag_per_value, rejected, row_problems
from tests.helpers import coded


def test_flag_a_fixed_reason_or_one_per_position():
    mask = np.array([False, True, False, True])
    assert flag(mask, "B", "bad") == [(1, "B", "bad"), (3, "B", "bad")]
    assert flag(mask, "B", lambda p: f"row {p}") == [(1, "B", "row 1"), (3, "B", "row 3")]
    assert flag(np.zeros(4, dtype=bool), "B", "bad") == []


def test_flag_per_value_reasons_once_per_distinct_value():
    col = coded("h10", "v5e", "h10", "x", "h10")
    calls = []

    def reason(value: str) -> str:
        calls.append(value)
        return f"unknown {value}"

    found = flag_per_value(~col.is_("v5e"), "hardware", col, reason)
    assert sorted(calls) == ["h10", "x"]
    assert found == [
        (0, "hardware", "unknown h10"),
        (2, "hardware", "unknown h10"),
        (3, "hardware", "unknown x"),
        (4, "hardware", "unknown h10"),
    ]
    assert flag_per_value(np.zeros(5, dtype=bool), "hardware", col, reason) == []


def test_rejected_marks_rows_with_any_problem():
    found = [(2, "B", "x"), (0, "op", "y"), (2, "D", "z")]
    np.testing.assert_array_equal(rejected(found, 4), [True, False, True, False])
    assert not rejected([], 3).any()


def test_row_problems_sorted_by_row_then_column_then_reason():
    found = [
        (1, "hardware", "b"),
        (0, "*", "ragged"),  # not a column of the file: after every column
        (1, "op", "z"),
        (0, "B", "bad B"),
        (1, "op", "a"),
    ]
    problems = row_problems(
        found,
        file="s.csv",
        lines=np.array([4, 7]),
        names=pa.array(["first", "second"]),
        columns=["name", "op", "B", "hardware"],
    )
    assert problems == [
        RowProblem("s.csv", 4, "first", "B", "bad B"),
        RowProblem("s.csv", 4, "first", "*", "ragged"),
        RowProblem("s.csv", 7, "second", "op", "a"),
        RowProblem("s.csv", 7, "second", "op", "z"),
        RowProblem("s.csv", 7, "second", "hardware", "b"),
    ]


def test_ragged_rows_and_nul_cells_say_only_that():
    found = [
        (0, "*", "5 fields but the header has 4"),
        (0, "op", "unknown op"),  # shifted cells: dropped
        (1, "op", "NUL byte at character 2 of 'm\\x00'"),
        (1, "op", "unknown op 'm\\x00'"),  # the same cell: dropped
        (1, "B", "bad B"),  # another cell of the row: kept
    ]
    problems = row_problems(
        found,
        file="s.csv",
        lines=np.array([2, 3]),
        names=pa.array(["a", "b"]),
        columns=["name", "op", "B"],
        ragged=frozenset({0}),
    )
    assert [(p.line, p.column, p.reason) for p in problems] == [
        (2, "*", "5 fields but the header has 4"),
        (3, "op", "NUL byte at character 2 of 'm\\x00'"),
        (3, "B", "bad B"),
    ]
