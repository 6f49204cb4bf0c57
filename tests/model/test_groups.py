"""Groups (model.groups, issue 31 item 3): rows summed into a total row named after their
group, through a transformer step's total code. A llama3-8b decode step written by hand, row
by row (the book's layer: projections, fused attention, gated MLP, norms, LM head), equals the
expansion of op `transformer`."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

import pipeline
from pipeline.model.groups import BLOCK, STEP_OF, expand_groups

# Llama-3-8B (D 4096, N 32, K 8, H 128, F 14336, V 128256, L 32), decode B = 32, S = 2048, on
# one H100 in bf16; custom rows are one layer's FLOPs and bytes (docs/model.md#transformer-
# steps gives each formula): attention 4·B·T·S·N·H and Q + KV cache + output; two RMSNorms;
# two residual adds; SiLU(gate) x up
BY_HAND = """name,op,B,T,D,N,K,H,F,V,count,flops,bytes,group
q,"BTD,DNH->BTNH",32,1,4096,32,,128,,,32,,,mine
k,"BTD,DKH->BTKH",32,1,4096,,8,128,,,32,,,mine
v,"BTD,DKH->BTKH",32,1,4096,,8,128,,,32,,,mine
attention,custom,,,,,,,,,32,1073741824,268959744,mine
o,"BTNH,NHD->BTD",32,1,4096,32,,128,,,32,,,mine
norms,custom,,,,,,,,,32,1048576,1064960,mine
residual,custom,,,,,,,,,32,262144,1572864,mine
gate,"BTD,DF->BTF",32,1,4096,,,,14336,,32,,,mine
up,"BTD,DF->BTF",32,1,4096,,,,14336,,32,,,mine
act,custom,,,,,,,,,32,2293760,2752512,mine
down,"BTF,FD->BTD",32,1,4096,,,,14336,,32,,,mine
head,"BTD,DV->BTV",32,1,4096,,,,,128256,1,,,mine
step,transformer,32,1,,,,,,,,,,
"""
SUMMED = ["flops", "flops_per_chip", "hbm_bytes", "network_bytes", "t_math", "t_hbm",
          "t_lower", "t_upper", "compute_share", "memory_share", "network_share",
          "tokens_per_second", "time_per_token", "intensity"]  # fmt: skip


def analyzed(text: str) -> pipeline.Analysis:
    frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    frame["hardware"], frame["dtype"] = "h100", "bf16"
    frame.loc[frame["op"] == "transformer", ["model", "S"]] = ["llama3-8b", "2048"]
    a = pipeline.analyze(frame.fillna(""))
    assert not a.problem_list, [str(p) for p in a.problem_list]
    return a


def test_a_group_of_hand_written_rows_equals_the_expansion_of_the_same_model():
    r = analyzed(BY_HAND).results.set_index("name")
    mine, step = r.loc["mine"], r.loc["step"]
    assert mine["op"] == "group" and mine["series"] == "mine" and mine["bound"] == step["bound"]
    for c in SUMMED:
        assert mine[c] == pytest.approx(step[c], rel=1e-12), c
    # each hand row is the step's op row of the same name, figure for figure
    for mine_op, its in (("q", "q_proj"), ("attention", "attention"), ("down", "mlp_down"),
                         ("head", "lm_head"), ("act", "mlp_act")):  # fmt: skip
        for c in ("flops", "hbm_bytes", "t_lower"):
            assert r.loc[mine_op, c] == pytest.approx(r.loc[f"step/{its}", c], rel=1e-12)


def test_the_total_comes_first_then_its_rows_and_says_no_weights_it_does_not_know():
    r = analyzed(BY_HAND).results
    assert r["name"].tolist()[:3] == ["mine", "q", "k"]
    total = r.iloc[0]
    assert total["count"] == 1 and r["count"].iloc[1] == 32
    # plain rows do not say which operands are weights: no weight bytes, KV cache or
    # largest batch; the footprint is the largest row's, and it fits
    assert np.isnan(total["weight_bytes"]) and np.isnan(total["max_batch"])
    assert total["memory_footprint"] == r["memory_footprint"].iloc[1:13].max()
    assert bool(total["fits"])


SWEPT = """name,op,hardware,B,D,F,group,count
up,matmul,h100,8|64|512,4096,14336,mlp,32
down,"BF,FD->BD",h100,8|64|512,4096,14336,mlp,32
other,matmul,h100,64,4096,4096,,
"""


def test_a_swept_group_has_a_total_per_point_each_the_sum_of_its_rows_at_that_point():
    r = pipeline.analyze(pd.read_csv(io.StringIO(SWEPT), dtype=str).fillna("")).results
    assert r["name"].tolist() == [
        "mlp[B=8]", "up[B=8]", "down[B=8]", "mlp[B=64]", "up[B=64]", "down[B=64]",
        "mlp[B=512]", "up[B=512]", "down[B=512]", "other",
    ]  # fmt: skip
    for k in range(3):
        total, rows = r.iloc[3 * k], r.iloc[3 * k + 1 : 3 * k + 3]
        assert total["t_lower"] == pytest.approx(rows["t_lower"].sum(), rel=1e-12)
        assert total["tokens_per_second"] == pytest.approx(total["B"] / total["t_lower"])
    assert r["bound"].iloc[[0, 3, 6]].tolist() == ["memory", "memory", "compute"]
    assert np.isnan(r["tokens_per_second"].iloc[-1])  # a row of no group has no total


def test_expand_groups_marks_each_row_with_its_total_and_its_place_before():
    frame = pd.DataFrame(
        {
            "line": [2, 2, 3, 3, 4],
            "name": ["a[B=1]", "a[B=2]", "b[B=1]", "b[B=2]", "c"],
            "series": ["a", "a", "b", "b", "c"],
            "op": ["matmul"] * 5,
            "group": pd.Categorical(["g", "g", "g", "g", ""]),
            "flops": np.nan,
            "bytes": np.nan,
            "measured_seconds": np.nan,
        }
    )
    out = expand_groups(frame)
    assert out["name"].tolist() == ["g[B=1]", "a[B=1]", "b[B=1]", "g[B=2]", "a[B=2]",
                                    "b[B=2]", "c"]  # fmt: skip
    assert out[BLOCK].tolist() == [0, 0, 0, 1, 1, 1, -1]
    assert out[STEP_OF].tolist() == [0, 0, 2, 1, 1, 3, 4]
    assert expand_groups(frame.drop(columns="group")) is not None
