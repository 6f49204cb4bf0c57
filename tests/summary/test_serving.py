"""The serving answer (summary.serving, issue 43 item 3; issue 44 item 4): per serve series
and configuration its best point (the most tokens/s per chip meeting the targets and fitting
in HBM), the configurations ranked, the misses after them with why, the cheapest and the most
tokens per joule; the partials of frames cut anywhere merge into the answer of every row."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import pipeline
from pipeline.catalogs.hardware import load_catalog
from pipeline.scenarios import load_scenarios
from pipeline.summary.partial import computed, merge
from pipeline.summary.serving import (
    CURVE_COLUMNS,
    SERVING_COLUMNS,
    merge_serving,
    serving_answer,
    serving_rows,
)
from tests.helpers import write_scenarios

ISL, OSL = 2048, 256


def point(series, hardware, dtype, chips, B, ttft, tpot, *, model="llama3-70b", fits=True,
          ttft_target=np.nan, tpot_target=0.03, kv_dtype=None, price=None, tdp=None,
          footprint=None, capacity=80e9):  # fmt: skip
    """A serve row as the model gives it (SERVE_COLUMNS and the usual ones), its derived
    columns worked out here as the contract defines them."""
    tps_chip = B / (tpot * chips)
    has_target = not (np.isnan(ttft_target) and np.isnan(tpot_target))
    misses = [
        name
        for name, bad in (
            ("ttft", ttft > ttft_target),
            ("tpot", tpot > tpot_target),
            ("memory", not fits),
        )
        if bad
    ]
    row = {
        "name": series, "series": series, "op": "serve", "model": model,
        "hardware": hardware, "chips": chips,
        "x_dtype": dtype, "y_dtype": dtype, "out_dtype": dtype, "compute_dtype": dtype,
        "kv_dtype": kv_dtype or dtype, "B": B, "t_lower": ttft + (OSL - 1) * tpot,
        "memory_footprint": footprint if footprint is not None else (0.5 if fits else 1.5)
        * capacity,
        "hbm_capacity": capacity, "fits": fits,
        "isl": ISL, "osl": OSL, "ttft": ttft, "tpot": tpot,
        "request_latency": ttft + (OSL - 1) * tpot,
        "tokens_per_second_per_chip": tps_chip, "tokens_per_second_per_user": 1 / tpot,
        "ttft_target": ttft_target, "tpot_target": tpot_target,
        "batch_at_target": np.nan,
        "meets_target": (not (set(misses) - {"memory"})) if has_target else pd.NA,
        "miss": ", ".join(misses), "time_basis": "floor",
    }  # fmt: skip
    if price is not None:
        row["usd_per_chip_hour"] = price
        row["usd_per_million_tokens"] = price / 3600 / tps_chip * 1e6
    if tdp is not None:
        row["tdp"] = tdp
        row["tokens_per_joule"] = tps_chip / tdp
    return row


def frame(rows: list[dict]) -> pd.DataFrame:
    """Results of these serve rows, each followed by a step row that is not one (as the
    expansion places them), with the dtypes the model gives."""
    out = []
    for r in rows:
        out.append(r)
        step = {k: v for k, v in r.items() if k not in ("isl", "osl", "ttft", "tpot")}
        out.append({**step, "name": f"{r['name']}/decode", "op": "transformer"})
    results = pd.DataFrame(out)
    serve = results["op"] == "serve"
    results.loc[~serve, ["ttft", "tpot", "tokens_per_second_per_chip"]] = np.nan
    results["meets_target"] = results["meets_target"].astype("boolean")
    results["fits"] = results["fits"].astype("boolean")
    results["B"] = results["B"].astype("Int64")
    for c in ("hardware", "x_dtype", "y_dtype", "compute_dtype"):
        results[c] = results[c].astype("category")
    return results


# tpot grows with B (the decode step reads B sequences' KV cache): 30 ms met up to a batch
SWEEP = (64, 128, 256)
CONFIGS = {  # (hardware, dtype, chips): tpot at each B of SWEEP, fits at each
    ("h100", "bf16", 8): ((0.020, 0.026, 0.034), (True, True, True)),
    ("b200", "fp8", 4): ((0.012, 0.018, 0.029), (True, True, True)),
    ("b200", "fp8", 8): ((0.008, 0.011, 0.016), (True, True, False)),
    ("mi300x", "bf16", 4): ((0.031, 0.040, 0.055), (True, True, True)),  # misses at every B
}


def llama_rows(prices: dict | None = None, tdps: dict | None = None) -> list[dict]:
    rows = []
    for (hw, dt, chips), (tpots, fit) in CONFIGS.items():
        costs = {"price": prices[hw], "tdp": tdps[hw]} if prices and tdps else {}
        for B, tpot, f in zip(SWEEP, tpots, fit, strict=True):
            rows.append(point("llama", hw, dt, chips, B, 0.05 * chips / 4, tpot, fits=f, **costs))
    return rows


def answer_of(rows: list[dict]):
    return serving_answer(serving_rows(frame(rows)))


def test_each_configuration_at_its_best_point_ranked_by_tokens_per_second_per_chip():
    serving, _curves = answer_of(llama_rows())
    assert list(serving.columns) == SERVING_COLUMNS
    got = serving[["config", "rank", "B", "miss"]].astype(object).values.tolist()
    # by hand: b200 fp8 x4 at B=256: 256 / (0.029 * 4) = 2,207 tokens/s per chip; b200 x8
    # at B=128 (B=256 does not fit): 128 / (0.011 * 8) = 1,455; h100 x8 at B=128: 615
    assert got == [
        ["b200 fp8 ×4", 1, 256, ""],
        ["b200 fp8 ×8", 2, 128, ""],
        ["h100 bf16 ×8", 3, 128, ""],
        ["mi300x bf16 ×4", pd.NA, 64, "tpot"],  # its nearest: 31 ms of 30 ms
    ]
    best = serving.iloc[0]
    assert best["tokens_per_second_per_chip"] == pytest.approx(256 / (0.029 * 4))
    assert best["tokens_per_second_per_user"] == pytest.approx(1 / 0.029)
    assert best["request_latency"] == pytest.approx(0.05 + 255 * 0.029)
    assert (best["isl"], best["osl"], best["tpot_target"]) == (ISL, OSL, 0.03)
    assert bool(best["meets_target"])
    assert serving["time_basis"].tolist() == ["floor"] * 4
    assert serving["series"].tolist() == ["llama"] * 4


def test_the_curves_hold_every_point_for_the_chart():
    _serving, curves = answer_of(llama_rows())
    assert list(curves.columns) == CURVE_COLUMNS
    assert len(curves) == 12  # every point, in file order
    b200 = curves[curves["config"] == "b200 fp8 ×8"]
    assert b200["B"].tolist() == list(SWEEP)
    assert b200["fits"].tolist() == [True, True, False]
    np.testing.assert_allclose(b200["tokens_per_second_per_user"], [125, 1 / 0.011, 62.5])


def test_equal_throughput_shares_a_rank_in_file_order():
    rows = [
        point("s", "h200", "fp8", 8, 128, 0.05, 0.016),  # 1,000 tokens/s per chip
        point("s", "b200", "fp8", 4, 64, 0.05, 0.016),  # 1,000 too
        point("s", "h100", "fp8", 8, 64, 0.05, 0.016),  # 500
    ]
    serving, _ = answer_of(rows)
    assert serving["config"].tolist() == ["h200 fp8 ×8", "b200 fp8 ×4", "h100 fp8 ×8"]
    assert serving["rank"].tolist() == [1, 1, 3]  # a tie is never ranked as if one were ahead


def test_a_configuration_meeting_nothing_is_listed_after_at_its_nearest_point_with_why():
    rows = [
        # misses TTFT at every batch (its prefill alone is too slow), TPOT from B = 128
        point("s", "h100", "bf16", 4, 64, 0.9, 0.02, ttft_target=0.5),
        point("s", "h100", "bf16", 4, 128, 0.9, 0.04, ttft_target=0.5),
        # fits nowhere: the nearest is the smallest footprint over capacity
        point("s", "a100", "bf16", 4, 64, 0.1, 0.02, ttft_target=0.5, fits=False, footprint=9e10),
        point("s", "a100", "bf16", 4, 128, 0.1, 0.02, ttft_target=0.5, fits=False, footprint=12e10),
        point("s", "b200", "fp8", 4, 64, 0.1, 0.02, ttft_target=0.5),
    ]
    serving, _ = answer_of(rows)
    got = serving[["config", "rank", "B", "miss", "meets_target"]].astype(object)
    assert got.values.tolist() == [
        ["b200 fp8 ×4", 1, 64, "", True],
        ["a100 bf16 ×4", pd.NA, 64, "memory", True],  # 90 of 80 GB: 1.13x over
        ["h100 bf16 ×4", pd.NA, 64, "ttft", False],  # 0.9 of 0.5 s: 1.8x over
    ]  # the misses nearest first


def test_without_a_target_the_configurations_that_fit_are_ranked():
    rows = [
        point("s", "h100", "bf16", 8, 185, 0.05, 0.04, tpot_target=np.nan),
        point("s", "h100", "bf16", 4, 185, 0.05, 0.04, tpot_target=np.nan, fits=False),
        point("s", "b200", "fp8", 4, 400, 0.05, 0.04, tpot_target=np.nan),
    ]
    serving, _ = answer_of(rows)
    got = serving[["config", "rank", "miss"]].astype(object).values.tolist()
    assert got == [["b200 fp8 ×4", 1, ""], ["h100 bf16 ×8", 2, ""],
                   ["h100 bf16 ×4", pd.NA, "memory"]]  # fmt: skip
    assert serving["meets_target"].isna().all()


def test_each_model_of_a_series_is_ranked_apart_and_named_in_its_configurations():
    rows = [
        point("s", "b200", "fp8", 4, 64, 0.05, 0.01, model="mixtral-8x7b"),  # 1,600
        point("s", "b200", "fp8", 4, 64, 0.05, 0.02),  # 800
        point("s", "h100", "fp8", 4, 64, 0.05, 0.016),  # 1,000
    ]
    serving, curves = answer_of(rows)
    got = serving[["model", "config", "rank"]].values.tolist()
    assert got == [
        ["mixtral-8x7b", "mixtral-8x7b b200 fp8 ×4", 1],
        ["llama3-70b", "llama3-70b h100 fp8 ×4", 1],  # a token of one model is not another's
        ["llama3-70b", "llama3-70b b200 fp8 ×4", 2],
    ]
    assert set(curves["config"]) == set(serving["config"])


def test_a_kv_cache_dtype_unlike_the_activations_is_part_of_the_configuration():
    rows = [
        point("s", "h100", "bf16", 8, 64, 0.05, 0.02, kv_dtype="fp8"),
        point("s", "h100", "bf16", 8, 64, 0.05, 0.025),
    ]
    rows.append({**point("s", "b200", "fp8", 8, 64, 0.05, 0.03), "kv_dtype": ""})
    serving, _ = answer_of(rows)
    assert serving["config"].tolist() == ["h100 bf16, KV fp8 ×8", "h100 bf16 ×8", "b200 fp8 ×8"]
    assert serving["kv_dtype"].tolist() == ["fp8", "bf16", "fp8"]  # blank: the activations'


def test_the_cheapest_and_the_most_tokens_per_joule_among_those_meeting():
    prices = {"h100": 2.0, "b200": 6.0, "mi300x": 1.0}
    tdps = {"h100": 700.0, "b200": 1000.0, "mi300x": 750.0}
    serving, curves = answer_of(llama_rows(prices, tdps))
    assert list(serving.columns) == [
        *SERVING_COLUMNS, "usd_per_million_tokens", "tokens_per_joule", "cost_rank", "energy_rank"
    ]  # fmt: skip
    by = serving.set_index("config")
    # $/Mtok by hand: b200 x4 6/3600/2207*1e6 = 0.755; b200 x8 6/3600/1455*1e6 = 1.146;
    # h100 x8 at 128 / (0.026 * 8) = 615 tokens/s: 2/3600/615*1e6 = 0.903
    assert by.loc["b200 fp8 ×4", "usd_per_million_tokens"] == pytest.approx(0.755, abs=1e-3)
    assert by.loc["h100 bf16 ×8", "usd_per_million_tokens"] == pytest.approx(0.903, abs=1e-3)
    assert by["cost_rank"].astype(object).tolist() == [1, 3, 2, pd.NA]  # mi300x misses
    # tokens per joule: 2207 / 1000 = 2.21, 1455 / 1000 = 1.45, 615 / 700 = 0.879
    assert by["energy_rank"].astype(object).tolist() == [1, 2, 3, pd.NA]
    assert "usd_per_million_tokens" in curves.columns


def test_no_serve_row_gives_empty_tables_with_their_columns():
    results = frame(llama_rows())
    results = results[results["op"] != "serve"].drop(columns=["isl", "osl", "ttft", "tpot"])
    rows = serving_rows(results.reset_index(drop=True))
    assert rows.empty
    serving, curves = serving_answer(rows)
    assert serving.empty and curves.empty
    assert list(serving.columns) == SERVING_COLUMNS and list(curves.columns) == CURVE_COLUMNS


@pytest.mark.parametrize("cuts", [[3], [1, 2, 23], [7, 8, 9, 10, 17]])
def test_partials_of_frames_cut_anywhere_merge_into_the_answer_of_every_row(cuts):
    rows = llama_rows() + [
        point("other", "h100", "fp8", 8, b, 0.2, 0.01 + b / 10_000, ttft_target=0.1)
        for b in (8, 16)
    ]
    results = frame(rows)  # 28 rows: the cuts fall inside series and inside configurations
    bounds = [0, *cuts, len(results)]
    parts = [
        serving_rows(results.iloc[lo:hi].reset_index(drop=True))
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)
    ]
    got, got_curves = serving_answer(merge_serving(parts))
    want, want_curves = serving_answer(serving_rows(results))
    pd.testing.assert_frame_equal(got, want)
    pd.testing.assert_frame_equal(got_curves, want_curves)
    assert want["series"].tolist() == ["llama"] * 4 + ["other"]  # file order


SERVE = """name,op,model,hardware,dtype,chips,shard,isl,osl,B,tpot_target
llama,serve,llama3-70b,h100|b200,bf16|fp8,4|8,N,2048,256,64|128|256|512,0.015
mixtral,serve,mixtral-8x7b,h100|mi300x,fp8,4,N,2048,256,1..1024*4,0.01
"""


def test_a_serve_run_s_answer_is_pandas_best_point_per_configuration(tmp_path):
    """By hand from the results, as a planner would: per configuration, the row with the most
    tokens/s per chip among those meeting the target and fitting; ranked per series."""
    a = pipeline.analyze(write_scenarios(tmp_path, SERVE))
    serving, curves = a.summary.serving, a.summary.serving_curves
    rows = a.results[a.results["op"].astype(str) == "serve"].copy()
    assert len(curves) == len(rows) == 8 * 4 + 2 * 6
    ok = rows["fits"].astype(bool) & rows["meets_target"].astype("boolean").fillna(True)
    key = ["series", "hardware", "x_dtype", "chips"]
    best = (
        rows[ok.to_numpy()]
        .sort_values("tokens_per_second_per_chip", ascending=False, kind="stable")
        .drop_duplicates(key)
    )
    meeting = serving[serving["rank"].notna()]
    assert len(meeting) == len(best) > 2
    for series, lines in meeting.groupby("series", sort=False):
        want = best[best["series"] == series]
        got = list(zip(lines["hardware"], lines["dtype"], lines["chips"], lines["B"], strict=True))
        assert got == list(
            zip(want["hardware"].astype(str), want["x_dtype"].astype(str), want["chips"],
                want["B"], strict=True)
        )  # fmt: skip
        np.testing.assert_allclose(
            lines["tokens_per_second_per_chip"], want["tokens_per_second_per_chip"]
        )
        assert lines["rank"].tolist() == list(range(1, len(lines) + 1))
    missing = serving[serving["rank"].isna()]  # every configuration listed once
    assert len(serving) == rows[key].drop_duplicates().shape[0] == len(meeting) + len(missing)
    assert (missing["miss"] != "").all()
    assert serving["series"].drop_duplicates().tolist() == ["llama", "mixtral"]


def test_a_serve_run_cut_anywhere_merges_into_the_local_answer(tmp_path):
    path = write_scenarios(tmp_path, SERVE)
    local = pipeline.analyze(path)
    plan = load_scenarios(path, load_catalog(), planned=True).planned
    for cuts in ([1], [3, 17, 31], [40]):
        at = plan.snapped(sorted({0, plan.total, *cuts})).tolist()
        parts = [computed(plan.rows(lo, hi))[2] for lo, hi in zip(at[:-1], at[1:], strict=True)]
        serving, curves = serving_answer(merge(parts).serving)
        pd.testing.assert_frame_equal(serving, local.summary.serving)
        pd.testing.assert_frame_equal(curves, local.summary.serving_curves)


def test_categorical_texts_are_worded_from_their_codes_a_missing_one_blank():
    results = frame([point("a", "h100", "bf16", 1, 8, 0.2, 0.02, kv_dtype="fp8"),
                     point("b", "b200", "fp8", 2, 16, 0.3, 0.04)])  # fmt: skip
    coded = results.copy()
    for c in ("op", "hardware", "kv_dtype", "miss", "time_basis"):
        coded[c] = coded[c].astype("category")
    coded.loc[0, "kv_dtype"] = None  # blank: the KV cache in the activations' dtype
    got = serving_rows(coded)
    assert list(got["hardware"]) == ["h100", "b200"]
    assert list(got["kv_dtype"]) == ["bf16", "fp8"]
    assert list(got["miss"]) == ["", "tpot"]
    assert all(type(v) is str for c in ("hardware", "kv_dtype", "miss") for v in got[c])
