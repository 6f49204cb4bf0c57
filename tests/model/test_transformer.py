"""Op `transformer` (model.transformer): a step as its ops, checked against the book's
formulas ("How to Scale Your Model": Transformer math, Inference) and against two peer
analyzers' per-op figures for Llama-3-8B (GenZ-LLM-Analyzer 091bdd0 and LLM-Viewer 472f71f,
run on their own code; the figures where their conventions agree with ours)."""

from __future__ import annotations

import pandas as pd
import pytest

import pipeline
from pipeline.model.transformer import DENSE

LLAMA3_8B = {"op": "transformer", "model": "llama3-8b", "hardware": "h100"}


def step(**row) -> pd.DataFrame:
    """The results of one step, indexed by op (the total row as 'total')."""
    a = pipeline.analyze(pd.DataFrame([{"name": "s", **LLAMA3_8B, **row}]))
    assert not a.problem_list, [str(p) for p in a.problem_list]
    out = a.results.copy()
    out.index = ["total", *(n.split("/", 1)[1] for n in out["name"].iloc[1:])]
    return out


def test_a_step_is_its_total_then_one_row_per_op():
    r = step(B=32, T=1, S=2048)
    assert list(r.index) == ["total", *(t["name"] for t in DENSE)]
    assert r["name"].tolist()[:2] == ["s", "s/q_proj"]
    assert r.loc["q_proj", "series"] == "s/q_proj" and r.loc["total", "series"] == "s"
    assert r.loc["q_proj", "count"] == 32 and r.loc["lm_head", "count"] == 1


# GenZ and LLM-Viewer, Llama-3-8B decode B = 32, S = 2048, bf16: per layer (lm_head once)
DECODE_PER_LAYER = {  # op: (FLOPs, bytes)
    "q_proj": (1_073_741_824, 34_078_720),  # both peers, exactly
    "k_proj": (268_435_456, 8_716_288),  # LLM-Viewer (the KV write counted as k's output)
    "v_proj": (268_435_456, 8_716_288),
    "attention": (1_073_741_824, 268_959_744),  # GenZ FLOPs; Q + KV cache + output
    "o_proj": (1_073_741_824, 34_078_720),
    "mlp_gate": (3_758_096_384, 118_620_160),
    "mlp_up": (3_758_096_384, 118_620_160),
    "mlp_down": (3_758_096_384, 118_620_160),
    "lm_head": (33_621_540_864, 1_059_143_680),  # GenZ, FLOPs and bytes
}
PREFILL_PER_LAYER = {  # B = 1, T = S = 2048
    "q_proj": (68_719_476_736, 67_108_864),
    "k_proj": (17_179_869_184, 29_360_128),
    "attention": (68_719_476_736, 41_943_040),  # GenZ's HBM bytes: scores stay on chip
    "o_proj": (68_719_476_736, 67_108_864),
    "mlp_down": (240_518_168_576, 192_937_984),
    "lm_head": (2_151_778_615_296, 1_592_786_944),  # every token's logits (GenZ; LLM-Viewer
}  # counts the last token only)


@pytest.mark.parametrize(
    ("row", "want"),
    [
        ({"B": 32, "T": 1, "S": 2048}, DECODE_PER_LAYER),
        ({"B": 1, "T": 2048, "S": 2048}, PREFILL_PER_LAYER),
    ],  # fmt: skip
)
def test_per_op_flops_and_bytes_match_the_peer_analyzers(row, want):
    r = step(**row)
    for op, (flops, moved) in want.items():
        count = r.loc[op, "count"]
        assert r.loc[op, "flops"] == flops * count, op
        assert r.loc[op, "hbm_bytes"] == moved * count, op


def test_decode_flops_total_is_genz_to_the_flop_plus_the_elementwise_ops():
    r = step(B=32, T=1, S=2048)
    elementwise = r.loc[["norms", "residual", "mlp_act"], "flops"].sum()
    assert r.loc["total", "flops"] - elementwise == 514_657_878_016  # GenZ's decode total


def test_kv_cache_is_2_S_L_K_H_bytes_per_sequence():
    r = step(B=32, T=1, S=2048)
    assert r.loc["total", "kv_cache_bytes"] == 32 * 2 * 2048 * 32 * 8 * 128 * 2  # 8 GiB
    assert r.loc["total", "kv_cache_bytes"] == 8 * 2**30  # GenZ: 8192 MiB


def test_decode_attention_intensity_is_about_n_over_k():
    r = step(B=32, T=1, S=8192)
    assert r.loc["attention", "intensity"] == pytest.approx(32 / 8, rel=0.01)  # GQA: N/K


def test_prefill_attention_intensity_is_t_over_2_for_mha():
    a = pipeline.analyze([{"name": "p", "op": "transformer", "model": "llama2-7b",
                           "hardware": "h100", "B": 1, "T": 4096, "S": 4096}])  # fmt: skip
    attention = a.results.set_index("name").loc["p/attention"]
    assert attention["intensity"] == pytest.approx(4096 / 2, rel=1e-12)  # book: T/2, K = N


