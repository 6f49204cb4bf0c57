"""Parameter counts, weight bytes and KV-cache bytes from a model's dims (pipeline/model/
params.py), against published parameter counts and the book's worked numbers."""

from __future__ import annotations

import pandas as pd
import pytest

from pipeline.catalogs.llms import load_models
from pipeline.model.params import kv_cache_bytes, param_counts

# each catalog model's published parameter count and where it is printed
PUBLISHED = {
    "llama2-7b": (6.74e9, "huggingface.co/meta-llama/Llama-2-7b-hf: safetensors, 6.74B params"),
    "llama2-13b": (13.0e9, "How to Scale Your Model Part 7 Inference: 13e9 total parameters"),
    "llama3-8b": (8.03e9, "huggingface.co/meta-llama/Meta-Llama-3-8B: 8.03B params"),
    "llama3-70b": (70.6e9, "huggingface.co/meta-llama/Meta-Llama-3-70B: 70.6B params"),
    "llama3.1-405b": (406e9, "huggingface.co/meta-llama/Llama-3.1-405B: 406B params"),
    "mistral-7b": (7.24e9, "huggingface.co/mistralai/Mistral-7B-v0.1: 7.24B params"),
    "gemma2-27b": (27.2e9, "huggingface.co/google/gemma-2-27b: 27.2B params"),
    "qwen2.5-72b": (72.7e9, "Qwen/Qwen2.5-72B model card: Number of Parameters 72.7B"),
    "mixtral-8x7b": (46.7e9, "huggingface.co/mistralai/Mixtral-8x7B-v0.1: 46.7B params"),
    "qwen3-30b-a3b": (30.5e9, "Qwen/Qwen3-30B-A3B model card: 30.5B in total"),
}
# exact counts the Hugging Face pages print in full (safetensors metadata)
EXACT = {"llama2-7b": 6_738_415_616, "llama3-8b": 8_030_261_248, "mixtral-8x7b": 46_702_792_704}


@pytest.fixture(scope="module")
def models() -> pd.DataFrame:
    return load_models().models


def test_every_catalog_model_has_a_published_count_here(models):
    assert set(PUBLISHED) <= set(models.index)


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_counted_parameters_are_within_one_percent_of_the_published_count(models, name):
    published, _source = PUBLISHED[name]
    counted = param_counts(models.loc[[name]])["params"].iat[0]
    assert counted == pytest.approx(published, rel=0.01)
    assert models.loc[name, "params"] == pytest.approx(published, rel=1e-9)  # the file says so


@pytest.mark.parametrize("name", sorted(EXACT))
def test_exact_counts_match_to_the_parameter(models, name):
    assert param_counts(models.loc[[name]])["params"].iat[0] == EXACT[name]


def test_moe_active_parameters_count_k_of_e_experts(models):
    counts = param_counts(models.loc[["mixtral-8x7b", "qwen3-30b-a3b", "llama3-8b"]])
    active = counts["active_params"]
    assert active["mixtral-8x7b"] == pytest.approx(12.9e9, rel=0.01)  # Mistral AI: 12.9B active
    assert active["qwen3-30b-a3b"] == pytest.approx(3.3e9, rel=0.02)  # model card: 3.3B, rounded
    assert active["llama3-8b"] == counts["params"]["llama3-8b"]  # dense: every parameter


def test_the_books_llama2_13b_parameter_table(models):
    """inference.md, "What's using memory": FFW 8.5e9, vocab 0.3e9, attention 4.2e9, 13e9."""
    c = param_counts(models.loc[["llama2-13b"]]).iloc[0]
    assert c["mlp"] == pytest.approx(8.5e9, rel=0.01)
    assert c["attention"] == pytest.approx(4.2e9, rel=0.01)
    assert c["embedding"] + c["lm_head"] == pytest.approx(0.3e9, abs=0.05e9)
    assert c["params"] == pytest.approx(13e9, rel=0.01)


def test_the_books_llama2_13b_kv_cache():
    """inference.md: 8192 × 40 (K) × 128 (H) × 40 (L) × 2 bytes × 2 = 6.7 GB for one 8k
    sequence at bf16; its table: 53.6 at batch 8."""
    model = load_models().models.loc[["llama2-13b"]]
    one = kv_cache_bytes(model, S=8192).iat[0]
    assert one == 8192 * 40 * 128 * 40 * 2 * 2
    assert one == pytest.approx(6.7e9, abs=0.05e9)
    assert kv_cache_bytes(model, S=8192, B=8).iat[0] == pytest.approx(53.6e9, rel=0.01)
    assert kv_cache_bytes(model, S=8192, dtype="int8").iat[0] == one / 2


def test_gemma2_attention_uses_head_dim_not_d_over_n(models):
    g = models.loc["gemma2-27b"]
    assert g["N"] * g["H"] != g["D"]
    c = param_counts(models.loc[["gemma2-27b"]]).iloc[0]
    assert c["attention"] == 46 * (2 * 4608 * 32 * 128 + 2 * 4608 * 16 * 128)
    assert c["lm_head"] == 0  # tied embeddings


def test_qwen_biases_are_counted_and_nothing_else_changes(models):
    qwen = models.loc[["qwen2.5-72b"]]
    without = qwen.assign(qkv_bias=False)
    gap = param_counts(qwen)["attention"].iat[0] - param_counts(without)["attention"].iat[0]
    assert gap == 80 * (64 * 128 + 2 * 8 * 128)


def test_shared_experts_add_their_mlps():
    frame = pd.DataFrame(
        {
            "D": [8],
            "N": [2],
            "K": [1],
            "H": [4],
            "L": [1],
            "V": [10],
            "E": [4],
            "k": [2],
            "F_expert": [3],
            "shared": [1],
            "F_shared": [5],
            "tied": [True],
        },  # fmt: skip
        index=["toy"],
    )
    c = param_counts(frame).iloc[0]
    assert c["mlp"] == 4 * 3 * 8 * 3 + 8 * 4 + 3 * 8 * 5
    assert c["active_params"] == c["params"] - 2 * 3 * 8 * 3


def test_frame_in_frame_out_and_the_input_is_left_alone(models):
    before = models.copy()
    counts = param_counts(models)
    assert list(counts.index) == list(models.index)
    pd.testing.assert_frame_equal(models, before)
    assert (counts["params"] == counts[["embedding", "lm_head", "attention", "mlp", "norms"]]
            .sum(axis=1)).all()  # fmt: skip


def test_an_unknown_dtype_is_refused(models):
    with pytest.raises(ValueError, match="unknown dtype 'fp7'"):
        kv_cache_bytes(models, dtype="fp7")
    assert (kv_cache_bytes(models, dtype="int8") * 2 == kv_cache_bytes(models)).all()
