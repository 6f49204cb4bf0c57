"""A calibration's op kinds and the estimate it gives (pipeline.calibration.estimate)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from pipeline.calibration.estimate import (
    EFFICIENCIES,
    GROUP_COLUMNS,
    KINDS,
    Calibration,
    estimate,
    group_table,
    op_kinds,
)
from pipeline.model.roofline import BOUNDS
from tests.helpers import analyze_rows

MATMUL = {"op": "matmul", "D": 4096, "F": 4096, "dtype": "bf16"}


@pytest.fixture(scope="module")
def results() -> pd.DataFrame:
    rows = [
        {"name": "mm", **MATMUL, "B": 256, "hardware": "h100"},
        {"name": "mm_big", **MATMUL, "B": 8192, "hardware": "h100"},
        {"name": "mm_three", **MATMUL, "B": 256, "hardware": "h100", "count": 3},
        # contracted dim sharded: the row ends in an AllReduce, and is still a matmul
        {"name": "mm_reduce", **MATMUL, "B": 256, "hardware": "h100", "chips": 8, "shard": "D"},
        {"name": "dot", "op": "dot", "N": 1_000_000, "hardware": "h100", "dtype": "bf16"},
        {
            "name": "ein",
            "op": "BSD,DF->BSF",
            "B": 4,
            "S": 64,
            "D": 8192,
            "F": 8192,
            "hardware": "h100",
            "dtype": "bf16",
        },  # fmt: skip
        {
            "name": "custom",
            "op": "custom",
            "flops": 10**12,
            "bytes": 10**6,
            "hardware": "h100",
            "dtype": "bf16",
        },  # fmt: skip
        *(
            {"name": op, "op": op, "bytes": 10**9, "hardware": "h100", "dtype": "bf16", "chips": 8}
            for op in KINDS[2:]
        ),
        {"name": "mm_v5e", **MATMUL, "B": 256, "hardware": "tpu-v5e"},
    ]
    analysis = analyze_rows(rows, strict=True)
    return analysis.results.set_index("name", drop=False)


def calibration(*groups: dict) -> Calibration:
    return Calibration(groups=group_table(list(groups)), created="2026-01-01")


def group(hardware: str, kind: str, *efficiencies: float, overhead: float, fitted=True) -> dict:
    nan = math.nan
    return {
        "hardware": hardware, "kind": kind,
        **dict(zip(EFFICIENCIES, efficiencies, strict=True)),
        "overhead_seconds": overhead, "rows": 10, "error_before": 0.3,
        "error_after": 0.02 if fitted else nan, "heldout_error": 0.03 if fitted else nan,
        "fitted": fitted, "reason": "" if fitted else "too few rows: 2 measured, at least 3 needed",
    }  # fmt: skip


def test_op_kinds_names_einsums_matmul_custom_custom_and_collectives_themselves(results):
    assert results.loc["mm_reduce", "collective"] == "all_reduce"  # the case that could mislead
    kinds = dict(zip(results["name"], op_kinds(results), strict=True))
    assert kinds == {
        "mm": "matmul", "mm_big": "matmul", "mm_three": "matmul", "mm_reduce": "matmul",
        "dot": "matmul", "ein": "matmul", "custom": "custom", "all_gather": "all_gather",
        "reduce_scatter": "reduce_scatter", "all_reduce": "all_reduce",
        "all_to_all": "all_to_all", "mm_v5e": "matmul",
    }  # fmt: skip
    assert op_kinds(results).dtype == object


def test_op_kinds_reads_plain_columns_too(results):
    plain = results.astype({"einsum": object, "collective": object, "op": object})
    assert list(op_kinds(plain)) == list(op_kinds(results))


def test_estimate_derates_each_term_and_adds_the_overhead(results):
    cal = calibration(group("h100", "matmul", 0.5, 0.8, 0.9, overhead=2e-6))
    t, bound = estimate(results, cal)
    matmul = (results["hardware"] == "h100").to_numpy() & (op_kinds(results) == "matmul")
    r = results[matmul]
    terms = (r["t_math"] / 0.5, r["t_hbm"] / 0.8, r["t_network"] / 0.9)
    expected = np.maximum.reduce(terms) + 2e-6 * r["count"]
    np.testing.assert_allclose(t[matmul], expected, rtol=1e-12)
    # the largest derated term names the bound: mm's 8.69 us of math at half the rate (17.4 us)
    # outgrows its 11.3 us of HBM at 0.8 (14.1 us), so mm, mm_three and ein turn compute-bound
    assert dict(zip(r.index, bound[matmul], strict=True)) == {
        "mm": "compute", "mm_big": "compute", "mm_three": "compute", "mm_reduce": "network",
        "dot": "memory", "ein": "compute",
    }  # fmt: skip
    assert list(r["bound"]) == ["memory", "compute", "memory", "network", "memory", "memory"]
    assert list(bound.categories) == list(BOUNDS)
    # mm_big is compute-bound at the full rate; at half of it the estimate is its t_math x 2
    assert t[results.index.get_loc("mm_big")] == pytest.approx(
        2 * results.loc["mm_big", "t_math"] + 2e-6
    )


def test_estimate_is_nan_where_no_fitted_group_covers_the_row(results):
    cal = calibration(
        group("h100", "matmul", 1.0, 1.0, 1.0, overhead=0.0),
        group("h100", "custom", math.nan, math.nan, math.nan, overhead=math.nan, fitted=False),
    )
    t, bound = estimate(results, cal)
    at = {name: i for i, name in enumerate(results["name"])}
    for name in ("custom", "all_gather", "mm_v5e"):  # unfitted group, no group, other chip
        assert math.isnan(t[at[name]]) and pd.isna(bound[at[name]])
    assert t[at["mm"]] == results.loc["mm", "t_lower"]  # efficiency 1, no overhead: the floor
    assert bound[at["mm"]] == results.loc["mm", "bound"]


def test_count_multiplies_the_overhead(results):
    cal = calibration(group("h100", "matmul", 0.5, 0.5, 1.0, overhead=1e-3))
    t, _ = estimate(results, cal)
    one, three = (t[results.index.get_loc(n)] for n in ("mm", "mm_three"))
    assert results.loc["mm_three", "t_lower"] == pytest.approx(3 * results.loc["mm", "t_lower"])
    assert three == pytest.approx(3 * one)  # n ops: n x the derated time, n x the overhead
    assert three - 3 * results.loc["mm", "t_lower"] * 2 == pytest.approx(3e-3)


def test_without_a_count_column_every_row_is_one_op(results):
    cal = calibration(group("h100", "matmul", 1.0, 1.0, 1.0, overhead=1e-3))
    alone = results[results["name"] == "mm"].drop(columns="count")
    t, _ = estimate(alone, cal)
    assert t[0] == pytest.approx(results.loc["mm", "t_lower"] + 1e-3)


def test_estimate_of_an_empty_calibration_is_all_nan(results):
    t, bound = estimate(results, calibration())
    assert np.isnan(t).all() and bound.isna().all()


def test_group_table_orders_and_types_the_groups():
    table = group_table(
        [
            group("tpu-v5e", "matmul", 1, 1, 1, overhead=0),
            group("h100", "all_gather", 1, 1, 0.9, overhead=1e-5),
            group("h100", "matmul", 0.8, 0.7, 1, overhead=2e-6),
        ]
    )
    assert list(table.columns) == list(GROUP_COLUMNS)
    assert list(zip(table["hardware"], table["kind"], strict=True)) == [
        ("h100", "matmul"), ("h100", "all_gather"), ("tpu-v5e", "matmul"),
    ]  # fmt: skip
    assert table["rows"].dtype == "int64" and table["fitted"].dtype == bool
    assert table["compute_efficiency"].dtype == "float64"


def test_calibrations_compare_by_value_nan_equal_to_nan():
    a = calibration(group("h100", "custom", *[math.nan] * 3, overhead=math.nan, fitted=False))
    b = calibration(group("h100", "custom", *[math.nan] * 3, overhead=math.nan, fitted=False))
    assert a == b  # every error nan: still equal
    c = calibration(group("h100", "custom", 0.5, 1, 1, overhead=0.0))
    assert a != c
    assert a.group("h100", "custom")["reason"].startswith("too few rows")
    with pytest.raises(KeyError):
        a.group("h100", "matmul")
