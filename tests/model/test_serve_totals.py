"""The serve row's figures (model.serve_totals): equal to those of the plain transformer rows
the tool computes for the same B and S, speculative decoding's tokens per step, the targets
met or missed, the memory at the full context, and the calibration's estimate as the basis."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import pipeline
from pipeline.model.serve_totals import MISS_TEXTS, SERVE_COLUMNS, tokens_per_step

SERVE = {"name": "s", "op": "serve", "model": "llama3-70b", "hardware": "h100", "chips": 8,
         "shard": "N", "isl": 2048, "osl": 256}  # fmt: skip
STEP = {"op": "transformer", "model": "llama3-70b", "hardware": "h100", "chips": 8, "shard": "N"}


def run(*rows, **options) -> pd.DataFrame:
    a = pipeline.analyze(list(rows), **options)
    assert not a.problem_list, [str(p) for p in a.problem_list]
    return a.results.set_index("name")


def test_the_serve_columns_are_the_plain_transformer_rows_the_tool_computes():
    r = run({**SERVE, "B": 64, "tpot_target": 0.03},
            {"name": "p", **STEP, "B": 1, "T": 2048, "S": 2048},
            {"name": "d", **STEP, "B": 64, "T": 1, "S": 2048 + 128},
            {"name": "full", **STEP, "B": 64, "T": 1, "S": 2048 + 256})  # fmt: skip
    s = r.loc["s"]
    assert s["ttft"] == r.loc["p", "t_lower"]  # exactly: the same rows computed
    assert s["tpot"] == r.loc["d", "t_lower"]
    assert s["request_latency"] == pytest.approx(s["ttft"] + 255 * s["tpot"], rel=1e-12)
    assert s["t_lower"] == pytest.approx(s["request_latency"], rel=1e-12)
    assert s["tokens_per_second_per_chip"] == pytest.approx(64 / (s["tpot"] * 8), rel=1e-12)
    assert s["tokens_per_second_per_user"] == pytest.approx(1 / s["tpot"], rel=1e-12)
    # the memory of 64 requests at their full context: the decode step's at S = isl + osl
    assert s["memory_footprint"] == pytest.approx(r.loc["full", "memory_footprint"], rel=1e-12)
    assert s["max_batch"] == r.loc["full", "max_batch"] and s["fits"]
    assert s["kv_cache_bytes"] == r.loc["full", "kv_cache_bytes"]
    for c in ("flops", "hbm_bytes", "t_math", "t_hbm", "t_network"):
        assert s[c] == pytest.approx(r.loc["p", c] + 255 * r.loc["d", c], rel=1e-12), c
    assert (s["meets_target"], s["miss"], s["time_basis"]) == (True, "", "floor")
    assert (s["B"], s["isl"], s["osl"], s["tpot_target"]) == (64, 2048, 256, 0.03)
    assert pd.isna(s["batch_at_target"]) and pd.isna(s["speculation_pays"])
    assert s["bound"] == "memory" and s["tokens_per_step"] == 1


def test_the_serve_columns_come_in_order_after_the_steps_and_are_blank_elsewhere():
    r = run({**SERVE, "B": 8})
    columns = list(r.columns)
    at = columns.index("max_batch") + 1
    assert tuple(columns[at : at + len(SERVE_COLUMNS)]) == SERVE_COLUMNS
    others = r.iloc[1:]
    assert others["ttft"].isna().all() and others["miss"].isna().all()
    assert others["meets_target"].isna().all() and others["isl"].isna().all()
    assert pd.isna(r.loc["s", "meets_target"])  # no target: neither met nor missed
    plain = pipeline.analyze([{"name": "m", "op": "matmul", "hardware": "h100", "B": 8,
                               "D": 8, "F": 8}]).results  # fmt: skip
    assert "ttft" not in plain.columns and "isl" not in plain.columns


def test_speculation_yields_its_expected_tokens_a_step_and_stops_paying_past_the_critical_batch():
    k, a = 4, 0.7
    want = (1 - a ** (k + 1)) / (1 - a)  # 1 + a + a^2 + a^3 + a^4
    assert want == pytest.approx(1 + 0.7 + 0.49 + 0.343 + 0.2401)
    assert tokens_per_step(np.array([4.0, 4.0, 0.0]), np.array([0.7, 1.0, 0.5])) == (
        pytest.approx([want, 5.0, 1.0]))  # fmt: skip
    spec = {**SERVE, "draft_tokens": k, "acceptance": a, "draft_model": "llama3-8b"}
    r = run(
        {**spec, "B": 8},
        {**spec, "name": "big", "B": 128},
        {"name": "d", **STEP, "B": 8, "T": 5, "S": 2176},
        {"name": "q", **STEP, "model": "llama3-8b", "B": 8, "T": 1, "S": 2176, "count": 4},
    )
    s = r.loc["s"]
    assert s["tokens_per_step"] == pytest.approx(want, rel=1e-12)
    step = r.loc["d", "t_lower"] + r.loc["q", "t_lower"]  # verify k + 1, then k drafts
    assert s["tpot"] == pytest.approx(step / want, rel=1e-12)
    assert s["critical_tokens"] == 296  # bf16 on an H100: 989 / 3.35 FLOPs a byte, rounded up
    assert s["speculation_pays"]  # 8 x 5 tokens a step, far below 296
    assert not r.loc["big", "speculation_pays"]  # 128 x 5 = 640 past it
    weights = r.loc["s/decode", "weight_bytes"] + r.loc["s/draft", "weight_bytes"]
    assert s["weight_bytes"] == weights  # both models held


def test_the_moe_critical_batch_is_its_total_over_active_parameters_later():
    r = run({**SERVE, "model": "mixtral-8x7b", "chips": 1, "shard": "", "B": 8})
    dense = 989e12 / 3.35e12  # bytes a parameter (2) x FLOP/s / (2 x bytes/s)
    want = np.ceil(dense * 46_702_792_704 / 12_879_925_248)
    assert r.loc["s", "critical_tokens"] == want


def test_a_target_missed_says_which_and_memory_too():
    r = run({**SERVE, "B": 4096, "ttft_target": 0.01, "tpot_target": 0.001},
            {**SERVE, "name": "ok", "B": 1, "ttft_target": 1.0})  # fmt: skip
    s = r.loc["s"]
    assert s["miss"] == "ttft, tpot, memory" and not s["meets_target"] and not s["fits"]
    assert r.loc["ok", "meets_target"] and r.loc["ok", "miss"] == ""
    assert MISS_TEXTS[:5] == ("", "ttft", "tpot", "ttft, tpot", "memory")


def test_a_calibrated_run_times_the_request_by_its_steps_estimates():
    """calibration="published": every op of the prefill and the decode has an estimate
    (model.step_totals sums them), so every serve time is the estimate's."""
    r = run({**SERVE, "model": "llama3-8b", "chips": 1, "shard": "", "B": 16},
            {"name": "p", **STEP, "model": "llama3-8b", "chips": 1, "shard": "", "B": 1,
             "T": 2048, "S": 2048},
            {"name": "d", **STEP, "model": "llama3-8b", "chips": 1, "shard": "", "B": 16,
             "T": 1, "S": 2176}, calibration="published")  # fmt: skip
    s = r.loc["s"]
    assert s["time_basis"] == "estimate"
    assert s["ttft"] == r.loc["p", "t_estimate"] and s["ttft"] > r.loc["p", "t_lower"]
    assert s["tpot"] == r.loc["d", "t_estimate"]
    assert s["t_estimate"] == pytest.approx(s["request_latency"], rel=1e-12)
    assert s["t_lower"] < s["t_estimate"]  # the floor kept beside it
    assert str(s["calibration"]) == str(r.loc["d", "calibration"])
