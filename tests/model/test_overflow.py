"""Rows whose derived numbers float64 cannot hold: which rows, the input to blame, and why."""

from __future__ import annotations

import warnings

import pandas as pd

from pipeline.catalogs.hardware import load_catalog
from pipeline.model.overflow import PAST, merge_refused, refusals, refused_problems, refused_rows
from pipeline.model.roofline import compute_roofline
from pipeline.scenarios import load_records

MATMUL = {"op": "matmul", "B": 8, "D": 8, "F": 8, "hardware": "h100"}


def refused(*rows: dict, hardware=None) -> pd.DataFrame:
    """refused_rows of the rows' computed results, by name; numpy must stay silent."""
    catalog = load_catalog([hardware] if hardware is not None else [])
    loaded = load_records(list(rows), catalog)
    assert not loaded.problems
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        results = compute_roofline(loaded.frame)
        found = refused_rows(results)
    return found.set_axis(results["name"].iloc[found.index].tolist())


def test_rows_float64_holds_are_not_refused():
    found = refused({"name": "ok", **MATMUL}, {"name": "custom", "op": "custom", "flops": 1e300,
                                               "bytes": 1e300, "hardware": "h100"})  # fmt: skip
    assert found.empty and list(found.columns) == ["column", "reason"]


def test_a_time_past_float64_blames_the_efficiency_that_broke_it():
    slow = {"name": "slow", "op": "custom", "flops": 1e308, "bytes": 1e3, "hardware": "h100",
            "compute_efficiency": 1e-300}  # fmt: skip
    found = refused({"name": "ok", **MATMUL}, slow)
    assert found.index.tolist() == ["slow"]
    assert found.loc["slow", "column"] == "compute_efficiency"
    assert found.loc["slow", "reason"] == (
        f"t_math = 1e+308 FLOP / (1e-300 × 9.89e+14 FLOP/s) {PAST}"
    )


def test_a_rate_that_underflows_to_zero_is_said():
    tiny = pd.DataFrame([{"name": "tiny", "hbm_bandwidth": 1e12, "peak_bf16": 5e-324}])
    found = refused({"name": "zero", **MATMUL, "hardware": "tiny", "compute_efficiency": 0.5},
                    hardware=tiny)  # fmt: skip
    assert found.loc["zero", "column"] == "peak_flops"  # infinite at the nominal rate too
    assert found.loc["zero", "reason"].startswith(
        "compute_efficiency × peak_flops = 0.5 × 4.94066e-324 FLOP/s underflows to 0 in float64"
    )


def test_an_infinite_ratio_blames_its_input():
    wait = {"name": "wait", **MATMUL, "measured_seconds": 1e308, "peak_flops": 1e308,
            "hbm_bandwidth": 1e308}  # fmt: skip
    found = refused(wait)
    assert found.loc["wait", "column"] == "measured_seconds"
    assert found.loc["wait", "reason"].startswith("measured_over_predicted = measured_seconds / ")
    assert found.loc["wait", "reason"].endswith(PAST)


def refusals_of(*rows: dict, hardware=None):
    """model.overflow.refusals of the rows as loaded and computed (both engines' rule)."""
    catalog = load_catalog([hardware] if hardware is not None else [])
    loaded = load_records(list(rows), catalog)
    results = compute_roofline(loaded.frame)
    return results, *refusals(loaded.frame, results)


def test_only_the_refused_scenarios_leave_and_a_line_is_said_once():
    sweep = {"name": "s", "op": "matmul", "B": "1|2|3", "D": 8, "F": 8, "hardware": "h100",
             "hbm_efficiency": "1e-320"}  # fmt: skip
    results, keep, table = refusals_of({"name": "a", **MATMUL}, sweep)
    assert keep.tolist() == [True, False, False, False]
    assert table[["line", "name", "series", "column", "points"]].values.tolist() == [
        [3, "s[B=1]", "s", "hbm_efficiency", 3]  # the row gave the efficiency: blamed
    ]
    (problem,) = refused_problems("f.csv", table)
    assert (problem.line, problem.name, problem.column) == (3, "s", "hbm_efficiency")
    assert problem.reason.endswith("(at 's[B=1]' and 2 more of its scenarios)")


def test_a_number_the_chip_gave_blames_hardware_and_keeps_the_fleets_other_chips():
    """The issue's case: a user chip whose peak underflows, in a fleet list with h100."""
    tiny = pd.DataFrame([{"name": "tiny", "peak_bf16": 1e-320, "hbm_bandwidth": 1e12}])
    row = {"name": "m", "op": "matmul", "B": 4096, "D": 4096, "F": 4096,
           "hardware": "h100|tiny"}  # fmt: skip
    results, keep, table = refusals_of(row, hardware=tiny)
    assert results["name"][keep].tolist() == ["m[hardware=h100]"]
    assert table[["line", "name", "column", "points"]].values.tolist() == [
        [2, "m[hardware=tiny]", "hardware", 1]
    ]


def test_refusals_of_consecutive_frames_merge_per_line_in_order():
    part = pd.DataFrame(
        {"line": [4, 2], "name": ["b[x=1]", "a[x=9]"], "series": ["b", "a"],
         "column": ["bytes", "hardware"], "reason": ["r", "q"], "points": [1, 2]}
    )  # fmt: skip
    later = part.assign(name=["b[x=2]", "a[x=10]"], points=[5, 1])
    merged = merge_refused([part, later])
    assert merged[["line", "name", "points"]].values.tolist() == [
        [2, "a[x=9]", 3],
        [4, "b[x=1]", 6],
    ]
    assert merge_refused([part.iloc[:0]]).empty
