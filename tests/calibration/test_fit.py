"""Fitting a calibration to measured times (pipeline.calibration.fit): known
efficiencies and overheads recovered through noise; groups that cannot be fitted said."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from pipeline.calibration.estimate import EFFICIENCIES, estimate, op_kinds, relative_errors
from pipeline.calibration.fit import fit
from tests.helpers import analyze_rows

# per chip x kind: compute, HBM and network efficiency, overhead per op (seconds)
TRUTH = {
    ("h100", "matmul"): (0.8, 0.7, 1.0, 2e-6),
    ("h100", "custom"): (0.6, 0.9, 1.0, 5e-6),
    ("h100", "all_gather"): (1.0, 1.0, 0.85, 10e-6),
    ("tpu-v5e", "matmul"): (0.9, 0.75, 1.0, 3e-6),
    ("tpu-v5e", "custom"): (0.7, 0.8, 1.0, 4e-6),
    ("tpu-v5e", "all_gather"): (1.0, 1.0, 0.9, 20e-6),
}
NOISE = 0.03


def synthetic_rows() -> list[dict]:
    """A spread of shapes per chip: overhead-, memory- and compute-bound matmuls and custom
    ops, AllGathers from the latency floor to gigabytes."""
    rows = []
    for hw in ("h100", "tpu-v5e"):
        for b in np.unique(np.geomspace(1, 8192, 40).astype(int)):
            for d in (1024, 4096, 16384):
                rows.append({"name": f"mm-{hw}-{b}-{d}", "op": "matmul", "B": int(b), "D": d,
                             "F": 4096, "hardware": hw, "dtype": "bf16"})  # fmt: skip
        for f in np.geomspace(1e6, 1e13, 30):
            for v in (10**5, 10**8, 10**10):
                rows.append({"name": f"c-{hw}-{f:.0f}-{v}", "op": "custom", "flops": round(f),
                             "bytes": v, "hardware": hw, "dtype": "bf16"})  # fmt: skip
        for v in np.geomspace(1e4, 1e10, 40):
            rows.append({"name": f"ag-{hw}-{v:.0f}", "op": "all_gather", "bytes": round(v),
                         "chips": 8, "hardware": hw, "dtype": "bf16"})  # fmt: skip
    return rows


def measure(results: pd.DataFrame, truth: dict, noise: float, seed: int = 1) -> pd.DataFrame:
    """`results` with measured_seconds from `truth`'s parameters, times 1 + noise x N(0, 1)."""
    keys = zip(results["hardware"].astype(str), op_kinds(results), strict=True)
    p = np.array([truth[k] for k in keys])
    true = np.maximum.reduce(
        [results["t_math"] / p[:, 0], results["t_hbm"] / p[:, 1], results["t_network"] / p[:, 2]]
    ) + p[:, 3] * (results["count"] if "count" in results else 1)
    rng = np.random.default_rng(seed)
    return results.assign(measured_seconds=true * (1 + noise * rng.standard_normal(len(true))))


@pytest.fixture(scope="module")
def synthetic() -> pd.DataFrame:
    return measure(analyze_rows(synthetic_rows(), strict=True).results, TRUTH, NOISE)


@pytest.fixture(scope="module")
def fitted(synthetic):
    return fit(synthetic, source="synthetic.csv", source_sha256="0" * 64)


def test_known_efficiencies_and_overheads_are_recovered_within_2_percent(fitted):
    groups = fitted.groups.set_index(["hardware", "kind"])
    assert set(groups.index) == set(TRUTH)
    for key, (*efficiencies, overhead) in TRUTH.items():
        g = groups.loc[key]
        assert g["fitted"] and g["reason"] == "", key
        for name, true in zip(EFFICIENCIES, efficiencies, strict=True):
            assert g[name] == pytest.approx(true, rel=0.02), (key, name)
        assert g["overhead_seconds"] == pytest.approx(overhead, rel=0.02), key


def test_held_out_error_is_within_5_percent_where_the_raw_roofline_is_off_by_30(fitted):
    assert 0.25 <= fitted.error_before <= 0.45
    assert fitted.error_after <= 0.05 and fitted.heldout_error <= 0.05
    assert fitted.error_after <= fitted.heldout_error  # out of sample is never better
    g = fitted.groups
    assert (g["error_before"] > 0.2).all() and (g["heldout_error"] <= 0.05).all()
    assert g["rows"].sum() == 482
    assert (fitted.source, fitted.source_sha256) == ("synthetic.csv", "0" * 64)


def test_the_errors_are_the_mean_relative_error_of_the_estimate(synthetic, fitted):
    t, _ = estimate(synthetic, fitted)
    measured = synthetic["measured_seconds"].to_numpy()
    assert fitted.error_after == pytest.approx(relative_errors(t, measured).mean(), rel=1e-9)
    before = relative_errors(synthetic["t_lower"].to_numpy(), measured).mean()
    assert fitted.error_before == pytest.approx(before, rel=1e-12)
    # the overall errors weigh each group as its rows
    g = fitted.groups
    assert fitted.heldout_error == pytest.approx((g["heldout_error"] * g["rows"]).sum() / 482)


