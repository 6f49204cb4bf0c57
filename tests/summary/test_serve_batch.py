"""summary/serve_batch.py: a serve row with B blank takes the largest B meeting its TPOT target
and fitting (batch_at_target), checked at that B and the next by plain transformer rows; with
no target, the largest B that fits; none meeting: 0, timed at B = 1."""

from __future__ import annotations

import pandas as pd

import pipeline
from pipeline.summary.serve_batch import with_serve_batch

SERVE = {"name": "s", "op": "serve", "model": "llama3-70b", "hardware": "h100", "chips": 8,
         "shard": "N", "isl": 2048, "osl": 256}  # fmt: skip
STEP = {"op": "transformer", "model": "llama3-70b", "hardware": "h100", "chips": 8, "shard": "N",
        "T": 1}  # fmt: skip


def run(*rows, **options) -> pd.DataFrame:
    a = pipeline.analyze(list(rows), **options)
    assert not a.problem_list, [str(p) for p in a.problem_list]
    return a.results.set_index("name")


def test_batch_at_target_is_the_largest_b_meeting_the_tpot_target():
    target = 0.02
    found = run({**SERVE, "tpot_target": target}).loc["s"]
    b = int(found["batch_at_target"])
    assert found["B"] == b and found["meets_target"] and found["tpot"] <= target
    r = run(*({"name": f"d{n}", **STEP, "B": n, "S": 2176} for n in (b, b + 1)),
            *({"name": f"f{n}", **STEP, "B": n, "S": 2304} for n in (b, b + 1)))  # fmt: skip
    assert r.loc[f"d{b}", "t_lower"] <= target  # B meets the target and fits
    assert r.loc[f"f{b}", "fits"]
    assert r.loc[f"d{b + 1}", "t_lower"] > target or not r.loc[f"f{b + 1}", "fits"]
    assert found["tpot"] == r.loc[f"d{b}", "t_lower"]


def test_without_a_target_b_is_the_largest_that_fits():
    s = run(SERVE).loc["s"]
    assert s["B"] == s["max_batch"] and pd.isna(s["batch_at_target"]) and s["fits"]
    r = run({"name": "f", **STEP, "B": int(s["B"]) + 1, "S": 2304})
    assert not r.loc["f", "fits"]


def test_memory_caps_a_loose_target():
    s = run({**SERVE, "tpot_target": 10.0}).loc["s"]
    assert s["batch_at_target"] == s["max_batch"] == s["B"]


def test_no_batch_meeting_the_target_is_0_timed_at_1():
    r = run({**SERVE, "tpot_target": 1e-4},
            {**SERVE, "name": "slow", "tpot_target": 0.03, "ttft_target": 1e-4})  # fmt: skip
    s, slow_prompt = r.loc["s"], r.loc["slow"]
    assert s["batch_at_target"] == 0 and s["B"] == 1
    assert not s["meets_target"] and s["miss"] == "tpot"
    assert slow_prompt["batch_at_target"] == 0 and slow_prompt["B"] > 1  # TPOT's batch
    assert slow_prompt["miss"] == "ttft"


def test_a_model_that_never_fits_is_timed_at_1_and_says_memory():
    s = run({**SERVE, "chips": 1, "shard": "", "tpot_target": 1.0}).loc["s"]
    assert s["max_batch"] == 0 and s["B"] == 1 and s["batch_at_target"] == 0
    assert s["miss"] == "memory"


def test_the_search_uses_the_calibration_of_the_run():
    small = {**SERVE, "model": "llama3-8b", "chips": 1, "shard": "", "tpot_target": 0.01}
    floor = run(small).loc["s"]
    calibrated = run(small, calibration="published").loc["s"]
    assert calibrated["time_basis"] == "estimate" and calibrated["tpot"] <= 0.03
    assert calibrated["batch_at_target"] < floor["batch_at_target"]  # slower than the floor


def test_rows_with_a_b_or_no_serve_row_are_left_as_they_are():
    frame = pd.DataFrame({"name": ["m"], "op": ["matmul"], "B": [8.0]})
    assert with_serve_batch(frame) is frame
