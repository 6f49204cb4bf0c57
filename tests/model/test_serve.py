"""Op `serve` (model.serve): a serve row followed by its prefill, decode (and draft) steps, each
expanded into its ops; its times checked against the book's inference chapter ("How to Scale
Your Model", Part 7 Inference: a decode step takes at least B·KV/BW + max(2·B·params/FLOPs,
param_bytes/BW); memory-bound, (B·KV + param_bytes)/BW) for a dense and an MoE model."""

from __future__ import annotations

import pandas as pd
import pytest

import pipeline
from pipeline.model.serve import STEPS, expand_serve

H100 = {"bw": 3.35e12, "peak": 9.89e14}  # bf16 dense FLOP/s, HBM bytes/s (the catalog's)
# parameters (model.params, the catalog's dims) and the embedding table a decode never reads
# whole (a lookup of B rows); KV bytes a token: 2·L·K·H·2 (bf16)
LLAMA3_70B = {"params": 70_553_706_496, "embedding": 128256 * 8192, "kv": 2 * 80 * 8 * 128 * 2}
MIXTRAL = {"params": 46_702_792_704, "active": 12_879_925_248, "embedding": 32000 * 4096,
           "kv": 2 * 32 * 8 * 128 * 2}  # fmt: skip


def serve(*rows, **row) -> pd.DataFrame:
    """The results of a serve row (`row`) or several (`rows`, each a dict), by name."""
    rows = rows or (row,)
    base = {"name": "s", "op": "serve", "hardware": "h100", "isl": 2048, "osl": 256}
    a = pipeline.analyze([{**base, **r} for r in rows])
    assert not a.problem_list, [str(p) for p in a.problem_list]
    return a.results.set_index("name")


def test_a_serve_row_is_followed_by_its_prefill_and_decode_steps_and_their_ops():
    r = serve(model="llama3-8b", B=32)
    names = list(r.index)
    assert names[0] == "s" and r.loc["s", "op"] == "serve"
    totals = [n for n in names if r.loc[n, "op"] == "transformer"]
    assert totals == ["s/prefill", "s/decode"]
    assert names.index("s/decode") == names.index("s/prefill") + 13  # the prefill's 12 ops
    assert names[names.index("s/decode") + 1] == "s/decode/q_proj"
    assert r.loc["s/prefill/q_proj", "series"] == "s/prefill/q_proj"
    prefill, decode = r.loc["s/prefill"], r.loc["s/decode"]
    assert (prefill["B"], prefill["T"], prefill["S"]) == (1, 2048, 2048)  # one prompt
    assert (decode["B"], decode["T"], decode["S"]) == (32, 1, 2048 + 128)  # isl + osl/2
    assert r.loc["s", "B"] == 32


def test_a_draft_model_adds_its_decode_step_k_times_and_the_decode_verifies_k_plus_1():
    r = serve(model="llama3-70b", B=8, chips=8, shard="N", draft_tokens=4, acceptance=0.7,
              draft_model="llama3-8b")  # fmt: skip
    totals = [n for n in r.index if r.loc[n, "op"] == "transformer"]
    assert totals == [f"s/{step}" for step in STEPS]
    decode, draft = r.loc["s/decode"], r.loc["s/draft"]
    assert (decode["T"], decode["S"], decode["count"]) == (5, 2176, 1)  # k + 1 verified
    assert (draft["T"], draft["S"], draft["count"]) == (1, 2176, 4)  # k draft steps
    assert draft["model"] == "llama3-8b" and draft["L"] == 32 and draft["D"] == 4096
    assert decode["model"] == "llama3-70b" and decode["L"] == 80
    assert r.loc["s/draft/q_proj", "count"] == 32 * 4  # its layers, k times


