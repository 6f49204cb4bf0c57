"""The fleet answer (summary.fleet): checked against pivot_table of the results, as a planner
would check it by hand (issue 30: "Which chip and precision is fastest at B = 64, and by how
much?")."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import pipeline
from pipeline.scenarios.marks import (
    EVERY,
    FIRST,
    FLEET_POINT,
    LAST,
    LINE_POINTS,
    line_positions,
    point_marks,
)
from pipeline.summary.fleet import POINT, fleet_answer, fleet_rows
from tests.helpers import ROOT

NOTEBOOK_SWEEP = pd.DataFrame(
    [
        {
            "name": "mlp",
            "op": "matmul",
            "B": "1..4096*2",
            "D": 8192,
            "F": 28672,
            "hardware": "h100|h200|b200|mi300x|tpu-v6e",
            "dtype": "bf16|fp8",
        }
    ]
)


def pivoted(results: pd.DataFrame, series: str, dim: str | None) -> pd.DataFrame:
    """t_lower of one series by hand: a row per swept value, a column per fleet point."""
    rows = results[results["series"] == series].copy()
    rows["at"] = f"{dim}=" + rows[dim].astype("Int64").astype(str) if dim else ""
    return rows.pivot_table(
        index="at", columns=["hardware", "x_dtype", "chips"], values="t_lower", aggfunc="first"
    )


def check_against_pivot(analysis, dims: dict[str, str | None]) -> int:
    """Every ranked point's time, order and ratio against pivot_table; the points checked."""
    ranking = analysis.summary.fleet
    checked = 0
    for (series, at), group in ranking.groupby(["series", "at"], sort=False):
        by_hand = pivoted(analysis.results, series, dims[series]).loc[at].dropna()
        keys = list(zip(group["hardware"], group["dtype"], group["chips"], strict=True))
        assert sorted(keys) == sorted(by_hand.index), (series, at)  # every point, once
        want = by_hand.loc[keys].to_numpy()
        np.testing.assert_allclose(group["t_lower"].to_numpy(), want, rtol=0, atol=0)
        assert (np.diff(want) >= 0).all(), (series, at)  # fastest first
        np.testing.assert_allclose(group["ratio"].to_numpy(), want / by_hand.min())
        # equal times share a rank (1, 1, 3)
        assert group["rank"].tolist() == [1 + int((want < w).sum()) for w in want]
        checked += len(group)
    return checked


def test_the_notebook_sweep_ranks_as_pivot_table_does():
    a = pipeline.analyze(NOTEBOOK_SWEEP)
    assert check_against_pivot(a, {"mlp": "B"}) == 3 * 9  # tpu-v6e has no fp8: 9 points
    points = a.summary.fleet.drop_duplicates(["point", "at"])
    assert points[["point", "at"]].values.tolist() == [
        ["first", "B=1"], ["critical batch", "B=256"], ["last", "B=4096"]
    ]  # fmt: skip
    # the critical batch point: the swept B nearest (log scale) the points' median critical
    # batch, the same B for every point
    median = a.results.loc[a.results["series"] == "mlp", "critical_batch"].median()
    assert median == pytest.approx(307, abs=3)  # 256 and 512 bracket it; 256 is nearer
    first = a.summary.fleet.iloc[0]
    assert (first["hardware"], first["dtype"], first["ratio"]) == ("b200", "fp8", 1.0)


def test_fleet_csv_ranks_as_pivot_table_does():
    a = pipeline.analyze(ROOT / "scenarios" / "fleet.csv")
    dims = {"mlp_bf16": "B", "mlp_fp8": "B", "decode_fp4": "B"}
    dims |= dict.fromkeys(["tp", "allreduce", "allreduce_rack", "allreduce_dcn"], None)
    assert set(a.summary.fleet["series"]) == set(dims)
    assert check_against_pivot(a, dims) == len(a.summary.fleet)
    only = a.summary.fleet[a.summary.fleet["series"] == "tp"]
    assert set(only["point"]) == {"only"} and len(only) == 16  # 4 chips x 4 chip counts


def test_a_series_of_one_point_is_not_ranked():
    rows = NOTEBOOK_SWEEP.assign(hardware="tpu-v6e")  # fp8 refused: bf16 alone is left
    assert pipeline.analyze(rows).summary.fleet.empty


