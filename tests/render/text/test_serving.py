"""The serving answer in words (render.text.serving): one sentence per serve series and model,
from Summary.serving alone: the best configuration, its batch, tokens/s per chip and TTFT;
ties; how many meet; the cheapest and the most tokens per joule; or the nearest miss and why."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.i18n import use_lang
from pipeline.render.text.serving import serving_sentences
from pipeline.summary.serving import SERVING_COLUMNS


def lines(*given: dict, **common) -> pd.DataFrame:
    """Summary.serving lines: each given line's config, B, tokens/s per chip, ttft, tpot, rank
    and miss; the request and targets in `common` (isl 2,048, osl 256, TPOT ≤ 30 ms)."""
    rows = []
    for g in given:
        hardware, dtype, chips = g["config"].replace("×", "").split()
        row = {
            "series": "llama3-70b", "model": "llama3-70b", "hardware": hardware, "dtype": dtype,
            "kv_dtype": dtype, "chips": int(chips), "isl": 2048, "osl": 256,
            "ttft_target": np.nan, "tpot_target": 0.03, "miss": "", "time_basis": "floor",
            **common, **g,
        }  # fmt: skip
        row["request_latency"] = row["ttft"] + 255 * row["tpot"]
        row["tokens_per_second_per_user"] = 1 / row["tpot"]
        targets = not (np.isnan(row["ttft_target"]) and np.isnan(row["tpot_target"]))
        row["meets_target"] = (not row["miss"].replace("memory", "")) if targets else pd.NA
        rows.append(row)
    frame = pd.DataFrame(rows)
    frame["rank"] = frame["rank"].astype("Int64")
    frame["meets_target"] = frame["meets_target"].astype("boolean")
    extra = [c for c in frame.columns if c not in SERVING_COLUMNS]
    return frame[SERVING_COLUMNS + extra]


B200 = {"config": "b200 fp8 ×4", "B": 312, "tokens_per_second_per_chip": 4714.3,
        "ttft": 0.055, "tpot": 0.0166, "rank": 1}  # fmt: skip
H200 = {"config": "h200 fp8 ×8", "B": 256, "tokens_per_second_per_chip": 2950.0,
        "ttft": 0.04, "tpot": 0.0108, "rank": 2}  # fmt: skip
H100 = {"config": "h100 bf16 ×4", "B": 1, "tokens_per_second_per_chip": 6.05,
        "ttft": 0.3, "tpot": 0.0413, "rank": pd.NA, "miss": "tpot"}  # fmt: skip


def test_the_issue_s_sentence():
    (said,) = serving_sentences(lines(B200, H200))
    assert said == (
        "llama3-70b, 2,048 in / 256 out, TPOT ≤ 30.0 ms: b200 fp8 ×4 at batch 312, 4,714 "
        "tokens/s per chip, TTFT 55.0 ms."
    )


def test_how_many_meet_is_said_when_some_miss():
    (said,) = serving_sentences(lines(B200, H200, H100))
    assert said.endswith("TTFT 55.0 ms; 2 of 3 configurations meet the targets.")


def test_a_tie_is_named_with_the_best():
    (said,) = serving_sentences(lines(B200, {**H200, "rank": 1}))
    assert said.endswith("(tied with h200 fp8 ×8).")


def test_none_meeting_says_the_nearest_and_why():
    late = {**H100, "config": "mi300x bf16 ×4", "miss": "ttft, tpot", "ttft": 0.9}
    (said,) = serving_sentences(lines(H100, late, ttft_target=0.5))
    assert said == (
        "llama3-70b, 2,048 in / 256 out, TTFT ≤ 500 ms, TPOT ≤ 30.0 ms: no configuration meets "
        "the targets; the nearest, h100 bf16 ×4 at batch 1: TPOT 41.3 ms > 30.0 ms."
    )
    (said,) = serving_sentences(lines({**late, "miss": "ttft, tpot, memory"}, ttft_target=0.5))
    assert said.endswith(": TTFT 900 ms > 500 ms, TPOT 41.3 ms > 30.0 ms, does not fit in HBM.")


def test_without_a_target_the_best_that_fits():
    unfit = {**H100, "miss": "memory"}
    (said,) = serving_sentences(lines(B200, unfit, tpot_target=np.nan))
    assert said == (
        "llama3-70b, 2,048 in / 256 out: b200 fp8 ×4 at batch 312, 4,714 tokens/s per chip, "
        "TTFT 55.0 ms; 1 of 2 configurations fits in HBM."
    )
    (said,) = serving_sentences(lines(B200, H200, unfit, unfit, tpot_target=np.nan))
    assert said.endswith("; 2 of 4 configurations fit in HBM.")
    (said,) = serving_sentences(lines(B200, H100))
    assert said.endswith("; 1 of 2 configurations meets the targets.")
    (said,) = serving_sentences(lines(unfit, tpot_target=np.nan))
    assert said.endswith("no configuration fits in HBM; the nearest, h100 bf16 ×4 at batch 1: "
                         "does not fit in HBM.")  # fmt: skip


def test_the_cheapest_and_the_most_tokens_per_joule_beside_the_fastest():
    priced = lines(
        {**B200, "usd_per_million_tokens": 0.755, "tokens_per_joule": 2.21, "cost_rank": 2,
         "energy_rank": 1},
        {**H200, "usd_per_million_tokens": 0.41, "tokens_per_joule": 1.45, "cost_rank": 1,
         "energy_rank": 2},
    )  # fmt: skip
    (said,) = serving_sentences(priced)
    assert said.endswith(
        "TTFT 55.0 ms; cheapest: h200 fp8 ×8 at batch 256, $0.410 per million tokens; also the "
        "most tokens per joule, 2.21 tokens/J."
    )
    priced["cost_rank"] = pd.array([1, 2], dtype="Int64")
    priced["energy_rank"] = pd.array([2, 1], dtype="Int64")
    (said,) = serving_sentences(priced)
    assert said.endswith(
        "also the cheapest, $0.755 per million tokens; most tokens per joule: h200 fp8 ×8, 1.45 "
        "tokens/J."
    )


def test_a_calibrated_answer_says_its_times_are_estimates():
    (said,) = serving_sentences(lines({**B200, "time_basis": "estimate"}))
    assert said.endswith("TTFT 55.0 ms (calibrated estimates).")


def test_one_sentence_per_series_and_model_in_order():
    mixtral = {**B200, "tokens_per_second_per_chip": 9000.0}
    both = pd.concat(
        [lines(B200), lines(mixtral, model="mixtral-8x7b"), lines(H200, series="other", isl=512)],
        ignore_index=True,
    )
    said = serving_sentences(both)
    assert [s.split(":")[0] for s in said] == [
        "llama3-70b, 2,048 in / 256 out, TPOT ≤ 30.0 ms",
        "llama3-70b (mixtral-8x7b), 2,048 in / 256 out, TPOT ≤ 30.0 ms",
        "other (llama3-70b), 512 in / 256 out, TPOT ≤ 30.0 ms",
    ]
    assert serving_sentences(both, limit=1) == said[:1]
    assert serving_sentences(both.iloc[:0]) == []


def test_in_korean():
    with use_lang("ko"):
        (said,) = serving_sentences(lines(B200, H200, H100))
    assert said.startswith("llama3-70b, 입력 2,048 / 출력 256, TPOT ≤ 30.0 ms: ")
    assert "b200 fp8 ×4" in said and "4,714" in said and "칩당" in said and "per chip" not in said


def test_a_series_named_apart_from_its_model_is_said_with_both():
    table = lines(B200, H200)
    table["series"] = "by-batch"
    (said,) = serving_sentences(table)
    assert said.startswith("by-batch (llama3-70b), 2,048 in / 256 out")


def test_a_floor_best_beside_calibrated_estimates_names_the_best_estimate():
    table = lines(B200, H200)
    table["time_basis"] = ["floor", "estimate"]
    (said,) = serving_sentences(table)
    assert "b200 fp8 ×4 at batch 312, 4,714 tokens/s per chip, TTFT 55.0 ms (its floor: no " in said
    assert "the best calibrated estimate is h200 fp8 ×8 at batch 256, 2,950 tokens/s" in said
    table["time_basis"] = "floor"
    assert "its floor" not in serving_sentences(table)[0]