def test_the_fit_is_deterministic(synthetic, fitted):
    assert fit(synthetic, source="synthetic.csv", source_sha256="0" * 64) == fitted
    other = fit(synthetic, seed=7)
    assert other.heldout_error != fitted.heldout_error  # the folds, and only they, move
    assert other.error_after == pytest.approx(fitted.error_after, rel=1e-6)


def test_only_rows_with_a_positive_finite_measurement_count(synthetic, fitted):
    spoiled = synthetic.copy()
    spoiled["measured_seconds"] = spoiled["measured_seconds"].astype(float)
    extra = spoiled.iloc[:4].copy()
    extra["measured_seconds"] = [np.nan, 0.0, -1.0, np.inf]
    assert fit(pd.concat([spoiled, extra], ignore_index=True)).groups.equals(fitted.groups)


def test_no_measured_rows_fit_no_groups(synthetic):
    cal = fit(synthetic.drop(columns="measured_seconds"))
    assert cal.groups.empty and math.isnan(cal.error_after) and math.isnan(cal.heldout_error)


def small_group(rows: list[dict], truth=(0.5, 0.5, 1.0, 0.0)) -> pd.DataFrame:
    results = analyze_rows(rows, strict=True).results
    return measure(results, {("h100", "matmul"): truth}, noise=0.0)


def matmuls(*batches: int, d: int = 4096) -> list[dict]:
    return [
        {"name": f"mm{i}", "op": "matmul", "B": b, "D": d, "F": d, "hardware": "h100",
         "dtype": "bf16"}
        for i, b in enumerate(batches)
    ]  # fmt: skip


def test_too_few_rows_are_said_not_guessed():
    cal = fit(small_group(matmuls(4096, 8192)))
    g = cal.groups.iloc[0]
    assert not g["fitted"] and g["rows"] == 2
    assert g["reason"] == "too few rows: 2 measured, at least 3 needed"
    assert all(math.isnan(g[k]) for k in (*EFFICIENCIES, "overhead_seconds", "error_after"))
    assert g["error_before"] == pytest.approx(0.5)  # t_lower is half the measured time
    assert math.isnan(cal.error_before)  # overall: over fitted groups only, and there are none


def test_enough_rows_for_the_efficiency_but_not_the_overhead_are_refused():
    cal = fit(small_group(matmuls(2048, 4096, 8192)))  # compute-bound, spread: 2 parameters
    g = cal.groups.iloc[0]
    assert not g["fitted"]
    assert g["reason"] == "too few rows: 3 measured, 4 needed for its 2 parameters"


def test_without_spread_only_the_efficiency_is_fitted_and_that_is_said():
    # six times the same compute-bound shape: an overhead would be indistinguishable
    rows = small_group(matmuls(*[8192] * 6), truth=(0.5, 1.0, 1.0, 1e-5))
    g = fit(rows).groups.iloc[0]
    assert g["fitted"] and g["overhead_seconds"] == 0.0
    assert g["reason"] == (
        "hbm_efficiency left at 1: memory-bound on 0 of 6 rows, 3 needed; overhead_seconds "
        "left at 0: each term's roofline times span a factor of 1, under 1.5, so an overhead "
        "cannot be told from an efficiency"
    )
    # the efficiency absorbs the overhead: exact on these rows
    t_math = rows["t_math"].iloc[0]
    assert g["compute_efficiency"] == pytest.approx(t_math / (t_math / 0.5 + 1e-5), rel=1e-6)
    assert g["error_after"] == pytest.approx(0.0, abs=1e-9)


def test_no_term_bounding_enough_rows_is_refused():
    rows = small_group(matmuls(16, 32, 8192, 16384))  # two memory-, two compute-bound
    assert list(rows["bound"]) == ["memory", "memory", "compute", "compute"]
    g = fit(rows).groups.iloc[0]
    assert not g["fitted"]
    assert g["reason"] == "no roofline term is the bound on 3 or more of 4 rows"


def test_a_term_bounding_too_few_rows_stays_at_1_and_is_said():
    rows = small_group(matmuls(16, 4096, 8192, 16384), truth=(0.5, 1.0, 1.0, 0.0))
    g = fit(rows).groups.iloc[0]
    assert g["fitted"] and g["hbm_efficiency"] == 1.0
    assert g["compute_efficiency"] == pytest.approx(0.5, rel=1e-4)
    assert g["reason"] == "hbm_efficiency left at 1: memory-bound on 1 of 4 rows, 3 needed"


def test_fewer_rows_than_folds_is_leave_one_out():
    rows = small_group(matmuls(512, 1024, 2048, 4096, 8192, 16384), truth=(0.5, 1, 1, 1e-5))
    g = fit(rows, folds=10).groups.iloc[0]
    assert g["fitted"] and math.isfinite(g["heldout_error"])
    assert g["heldout_error"] == fit(rows, folds=6, seed=3).groups.iloc[0]["heldout_error"]


@pytest.mark.parametrize("folds", [1, 0, 2.5, True])
def test_folds_must_be_at_least_2(synthetic, folds):
    with pytest.raises(ValueError, match="folds must be a whole number of at least 2"):
        fit(synthetic, folds=folds)