def test_the_line_runs_along_the_batch_dim_and_first_last_are_the_corners():
    rows = pd.DataFrame(
        [
            {
                "name": "m",
                "op": "XD,DF->XF",
                "D": "1024|4096",
                "X": "8..512*4",
                "F": 4096,
                "hardware": "h100|b200",
                "dtype": "bf16",
            }
        ]  # fmt: skip
    )
    a = pipeline.analyze(rows)
    ranking = a.summary.fleet
    ats = ranking.drop_duplicates(["point", "at"])[["point", "at"]].values.tolist()
    assert ats[0] == ["first", "D=1024, X=8"] and ats[-1] == ["last", "D=4096, X=512"]
    curves = a.summary.fleet_curves
    assert set(curves["line_dim"]) == {"X"}  # the batch dim, though D is swept first
    assert sorted(set(curves["line_value"])) == [8, 32, 128, 512]
    assert check_against_pivot_at(a, ranking) > 0


def check_against_pivot_at(analysis, ranking) -> int:
    """Like check_against_pivot, for a two-dim sweep: the `at` text of each result row."""
    results = analysis.results.copy()
    results["at"] = "D=" + results["D"].astype(str) + ", X=" + results["X"].astype(str)
    table = results.pivot_table(index="at", columns="hardware", values="t_lower")
    for (_, at), group in ranking.groupby(["series", "at"], sort=False):
        np.testing.assert_array_equal(group["t_lower"], table.loc[at, group["hardware"]])
    return len(ranking)


def test_the_merge_of_cut_frames_is_the_whole_frames_answer():
    a = pipeline.analyze(NOTEBOOK_SWEEP)
    results, facts = a.results, a.facts
    whole = fleet_rows(results, facts)
    cut = [fleet_rows(results.iloc[i : i + 10], facts.iloc[i : i + 10]) for i in range(0, 117, 10)]
    pd.testing.assert_frame_equal(pd.concat(cut, ignore_index=True), whole)
    assert fleet_answer(whole)[0].equals(a.summary.fleet)


def test_point_marks_first_last_and_lines():
    index = np.unravel_index(np.arange(6), (2, 3))  # D in 2 values, B in 3
    marks = point_marks(index, [2, 3])
    assert (marks & FIRST).nonzero()[0].tolist() == [0]
    assert (marks & LAST).nonzero()[0].tolist() == [5]
    assert (marks & 4).nonzero()[0].tolist() == [0, 3]  # along D, B at its first value
    assert (marks & 8).nonzero()[0].tolist() == [0, 1, 2]  # along B, D at its first value
    assert EVERY & FLEET_POINT == 0


def test_a_long_line_keeps_log_spaced_points_with_both_ends():
    kept = line_positions(1_000_000)
    assert kept[0] == 0 and kept[-1] == 999_999 and len(kept) <= LINE_POINTS
    assert (np.diff(np.log(kept[1:] + 1)) > 0).all()
    assert line_positions(13).tolist() == list(range(13))


def test_rows_outside_fleet_series_give_nothing():
    a = pipeline.analyze(ROOT / "scenarios" / "q1-q5.csv")
    assert fleet_rows(a.results, a.facts).empty and a.summary.fleet.empty


def test_points_without_a_critical_batch_are_ranked_at_the_critical_point_too():
    # found in review: chips 4-64 never turn compute-bound, and were left out at B = 256
    rows = pd.DataFrame([{"name": "tp", "op": "matmul", "B": "1..1024*2", "D": 8192,
                          "F": 28672, "hardware": "h100", "dtype": "bf16",
                          "chips": "1..64*2", "shard": "D"}])  # fmt: skip
    a = pipeline.analyze(rows)
    ranking = a.summary.fleet
    counts = ranking.groupby("point", sort=False).size().to_dict()
    assert counts == {"first": 7, "critical batch": 7, "last": 7}
    results = a.results.assign(at="B=" + a.results["B"].astype(str))
    table = results.pivot_table(index="at", columns="chips", values="t_lower")
    for (point, at), group in ranking.groupby(["point", "at"], sort=False):
        np.testing.assert_array_equal(group["t_lower"], table.loc[at, group["chips"]])
        assert (np.diff(group["t_lower"]) >= 0).all(), point