def test_expansion_keeps_other_rows_in_order_and_a_frame_without_serve_rows_as_it_is():
    frame = pd.DataFrame({"name": ["m", "s"], "series": ["m", "s"], "op": ["matmul", "serve"],
                          "isl": [float("nan"), 16.0], "osl": [float("nan"), 8.0],
                          "B": [4.0, 2.0], "draft_D": [float("nan")] * 2})  # fmt: skip
    out = expand_serve(frame)
    assert out["name"].tolist() == ["m", "s", "s/prefill", "s/decode"]
    assert out["S"].tolist()[2:] == [16.0, 20.0]

    plain = frame.iloc[:1]
    assert expand_serve(plain) is plain  # computed tells an expansion by a new frame


def test_the_dense_decode_is_the_books_bound_but_the_embedding_it_never_reads():
    """Llama-3-70B on one H100 (bf16), 2,048 in / 256 out: the decode step at S = 2,176.
    Memory-bound at B = 1 and 64, (B·S·KV + param_bytes)/BW; compute-bound at B = 1,024,
    B·S·KV/BW + 2·B·params/FLOPs. The tool reads every weight but the embedding table (a
    lookup), so the bound less it, and adds what the bound leaves out: each matmul's
    activations, the attention's Q and output, the norms, residual adds and SiLU (up to
    2.5 % here), never less."""
    m, bw, peak = LLAMA3_70B, H100["bw"], H100["peak"]
    r = serve(*({"name": f"b{b}", "model": "llama3-70b", "B": b} for b in (1, 64, 1024)))
    for b in (1, 64, 1024):
        tpot = r.loc[f"b{b}", "tpot"]
        kv = b * 2176 * m["kv"] / bw
        bound = kv + max(2 * b * m["params"] / peak, 2 * m["params"] / bw)
        if b == 1:
            assert bound == pytest.approx(42.33e-3, rel=1e-3)  # the 42.3 ms at 8k
        compute = 2 * b * m["params"] / peak > 2 * m["params"] / bw
        less = (2 * b / peak if compute else 2 / bw) * m["embedding"]
        assert bound - less <= tpot <= (bound - less) * 1.025, b


def test_the_moe_decode_is_the_books_bound_with_every_expert_read():
    """Mixtral-8x7B on one H100: at B = 64 a token's 2 of 8 experts leave none unread
    (8·(1 - (6/8)^64) ≈ 8), so the weights read are all 46.7 B parameters and the math
    is 2·B·active (12.9 B); memory-bound at 64, compute-bound at 4,096 (the MoE critical
    batch is E/k times the dense one). The same tolerance as the dense model's."""
    m, bw, peak = MIXTRAL, H100["bw"], H100["peak"]
    r = serve(*({"name": f"b{b}", "model": "mixtral-8x7b", "B": b} for b in (64, 4096)))
    for b in (64, 4096):
        tpot = r.loc[f"b{b}", "tpot"]
        kv = b * 2176 * m["kv"] / bw
        compute = 2 * b * m["active"] / peak > 2 * m["params"] / bw
        bound = kv + max(2 * b * m["active"] / peak, 2 * m["params"] / bw)
        less = (2 * b / peak if compute else 2 / bw) * m["embedding"]
        assert bound - less <= tpot <= (bound - less) * 1.025, b
    assert r.loc["b4096/decode/experts_gate_up", "bound"] == "compute"  # 4,096 > 4 x ~300
    assert r.loc["b64/decode/experts_gate_up", "bound"] == "memory"


def test_the_prefill_is_the_books_compute_time_plus_its_elementwise_passes():
    """TTFT: one prompt of 2,048 tokens, compute-bound: 2·params·T/FLOPs (the embedding
    not multiplied) plus the attention's 4·T·S·N·H·L (FlashAttention, no causal halving);
    the tool adds the norms, residual adds and SiLU as memory-bound passes of their own
    (5.5 % at 2,048 tokens on an H100)."""
    m, peak = LLAMA3_70B, H100["peak"]
    ttft = serve(model="llama3-70b", B=1).loc["s", "ttft"]
    hand = (2 * (m["params"] - m["embedding"]) * 2048 + 4 * 2048 * 2048 * 64 * 128 * 80) / peak
    assert hand == pytest.approx(0.2989, rel=1e-3)
    assert hand < ttft <= hand * 1.06
