"""A calibration's op kinds and the estimate it gives (pipeline.calibration.estimate)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import pipeline
from pipeline.calibration.estimate import (
    EFFICIENCIES,
    GROUP_COLUMNS,
    KINDS,
    Calibration,
    calibration_summary,
    estimate,
    group_table,
    op_kinds,
    unused_warnings,
    with_estimate,
)
from pipeline.calibration.shape import dumps
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


def group(
    hardware: str, kind: str, *efficiencies: float, overhead: float, fitted=True, **key
) -> dict:
    nan = math.nan
    form = "alpha_beta" if kind in KINDS[2:] else "roofline"
    return {
        "hardware": hardware, "kind": kind, "dtype": "" if kind in KINDS[2:] else "bf16",
        "chips": 0, "link": "", "form": form,
        **dict(zip(EFFICIENCIES, efficiencies, strict=True)),
        "overhead_seconds": overhead, "shape": "", "rows": 30, "floor_median": 0.3,
        "floor_p90": 0.9, "median": 0.02 if fitted else nan, "p90": 0.05 if fitted else nan,
        "heldout_median": 0.03 if fitted else nan, "heldout_p90": 0.06 if fitted else nan,
        "fitted": fitted, "used": fitted, "reason": "" if fitted else "10 rows, 25 needed",
        **key,
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
    assert a.group("h100", "custom", "bf16")["reason"] == "10 rows, 25 needed"
    with pytest.raises(KeyError, match="no calibration for h100 matmul bf16"):
        a.group("h100", "matmul", "bf16")


def test_each_row_takes_its_most_specific_used_group(results):
    cal = calibration(
        group("h100", "matmul", 0.5, 1.0, 1.0, overhead=0.0),  # bf16
        group("h100", "matmul", 1.0, 1.0, 1.0, overhead=1e-3, dtype=""),  # every dtype
        group("tpu-v5e", "matmul", 0.5, 1.0, 1.0, overhead=0.0, fitted=False),  # not used
        group("tpu-v5e", "matmul", 1.0, 1.0, 1.0, overhead=2e-3, dtype=""),
    )
    t, _ = estimate(results, cal)
    at = results.index.get_loc
    assert t[at("mm_big")] == pytest.approx(2 * results.loc["mm_big", "t_math"])  # its dtype's
    # the group of its dtype is not used: the wider group's estimate
    assert t[at("mm_v5e")] == pytest.approx(results.loc["mm_v5e", "t_lower"] + 2e-3)
    fp8 = results.loc[["mm"]].assign(compute_dtype="fp8")  # no fp8 group: every dtype's
    assert estimate(fp8, cal)[0][0] == pytest.approx(results.loc["mm", "t_lower"] + 1e-3)


def test_alpha_beta_adds_alpha_to_the_bandwidth_time_without_the_floor():
    rows = [{"name": f"ar{v}", "op": "all_reduce", "bytes": v, "chips": 8, "hardware": "h100",
             "dtype": "bf16"} for v in (10**3, 10**9)]  # fmt: skip
    analysis = analyze_rows(rows, strict=True)
    r, facts = analysis.results, analysis.facts
    cal = calibration(group("h100", "all_reduce", 1, 1, 0.5, overhead=1e-5, chips=8, link="nvlink"))
    t, bound = estimate(r, cal, facts)
    knee = facts["latency_knee"].to_numpy()
    assert r["network_bytes"].iloc[0] < knee[0] < r["network_bytes"].iloc[1]  # floor, then not
    t_bw = r["t_network"].to_numpy() * np.minimum(r["network_bytes"].to_numpy() / knee, 1)
    np.testing.assert_allclose(t, 1e-5 + t_bw / 0.5, rtol=1e-12)
    assert t[0] - 1e-5 < 0.01 * r["t_network"].iloc[0] / 0.5  # below the knee: no floor
    assert list(bound) == ["network", "network"]
    # without the facts' knee, t_network (its floor and all) stands for the bandwidth time
    np.testing.assert_allclose(estimate(r, cal)[0], 1e-5 + r["t_network"] / 0.5, rtol=1e-12)


def shape_text(slope: float, lo: float, hi: float) -> str:
    """A shape correction exp(slope x L_m), L_m clamped to [lo, hi]: the others at 0."""
    coef = np.zeros(19)
    coef[1] = slope
    knots = np.tile(np.linspace(lo, hi, 4), (3, 1))
    return dumps({"knots": knots, "coef": coef, "lo": np.full(3, lo), "hi": np.full(3, hi)})


def test_a_shape_group_multiplies_its_roofline_estimate_clamped_to_its_range(results):
    cal = calibration(group("h100", "matmul", 1.0, 1.0, 1.0, overhead=0.0,
                            form="roofline+shape", shape=shape_text(0.1, 0.0, 9.0)))  # fmt: skip
    t, _ = estimate(results, cal)
    at = results.index.get_loc
    # mm: m = B = 256, L_m 8 inside the range; mm_big: B 8192, L_m 13 clamped to 9
    assert t[at("mm")] == pytest.approx(results.loc["mm", "t_lower"] * math.exp(0.8))
    assert t[at("mm_big")] == pytest.approx(results.loc["mm_big", "t_lower"] * math.exp(0.9))
    # an einsum's m is its lhs free and batch dims: ein BSD,DF->BSF, m = B x S = 256
    assert t[at("ein")] == pytest.approx(results.loc["ein", "t_lower"] * math.exp(0.8))


def test_a_transformer_steps_custom_ops_borrow_the_chips_memory_bound_fit():
    analysis = analyze_rows([{"name": "step", "op": "transformer", "model": "llama3-8b",
                              "hardware": "h100", "dtype": "bf16", "B": 8, "T": 1, "S": 1024}])  # fmt: skip
    r, facts = analysis.results, analysis.facts
    cal = calibration(group("h100", "matmul", 0.5, 0.8, 0.9, overhead=2e-6))
    out = with_estimate(r, cal, facts).set_index("name")
    custom = ["step/attention", "step/norms", "step/residual", "step/mlp_act"]
    ops = out.loc[custom]
    expected = np.maximum(ops["t_math"], ops["t_hbm"] / 0.8) + 2e-6 * ops.get("count", 1)
    np.testing.assert_allclose(ops["t_estimate"], expected, rtol=1e-12)  # compute at 1
    assert set(ops["calibration"]) == {"calibration (borrowed: h100 matmul bf16)"}
    assert out.loc["step/q_proj", "calibration"] == "calibration"  # its own group
    assert out.loc["step", "calibration"] == "calibration"  # the total: its ops' sum, later
    # every partition of a run has the same categories, whichever of its rows borrow
    alone = with_estimate(r.iloc[:2], cal, facts.iloc[:2])["calibration"]
    assert list(alone.cat.categories) == list(out["calibration"].cat.categories)
    # outside a step, a custom row without a group of its own has no estimate
    assert np.isnan(estimate(r, cal)[0][r["op"].astype(str).eq("custom").to_numpy()]).all()


def test_no_estimate_is_ever_inf(results):
    huge = results.loc[["mm"]].assign(t_math=1e305, t_hbm=1e305, t_lower=1e305)
    cal = calibration(group("h100", "matmul", 1e-6, 1e-6, 1.0, overhead=3600.0))
    t, bound = estimate(huge, cal)
    assert np.isnan(t).all() and bound.isna().all()  # past float64: none, never inf
    wild = calibration(group("h100", "matmul", 1.0, 1.0, 1.0, overhead=0.0,
                             form="roofline+shape", shape=shape_text(1e3, 0.0, 9.0)))  # fmt: skip
    t, _ = estimate(results, wild)
    assert not np.isinf(t).any() and np.isnan(t[results.index.get_loc("mm")])


def test_the_summary_says_the_used_groups_and_names_the_others(results):
    cal = calibration(
        group("h100", "matmul", 0.5, 1.0, 1.0, overhead=0.0),
        group("h100", "custom", *[math.nan] * 3, overhead=math.nan, fitted=False),
        group("h100", "all_reduce", 1, 1, 0.5, overhead=1e-5, chips=8, link="nvlink"),
    )
    said = calibration_summary(cal)
    assert [(g["kind"], g["form"]) for g in said["groups"]] == [
        ("matmul", "roofline"), ("all_reduce", "alpha_beta")]  # fmt: skip
    assert said["unfitted"] == ["h100 custom bf16"]
    assert "shape" not in said["groups"][0]  # the correction's text stays in its file
    assert set(said) >= {"floor_median", "floor_p90", "heldout_median", "heldout_p90"}
    assert said["heldout_median"] is None  # NaN: said as none
    assert unused_warnings(said)[0].endswith(
        "(fitted: h100 matmul bf16, h100 all_reduce nvlink 8); the times are the floor "
        "(t_lower) alone"
    )


def test_a_sharded_matmuls_allreduce_is_estimated_by_the_collective_group():
    """Found by a review: a matmul ending in an AllReduce took its network term from the
    GEMM's group (network efficiency 1, never fitted: GEMM tables have no network part), so a
    tensor-parallel step's AllReduces stayed at the floor under a calibration."""
    from pipeline.calibration.file import PUBLISHED_PATH, read_calibration

    cal = read_calibration(PUBLISHED_PATH)
    step = {"name": "d", "op": "transformer", "model": "llama3-8b", "hardware": "h100",
            "dtype": "bf16", "chips": 8, "shard": "N", "B": 8, "T": 1, "S": 4096}  # fmt: skip
    r = pipeline.analyze([step], calibration=cal).results.set_index("name")
    o_proj = r.loc["d/o_proj"]
    assert o_proj["collective"] == "all_reduce" and o_proj["t_network"] > 0
    group = cal.group("h100", "all_reduce", chips=8, link="nvlink")
    alpha = group["overhead_seconds"] * o_proj["count"]
    assert o_proj["t_estimate"] >= alpha  # at least its α per op (the GEMM fit gave 0.25 ms)
    assert o_proj["estimate_bound"] == "network"  # 32 AllReduces outweigh the small GEMMs
    gemm = r.loc["d/q_proj"]  # no AllReduce: its GEMM group's estimate, as before
    assert gemm["estimate_bound"] == "memory"