def test_a_model_list_ranks_the_steps_totals_not_their_ops():
    """Issue 31: `model` lists like a chip (`llama3-8b|mistral-7b`); the fleet answer ranks
    each step's total (its ops are rows of their own series, not fleet points)."""
    a = pipeline.analyze([{"name": "which", "op": "transformer", "hardware": "h100|b200",
                           "model": "llama3-8b|mistral-7b|qwen2.5-72b", "B": "1..256*4",
                           "T": 1, "S": 4096}])  # fmt: skip
    ranking = a.summary.fleet
    assert set(ranking["series"]) == {"which"} and len(ranking) == 2 * 6
    totals = a.results[a.results["op"] == "transformer"].copy()
    totals["at"] = "B=" + totals["B"].astype(str)
    table = totals.pivot_table(index="at", columns=["model", "hardware"], values="t_lower")
    for at, group in ranking.groupby("at", sort=False):
        keys = list(zip(group["model"], group["hardware"], strict=True))
        np.testing.assert_array_equal(group["t_lower"], table.loc[at, keys])
        assert (np.diff(group["t_lower"]) >= 0).all()


def test_with_prices_the_cheapest_and_the_least_energy_that_fit_are_ranked_beside_the_fastest():
    """Issue 44 item 4: at each chosen point, among the fleet points that fit in HBM, the
    cheapest (cost, USD) and the least energy (J: the most tokens or FLOPs per joule)."""
    a = pipeline.analyze(NOTEBOOK_SWEEP)
    results = a.results
    price = results["hardware"].astype(str).map({"h100": 2.0, "h200": 3.0, "b200": 6.0,
                                                 "mi300x": 1.5, "tpu-v6e": 2.7})  # fmt: skip
    tdp = results["hardware"].astype(str).map({"h100": 700.0, "h200": 700.0, "b200": 1000.0,
                                               "mi300x": 750.0, "tpu-v6e": np.nan})  # fmt: skip
    time = results["t_lower"] * results["chips"]
    priced = results.assign(cost=price * time / 3600, energy=tdp * time)
    unpriced = fleet_answer(fleet_rows(results.drop(columns=["cost", "energy"], errors="ignore"),
                                       a.facts))[0]  # fmt: skip
    assert "cost_rank" not in unpriced.columns  # a run without prices: as before
    ranking = fleet_answer(fleet_rows(priced, a.facts))[0]
    assert list(ranking.columns[-4:]) == ["cost", "cost_rank", "energy", "energy_rank"]
    checked = 0
    for (_, at), group in ranking.groupby(["series", "at"], sort=False):
        rows = priced[(priced["series"] == "mlp") & ("B=" + priced["B"].astype(str) == at)]
        key = rows["hardware"].astype(str) + " " + rows["x_dtype"].astype(str)
        by_hand = dict(zip(key, rows["cost"], strict=True))
        got = dict(zip(group["hardware"] + " " + group["dtype"], group["cost"], strict=True))
        assert got == pytest.approx(by_hand)
        fit = group["fits"].to_numpy(dtype=bool)
        cheapest = group.loc[fit, "cost"].min()
        assert group.loc[group["cost_rank"] == 1, "cost"].tolist() == [cheapest]
        least = group.loc[fit, "energy"].min()  # tpu-v6e has no TDP: unranked
        assert group.loc[group["energy_rank"] == 1, "energy"].tolist() == [least]
        assert group.loc[~fit, "cost_rank"].isna().all()
        assert group.loc[group["hardware"] == "tpu-v6e", "energy_rank"].isna().all()
        checked += 1
    assert checked == 3


def test_a_fleet_of_steps_says_each_points_largest_batch_that_fits():
    """Issue 43's walk: a fleet point of model steps fits up to its max_batch (185 on 8 H100s
    for Llama-3-70B at 8k context, bf16), not merely at the swept batches; a fleet of plain
    ops has no max_batch (its fit is said over its sweep: fits_where, fits_up_to)."""
    a = pipeline.analyze([{"name": "dec", "op": "transformer", "model": "llama3-70b",
                           "hardware": "h100|b200", "dtype": "bf16|fp8", "chips": "4|8",
                           "shard": "N", "B": "1..256*2", "T": 1, "S": 8192}])  # fmt: skip
    ranking = a.summary.fleet
    largest = ranking.drop_duplicates(POINT).set_index(["hardware", "dtype", "chips"])["max_batch"]
    assert largest[("h100", "bf16", 8)] == 185  # the walk's, by hand: (80 GB - 141/8 GB) / KV
    steps = a.results[a.results["op"] == "transformer"]
    by_hand = steps.groupby(["hardware", "x_dtype", "chips"], observed=True)["max_batch"].agg(
        ["min", "max"]
    )
    assert (by_hand["min"] == by_hand["max"]).all()  # one context S: one max_batch per point
    assert largest.sort_index().to_dict() == by_hand["max"].sort_index().to_dict()
    mlp = pipeline.analyze(NOTEBOOK_SWEEP).summary.fleet
    assert mlp["max_batch"].isna().all()
