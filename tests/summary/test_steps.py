"""summary/steps.py: the Models table's steps, ranked: the slowest first and every
configuration's best kept, the same from frames cut anywhere and merged in file order, at most
the caller's cap."""

from __future__ import annotations

import pandas as pd
import pytest

from pipeline.catalogs.hardware import load_catalog
from pipeline.summary.finish import finish
from pipeline.summary.partial import chips_counted, computed, merge
from tests.helpers import load_text


def summary_of(part):
    return finish(part, [{"name": c} for c in chips_counted(part)], 3, 0, 0)


RANKED = """
name,op,model,hardware,dtype,B,T,S,chips,shard
dec,transformer,llama3-8b,h100,bf16,1..60,1,2048,,
fast,transformer,llama3-8b,b200,bf16|fp8,1|2,1,128,,
slow,transformer,llama3-70b,h100,bf16,1,2048,2048,8,N
"""


def ranked_steps(tmp_path, cuts: list[int], limit: int = 50):
    """The Summary's steps of RANKED computed in frames cut at `cuts` and merged."""
    plan = load_text(tmp_path, load_catalog(), RANKED, planned=True).planned
    edges = [*cuts, plan.total]
    parts = [
        computed(plan.rows(a, b), models_rows=limit)[2]
        for a, b in zip(edges, edges[1:], strict=False)
    ]
    return summary_of(merge(parts)).steps


@pytest.mark.parametrize("cuts", [[0], [0, 1, 30, 59, 60, 62], [0, 61, 63], [0, 2, 4, 64]])
def test_the_slowest_steps_lead_and_every_fleet_points_best_is_kept(tmp_path, cuts):
    steps = ranked_steps(tmp_path, cuts)
    assert len(steps) == 50  # of 65 steps
    names = steps["name"].tolist()
    assert names[0] == "slow"  # the last in file order, the slowest: first
    t = steps["t_lower"].to_numpy()
    assert (t[:-1] >= t[1:]).all()  # slowest first
    # each fleet point's best (most tokens/s of its steps that fit) is listed, though b200's
    # steps are the fastest of the run; `slow`, a row of its own, is one step: no best
    assert "fast[dtype=bf16,B=2]" in names and "fast[dtype=fp8,B=2]" in names
    assert "fast[dtype=bf16,B=1]" not in names and "fast[dtype=fp8,B=1]" not in names
    best = steps.loc[steps["best"], "name"].tolist()
    assert sorted(best) == ["dec[B=60]", "fast[dtype=bf16,B=2]", "fast[dtype=fp8,B=2]"]
    # the rest: the slowest of dec's, B = 60 down to 15
    assert [n for n in names if n.startswith("dec")] == [f"dec[B={b}]" for b in range(60, 13, -1)]
    whole = ranked_steps(tmp_path, [0])
    pd.testing.assert_frame_equal(steps, whole)


def test_the_cap_is_the_callers(tmp_path):
    few = ranked_steps(tmp_path, [0, 30], limit=3)
    # three rows: the three fleet points' bests before the slowest
    assert few["name"].tolist() == ["dec[B=60]", "fast[dtype=bf16,B=2]", "fast[dtype=fp8,B=2]"]
    two = ranked_steps(tmp_path, [0, 62], limit=2)  # the slowest two of the three bests
    assert two["name"].tolist() == ["dec[B=60]", "fast[dtype=bf16,B=2]"]
    every = ranked_steps(tmp_path, [0, 30, 61], limit=1000)
    assert len(every) == 65 and every["name"].iloc[0] == "slow"
