"""Where a sweep turns compute-bound, one rule for a series line and a chart's line: the
book's Q3 turns, a fleet sweep's turn per chip, and the lines that have none."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.summary.turns import MIXED, batch_dim, change_points, line_turns
from tests.helpers import ROOT, analyze_file, analyze_rows


def lines_of(analysis, by: list[str]) -> tuple[pd.DataFrame, list, list[np.ndarray]]:
    """The analysis's rows grouped by `by` (as a chart's lines are), keys and positions."""
    frame = analysis.results
    groups = frame.groupby([frame[c].astype(str) for c in by], sort=True).indices
    return frame, list(groups), list(groups.values())


@pytest.mark.parametrize("scenarios", ["q1-q5.csv", "fleet.csv", "collectives.csv"])
def test_the_series_lines_turn_by_this_rule(scenarios):
    """summary.series works out Summary.lines' turns the same way (one rule)."""
    lines = analyze_file(ROOT / "scenarios" / scenarios).summary.lines
    dim, at = change_points(lines)
    assert list(dim) == list(lines["change_dim"])
    pd.testing.assert_extension_array_equal(at, lines["change_at"].array)


def test_the_books_q3_lines_turn_at_their_critical_batch(book):
    frame, keys, lines = lines_of(book, ["series"])
    turns = line_turns(frame, lines, "B").set_axis(keys)
    assert turns.loc["q3_D4096", ["change_dim", "change_at"]].tolist() == ["B", 137]
    assert turns.loc["q3_D1024", ["change_dim", "change_at"]].tolist() == ["B", 227]
    assert turns.loc["q3_D4096", ["compute", "memory", "network"]].tolist() == [376, 136, 0]
    assert turns.loc["q3_D4096", "bound"] == MIXED
    # a single row is no sweep of B that turns: one bound
    assert turns.loc["q5_h100_bf16", ["bound", "change_dim"]].tolist() == ["compute", ""]


def test_a_fleet_sweep_turns_on_each_chip_at_its_own_critical_batch():
    """The series line (h100|h200|...) has no one turn; each chip's line has its own."""
    fleet = analyze_file(ROOT / "scenarios" / "fleet.csv")
    assert fleet.summary.lines.at["mlp_bf16", "change_dim"] == ""
    frame, keys, lines = lines_of(fleet, ["series", "hardware", "compute_dtype"])
    turns = line_turns(frame, lines, "B").set_axis(pd.MultiIndex.from_tuples(keys))
    assert turns.loc[("mlp_bf16", "h200", "bf16"), "change_at"] == 213
    assert turns.loc[("mlp_bf16", "tpu-v6e", "bf16"), "change_at"] == 633
    mlp = turns.loc["mlp_bf16"]
    assert (mlp["change_dim"] == "B").all() and (mlp["change_at"] == mlp["critical_min"]).all()


def test_lines_that_do_not_turn():
    rows = [
        {"name": "all_compute", "op": "matmul", "B": "512..2048*2", "D": 8192, "F": 8192,
         "hardware": "h100"},
        {"name": "d_sweep", "op": "matmul", "B": 1024, "D": "64..8192*2", "F": 1024,
         "hardware": "h100"},
        {"name": "thin", "op": "matmul", "B": "1|2|4", "D": 64, "F": 64, "hardware": "v5e"},
    ]  # fmt: skip
    a = analyze_rows(rows)
    frame, keys, lines = lines_of(a, ["series"])
    turns = line_turns(frame, lines, "B").set_axis(keys)
    assert turns.loc["all_compute", "bound"] == "compute"
    assert turns.loc["thin", "bound"] == "memory"
    d_sweep = line_turns(frame, [lines[keys.index("d_sweep")]], "D").iloc[0]
    assert d_sweep["bound"] == MIXED and d_sweep["compute"] == 4  # D is no batch dim
    assert (turns["change_dim"] == "").all() and d_sweep["change_dim"] == ""
    assert turns["change_at"].isna().all()
    # the series lines say the same of each
    assert (a.summary.lines["change_dim"] == "").all()


def test_batch_dim_is_the_ops_only_one():
    assert batch_dim("BD,DF->BF") == "B"
    assert batch_dim("BSD,DF->BSF") == ""  # two batch dims: no one value to turn at
    assert batch_dim("") == batch_dim("not an op") == ""
