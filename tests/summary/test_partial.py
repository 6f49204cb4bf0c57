"""summary/partial.py: every statistic as partial -> merge -> finish. The partials of frames
cut anywhere (inside series, inside a fleet list), merged in file order, finish into the
Summary of every row at once: counts, series lines, critical batches, findings, derated
rows, refusals and the chart grids."""

from __future__ import annotations

import pandas as pd
import pytest

from pipeline.catalogs.hardware import load_catalog
from pipeline.summary.finish import finish
from pipeline.summary.grids import KEYS
from pipeline.summary.partial import chips_counted, computed, counts, merge
from tests.helpers import load_text

TEXT = """
name,op,hardware,B,D,F,bytes,chips,compute_efficiency
a,matmul,h100,1..3000,4096,4096,,,
b,matmul,tpu-v5e|b200,1..700,8192,8192,,,0.5
c,all_gather,h100,,,,1000..1000000000*10,8,
"""


def partials(tmp_path, cuts: list[int]):
    plan = load_text(tmp_path, load_catalog(), TEXT, planned=True).planned
    cuts = [*cuts, plan.total]
    frames = [plan.rows(lo, hi) for lo, hi in zip(cuts[:-1], cuts[1:], strict=True)]
    return [computed(f, grids=True)[2] for f in frames]


def summary_of(part):
    return finish(part, [{"name": c} for c in chips_counted(part)], 3, 0, 0)


@pytest.mark.parametrize("cuts", [[0, 300, 2999, 3900], [0, 1, 2, 4399, 4400]])
def test_merged_partials_finish_as_the_whole(tmp_path, cuts):
    (whole,) = partials(tmp_path, [0])
    parts = partials(tmp_path, cuts)
    merged = merge(parts)
    assert merged.scenarios == whole.scenarios == sum(p.scenarios for p in parts)
    keys = ["hardware", "op", "bound", "fits"]
    pd.testing.assert_frame_equal(
        merged.counts.sort_values(keys).reset_index(drop=True),
        whole.counts.sort_values(keys).reset_index(drop=True),
    )
    assert list(merged.lines.index) == ["a", "b", "c"]  # file order
    pd.testing.assert_frame_equal(merged.lines, whole.lines, check_dtype=False)
    pd.testing.assert_frame_equal(merged.critical, whole.critical, check_dtype=False)
    pd.testing.assert_frame_equal(merged.derated, whole.derated, check_dtype=False)
    assert merged.derated["rows"].sum() == 1400  # b's rows on both chips
    pd.testing.assert_frame_equal(
        merged.grids.bins.sort_values(KEYS).reset_index(drop=True),
        whole.grids.bins.sort_values(KEYS).reset_index(drop=True),
        check_dtype=False,
    )
    got, want = summary_of(merged), summary_of(whole)
    for field in ("scenarios", "bounds", "not_fitting", "overrides", "bottom"):
        assert getattr(got, field) == getattr(want, field), field
    for field in ("per_hardware", "per_op", "critical_batches", "chips", "series"):
        pd.testing.assert_frame_equal(getattr(got, field), getattr(want, field), check_dtype=False)


def test_counts_are_per_hardware_op_bound_and_fit(tmp_path):
    plan = load_text(tmp_path, load_catalog(), TEXT, planned=True).planned
    results, *_ = computed(plan.rows(0, plan.total))
    own = (results["name"] == "a[B=1]").to_numpy()
    table = counts(results, own)
    assert table["scenarios"].sum() == len(results) and table["own"].sum() == 1
    by_hand = results.groupby(["hardware", "op", "bound"], observed=True).size()
    got = table.groupby(["hardware", "op", "bound"])["scenarios"].sum()
    assert got.to_dict() == {tuple(map(str, k)): v for k, v in by_hand.items()}


def test_a_refused_scenario_leaves_the_results_and_is_counted_once(tmp_path):
    text = "name,op,hardware,B,D,F,hbm_efficiency\ns,matmul,h100,1|2|3,8,8,1e-320\n"
    plan = load_text(tmp_path, load_catalog(), text, planned=True).planned
    parts = [computed(plan.rows(k, k + 1))[2] for k in range(plan.total)]
    merged = merge(parts)
    assert merged.scenarios == 0
    assert merged.refused[["line", "name", "points"]].values.tolist() == [[2, "s[B=1]", 3]]


STEPS = """
name,op,model,hardware,B,T,S,D,F,group,chips,shard
dec,transformer,llama3-8b,h100,1..60,1,2048,,,,,
g1,matmul,,h100,8,,,1..30,4096,blk,,
g2,matmul,,h100,8,,,1..30,64,blk,,
w,matmul,,h100,8,,,1..300,4096,,8,D
"""


@pytest.mark.parametrize("cuts", [[0], [0, 7, 45, 60, 120, 200, 390]])  # never inside the group
def test_the_ranked_steps_with_their_top_ops_and_the_idle_chips_merge_as_the_whole(tmp_path, cuts):
    plan = load_text(tmp_path, load_catalog(), STEPS, planned=True).planned
    edges = [*cuts, plan.total]
    merged = merge([computed(plan.rows(a, b))[2] for a, b in zip(edges, edges[1:], strict=False)])
    summary = summary_of(merged)
    steps = summary.steps
    assert len(steps) == 50  # STEP_ROWS: the slowest 49 of the 60 steps, and the group's best
    assert steps["name"].tolist() == [*(f"dec[B={b}]" for b in range(60, 11, -1)), "blk[D=1]"]
    assert set(steps["top_op"]) <= {"attention", "mlp_gate", "mlp_up", "mlp_down", "lm_head", "g1"}
    assert (steps["top_time"] <= steps["t_lower"]).all() and (steps["top_time"] > 0).all()
    assert summary.steps_total == 60 + 30  # the steps and the group's points
    assert summary.idle[["line", "idle", "rows"]].to_dict("records") == [
        {"line": 5, "idle": 7, "rows": 300}
    ]
    results, *_ = computed(plan.rows(0, plan.total))
    ops = results[results["name"].str.startswith("dec[B=60]/")]  # the slowest step's rows
    assert steps["top_op"][0] == ops.loc[ops["t_lower"].idxmax(), "name"].split("/")[1]
