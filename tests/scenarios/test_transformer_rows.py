"""scenarios/transformer_rows.py: a transformer row's shape from its model and/or its own dims,
its KV-cache dtype and its parallelism, each problem said as every other row's."""

from __future__ import annotations

import pandas as pd

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
