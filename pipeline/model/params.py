"""A transformer's size from its dims: parameter counts, weight bytes and KV-cache bytes, one
numpy pass over a frame of models (the model catalog's columns, docs/model.md#the-model-catalog).

What is counted, per "How to Scale Your Model", Part 4 Transformer math and Part 7 Inference:
  embeddings V·D, and an LM head V·D unless `tied`;
  per layer: attention q D·N·H, k and v D·K·H each, o N·H·D, q/k/v biases N·H + 2·K·H when
  `qkv_bias`; a gated MLP 3·D·F (gate, up, down) or, for MoE (E given), E experts of
  3·D·F_expert, a router D·E and `shared` shared experts of 3·D·F_shared (blank: F_expert);
  two RMSNorm weights D;
  a final norm D.
Not counted: norms past two per layer (Gemma 2's pre/post-feedforward norms, Qwen3's q/k
norms: under 0.01 % of either model) and rotary embeddings, which have no weights."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.model.dtypes import canonical_dtype, dtype_bytes

PARTS = ("embedding", "lm_head", "attention", "mlp", "norms")


def _dims(models: pd.DataFrame) -> dict[str, np.ndarray]:
    """Each dim as float64 (exact for integers up to 2^53), NaN where blank; flags as bool."""
    out = {}
    for col in ("D", "F", "N", "K", "H", "L", "V", "E", "k", "F_expert", "shared", "F_shared"):
        values = models[col] if col in models else pd.Series(np.nan, index=models.index)
        out[col] = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    for col in ("tied", "qkv_bias"):
        flags = models[col] if col in models else pd.Series(False, index=models.index)
        out[col] = flags.fillna(False).astype(bool).to_numpy()
    return out


def _mlp(d: dict[str, np.ndarray], experts: np.ndarray) -> np.ndarray:
    """One layer's MLP parameters with `experts` routed experts counted (E for the weights a
    model holds, k for those a token uses): dense 3·D·F; MoE experts, router, shared experts."""
    moe = ~np.isnan(d["E"])
    shared = np.nan_to_num(d["shared"])
    shared_width = np.where(np.isnan(d["F_shared"]), d["F_expert"], d["F_shared"])
    routed = experts * 3 * d["D"] * d["F_expert"] + d["D"] * d["E"]
    routed = routed + np.where(shared > 0, shared * 3 * d["D"] * shared_width, 0.0)
    return np.where(moe, routed, 3 * d["D"] * d["F"])


def param_counts(models: pd.DataFrame) -> pd.DataFrame:
    """Parameters of each model (a row per model, the catalog's columns): `embedding`,
    `lm_head` (0 when tied), `attention`, `mlp` and `norms` over all layers, their sum
    `params`, and `active_params`, what one token uses (k of E experts; dense: `params`)."""
    d = _dims(models)
    D, N, K, H, L, V = (d[c] for c in ("D", "N", "K", "H", "L", "V"))
    bias = np.where(d["qkv_bias"], N * H + 2 * K * H, 0.0)
    attention = L * (2 * D * N * H + 2 * D * K * H + bias)
    mlp = L * _mlp(d, d["E"])
    active_mlp = L * _mlp(d, d["k"])
    embedding = V * D
    lm_head = np.where(d["tied"], 0.0, V * D)
    norms = L * 2 * D + D
    rest = embedding + lm_head + attention + norms
    return pd.DataFrame(
        {
            "embedding": embedding,
            "lm_head": lm_head,
            "attention": attention,
            "mlp": mlp,
            "norms": norms,
            "params": rest + mlp,
            "active_params": rest + active_mlp,
        },
        index=models.index,
    )


def _bytes_of(dtype: str) -> float:
    name = canonical_dtype(dtype)
    if name is None:
        raise ValueError(f"unknown dtype {dtype!r} (e.g. bf16, fp8, int8, int4)")
    return dtype_bytes(name)


def kv_cache_bytes(
    models: pd.DataFrame, S: float = 1, B: float = 1, dtype: str = "bf16"
) -> pd.Series:
    """KV-cache bytes of B sequences of S positions each: B·2·S·L·K·H·bytes (keys and values
    of every layer; "How to Scale Your Model" Part 7, "KV cache size"). S = B = 1 gives the
    bytes per token."""
    d = _dims(models)
    size = B * 2 * S * d["L"] * d["K"] * d["H"] * _bytes_of(dtype)
    return pd.Series(size, index=models.index, name="kv_cache_bytes")
