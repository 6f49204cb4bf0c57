"""scenarios/transformer_rows.py: a transformer row's shape from its model and/or its own dims,
its KV-cache dtype and its parallelism, each problem said as every other row's."""

from __future__ import annotations

import pandas as pd
import pytest

import pipeline

STEP = {"name": "s", "op": "transformer", "hardware": "h100", "B": 8, "T": 1, "S": 1024}


def reasons(*rows) -> list[tuple[str, str]]:
    a = pipeline.analyze(pd.DataFrame([{**STEP, **r} for r in rows]))
    return [(p.column, p.reason) for p in a.problem_list]


def test_an_unknown_model_is_named_with_the_nearest_one():
    assert reasons({"model": "lama3-8b"}) == [
        ("model", "unknown model 'lama3-8b' (did you mean 'llama3-8b'?)")
    ]


def test_without_a_model_every_dim_of_the_shape_is_needed():
    got = reasons({"D": 4096, "N": 32, "K": 8, "H": 128, "L": 32})
    assert sorted(c for c, _ in got) == ["F", "V"]
    assert dict(got)["V"].startswith(
        "a transformer step needs dim V (the vocabulary): give `model`"
    )


def test_the_rows_own_dims_win_over_its_models():
    a = pipeline.analyze([{**STEP, "model": "llama3-8b", "L": 1, "name": "one_layer"},
                          {**STEP, "model": "llama3-8b", "name": "all"}])  # fmt: skip
    r = a.results.set_index("name")
    assert r.loc["one_layer/q_proj", "count"] == 1 and r.loc["all/q_proj", "count"] == 32
    assert r.loc["one_layer/q_proj", "flops"] * 32 == r.loc["all/q_proj", "flops"]


def test_a_model_outside_the_catalog_is_one_row():
    mine = {"D": 4096, "F": 14336, "N": 32, "K": 8, "H": 128, "L": 32, "V": 128256}
    a = pipeline.analyze([{**STEP, **mine, "name": "own"}, {**STEP, "model": "llama3-8b"}])
    r = a.results.set_index("name")
    assert r.loc["own", "t_lower"] == r.loc["s", "t_lower"]


def test_kv_dtype_and_shard_are_checked():
    assert reasons({"model": "llama3-8b", "kv_dtype": "fp9"})[0][0] == "kv_dtype"
    got = reasons({"model": "llama3-8b", "chips": 8, "shard": "D"})
    assert got == [("shard", "'D' on 8 chips: a transformer step splits its heads (shard = N, "
                             "tensor parallelism)")]  # fmt: skip
    got = reasons({"model": "mixtral-8x7b", "chips": 8})
    assert got[0][1].startswith("no shard on 8 chips") and "shard = E" in got[0][1]


def test_an_fp8_kv_cache_halves_the_cache_and_the_attention_bytes():
    a = pipeline.analyze([{**STEP, "model": "llama3-8b", "name": "b"},
                          {**STEP, "model": "llama3-8b", "name": "f", "kv_dtype": "fp8"}])  # fmt: skip
    r = a.results.set_index("name")
    assert r.loc["f", "kv_cache_bytes"] * 2 == r.loc["b", "kv_cache_bytes"]
    assert r.loc["f/attention", "hbm_bytes"] < r.loc["b/attention", "hbm_bytes"]


def test_dtype_sets_activations_weights_and_kv_cache_and_y_dtype_kv_dtype_override_it():
    """`dtype` on a model row is every tensor's: activations, weights (y_dtype) and, by default,
    the KV cache (kv_dtype); y_dtype and kv_dtype override it per row (docs/input.md)."""
    a = pipeline.analyze(pd.DataFrame([
        {**STEP, "model": "llama3-8b", "name": "bf16"},
        {**STEP, "model": "llama3-8b", "name": "fp8", "dtype": "fp8"},
        {**STEP, "model": "llama3-8b", "name": "w8", "y_dtype": "fp8"},  # fp8 weights
        {**STEP, "model": "llama3-8b", "name": "fp8_kv16", "dtype": "fp8", "kv_dtype": "bf16"},
    ]))  # fmt: skip
    r = a.results.set_index("name")
    params = 8.03e9  # Llama-3-8B, with its untied embedding and head
    kv = 8 * 2 * 1024 * 32 * 8 * 128  # B · 2 · S · L · K · H values
    got = {}
    for name, weight, cache in (("bf16", 2, 2), ("fp8", 1, 1), ("w8", 1, 2), ("fp8_kv16", 1, 2)):
        got[name] = (r.loc[name, "weight_bytes"], r.loc[name, "kv_cache_bytes"])
        assert got[name][0] == pytest.approx(params * weight, rel=0.005), name
        assert got[name][1] == kv * cache, name
    assert got["w8"][0] * 2 == got["bf16"][0]
    # fp8 weights with bf16 activations: mlp_up reads its weight at 1 byte, X and its output at 2
    d, f, tokens = 4096, 14336, 8  # B · T
    by_hand = 32 * (d * f * 1 + tokens * d * 2 + tokens * f * 2)  # its 32 layers
    assert r.loc["w8/mlp_up", "hbm_bytes"] == by_hand
    assert (r.loc["w8/mlp_up", "x_dtype"], r.loc["w8/mlp_up", "y_dtype"]) == ("bf16", "fp8")
    assert r.loc["w8/mlp_up", "compute_dtype"] == "bf16"  # the wider of X and Y
    assert r.loc["fp8/mlp_up", "compute_dtype"] == "fp8"


def test_moe_needs_its_models_routing_and_shared_experts_are_refused():
    own = {"D": 4096, "F": 14336, "N": 32, "K": 8, "H": 128, "L": 32, "V": 32000, "E": 8}
    got = reasons(own)
    assert [c for c, _ in got] == ["E"] and "active experts k" in got[0][1]
    shared = pd.DataFrame([{"name": "sh", "D": 2048, "N": 16, "K": 4, "H": 128, "L": 4,
                            "V": 1000, "E": 8, "k": 2, "F_expert": 512, "shared": 1,
                            "source": "a test"}])  # fmt: skip
    a = pipeline.analyze([{**STEP, "model": "sh"}], models=shared)
    assert [(p.column, p.reason.split(":")[0]) for p in a.problem_list] == [
        ("model", "its shared experts are not modelled yet")
    ]