def test_the_decode_step_is_the_books_bound_but_the_embedding_it_never_reads():
    """Inference: a decode step takes at least B·KV/BW + max(2·B·params/FLOPs,
    param_bytes/BW). The sum of the ops reads every weight once but the embedding table (a
    lookup of B rows), and adds the activations and norms the bound leaves out."""
    r = step(B=32, T=1, S=2048)
    total, bw, peak = r.loc["total"], 3.35e12, 9.89e14
    params, embedding = 8_030_261_248, 128256 * 4096
    bound = total["kv_cache_bytes"] / bw + max(2 * 32 * params / peak, 2 * params / bw)
    assert bound == pytest.approx(7.36e-3, rel=0.01)
    without_embedding = bound - 2 * embedding / bw
    assert total["t_lower"] == pytest.approx(without_embedding, rel=0.02)
    assert total["t_lower"] == pytest.approx(r["t_lower"].iloc[1:].sum(), rel=1e-12)


def test_the_total_is_the_plain_sum_of_its_rows_and_says_what_a_planner_asks():
    r = step(B=32, T=1, S=2048)
    ops, total = r.iloc[1:], r.loc["total"]
    for c in ("flops", "hbm_bytes", "network_bytes", "t_math", "t_hbm", "t_lower", "t_upper"):
        assert total[c] == pytest.approx(ops[c].sum(), rel=1e-12), c
    assert total["tokens_per_second"] == pytest.approx(32 / total["t_lower"])
    assert total["memory_share"] == 1.0 and total["bound"] == "memory"
    assert total["weight_bytes"] == 2 * 8_030_261_248
    assert total["fits"] and total["max_batch"] == pytest.approx(237, abs=1)
    assert pd.isna(total["critical_batch"])


def test_tensor_parallel_70b_on_8_h100s_pays_two_allreduces_a_layer():
    a = pipeline.analyze([{"name": "tp", "op": "transformer", "model": "llama3-70b",
                           "hardware": "h100", "chips": 8, "shard": "N", "B": 64, "T": 1,
                           "S": 8192}])  # fmt: skip
    assert not a.problem_list
    r = a.results.set_index("name")
    talking = r.index[r["network_bytes"] > 0].tolist()
    assert talking == ["tp", "tp/o_proj", "tp/mlp_down"]
    assert r.loc["tp/o_proj", "network_bytes"] == 80 * 64 * 8192 * 2  # [B,T,D] a layer
    assert r.loc["tp/k_proj", "shard"] == "K"  # 8 KV heads: one per chip
    one = pipeline.analyze([{"name": "one", "op": "transformer", "model": "llama3-70b",
                             "hardware": "h100", "B": 64, "T": 1, "S": 8192}])  # fmt: skip
    assert not one.results.set_index("name").loc["one", "fits"]  # 141 GB of weights
    assert r.loc["tp", "fits"]


def test_moe_reads_the_experts_its_tokens_use_and_its_batch_pays_e_over_k_later():
    rows = [{"name": f"m{b}", "op": "transformer", "model": "mixtral-8x7b", "hardware": "h100",
             "B": b, "T": 1, "S": 1024} for b in (1, 4096)]  # fmt: skip
    r = pipeline.analyze(rows).results.set_index("name")
    ops = [n.split("/")[1] for n in r.index if n.startswith("m1/")]
    assert ops == ["q_proj", "k_proj", "v_proj", "attention", "o_proj", "norms", "residual",
                   "router", "experts_gate_up", "experts_act", "experts_down", "lm_head"]  # fmt: skip
    weights = 2 * 4096 * 14336 * 2  # one expert's gate and up, bf16
    one = r.loc["m1/experts_gate_up"]  # one token: its k = 2 experts' weights
    assert one["hbm_bytes"] / 32 == pytest.approx(2 * weights, rel=0.01)
    # B tokens over E experts, k each: as intense as a dense matmul of B·k/E tokens (the
    # book: an MoE layer's critical batch is E/k times the dense one's)
    dense = pipeline.analyze([{"name": "d", "op": "matmul", "B": 4096 * 2 // 8, "D": 4096,
                               "F": 2 * 14336, "hardware": "h100"}]).results.iloc[0]  # fmt: skip
    assert r.loc["m4096/experts_gate_up", "intensity"] == pytest.approx(dense["intensity"],
                                                                        rel=0.001)  # fmt: skip


def test_tensor_parallel_moe_splits_each_experts_width():
    one, four = (pipeline.analyze([{"name": "m", "op": "transformer", "model": "mixtral-8x7b",
                                    "hardware": "h100", "B": 64, "T": 1, "S": 1024, **tp}])
                 for tp in ({}, {"chips": 4, "shard": "N"}))  # fmt: skip
    a = one.results.set_index("name").loc["m/experts_gate_up"]
    b = four.results.set_index("name").loc["m/experts_gate_up"]
    assert b["flops_per_chip"] == pytest.approx(a["flops"] / 4)
    assert b["flops"] == pytest.approx(a["flops"]) and b["chips"] == 4  # the op's total
    assert b["hbm_bytes"] == pytest.approx(a["hbm_bytes"] / 4, rel=0.01)
