"""model/step_totals.py: a step's total row is the plain sum of its ops' rows, its bound the
one taking the largest share of its time, and what a planner asks of it (per token, fits,
the largest batch that fits)."""

from __future__ import annotations

import numpy as np
import pytest

import pipeline
from pipeline.model.step_totals import STEP_COLUMNS

ROW = {"op": "transformer", "model": "llama3-8b", "hardware": "h100", "T": 1, "S": 2048}


def test_the_step_columns_are_only_on_total_rows_and_only_when_there_are_steps():
    a = pipeline.analyze([{"name": "d", **ROW, "B": 8}, {"name": "m", "op": "matmul", "B": 8,
                          "D": 8, "F": 8, "hardware": "h100"}])  # fmt: skip
    r = a.results.set_index("name")
    assert list(r.columns[r.columns.get_loc("fits") + 1 :][: len(STEP_COLUMNS)]) == list(
        STEP_COLUMNS
    )
    assert r.loc[["d/q_proj", "m"], "tokens_per_second"].isna().all()
    plain = pipeline.analyze([{"name": "m", "op": "matmul", "B": 8, "D": 8, "F": 8,
                               "hardware": "h100"}])  # fmt: skip
    assert not set(STEP_COLUMNS) & set(plain.results.columns)


def test_a_prefill_is_compute_bound_by_the_largest_share_and_a_decode_memory_bound():
    a = pipeline.analyze([{"name": "p", **ROW, "B": 1, "T": 2048},
                          {"name": "d", **ROW, "B": 1}])  # fmt: skip
    r = a.results.set_index("name")
    assert r.loc["p", "bound"] == "compute" and r.loc["d", "bound"] == "memory"
    shares = r.loc["p", ["compute_share", "memory_share", "network_share"]].to_numpy(float)
    assert shares.sum() == pytest.approx(1.0) and shares[0] > 0.5
    assert r.loc["p", "time_per_token"] == pytest.approx(r.loc["p", "t_lower"] / 2048)


def test_the_largest_batch_that_fits_fits_and_one_more_does_not():
    a = pipeline.analyze([{"name": "d", **ROW, "B": 1}])
    most = int(a.results.set_index("name").loc["d", "max_batch"])
    r = pipeline.analyze([{"name": f"b{b}", **ROW, "B": b} for b in (most, most + 1)])
    fits = r.results.set_index("name")["fits"]
    assert fits[f"b{most}"] and not fits[f"b{most + 1}"]


def test_a_sweep_over_b_gives_a_total_per_point_and_tokens_per_second_grow():
    a = pipeline.analyze([{"name": "d", **ROW, "B": "1..256*4"}])
    totals = a.results[a.results["op"] == "transformer"]
    assert totals["name"].tolist() == ["d[B=1]", "d[B=4]", "d[B=16]", "d[B=64]", "d[B=256]"]
    assert (np.diff(totals["tokens_per_second"].to_numpy()) > 0).all()
    assert set(a.results["series"]) >= {"d", "d/q_proj", "d/lm_head"}
