"""model/train_memory.py: the FLOPs a remat policy redoes, the optimizer's bytes and the
activations a step keeps ("How to Scale Your Model", Parts 4 and 5)."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.model.train_memory import (
    REMAT,
    activation_bytes,
    chip_memory,
    flops_factor,
    optimizer_bytes,
)


def test_block_remat_redoes_the_forward_pass():
    # transformers.md: "increase our FLOPs from 6ND to roughly 8ND"
    assert flops_factor("block") == pytest.approx(8 / 6)
    assert flops_factor("save-matmuls") == flops_factor("none") == 1.0
    assert np.isnan(flops_factor("everything"))


def test_adam_keeps_two_fp32_moments():
    # training.md: "params are in bfloat16 and optimizer state is in float32 ... 2 + 8 = 10"
    assert optimizer_bytes("adam") == 8 and optimizer_bytes("sgd") == 0


def test_the_activations_each_policy_keeps():
    # transformers.md: 4M tokens, L = 64, D = 8192, saving everything "2 * 20 * B * T * D * L
    # = 84TB", block remat "only save 4.2TB"; training.md Problem 2: LLaMA-2 13B, 16M tokens,
    # after the three MLP matmuls, 42 TB
    code = np.array([REMAT.index("none"), REMAT.index("block")])
    kept = activation_bytes(code, 4e6, 64, 8192, 28672, 2)
    assert kept == pytest.approx([84e12, 4.2e12], rel=0.01)
    mlp = activation_bytes(np.array([REMAT.index("save-matmuls")]), 16e6, 40, 5120, 13824, 2)
    assert mlp[0] == pytest.approx(42e12, rel=0.02)


def test_a_chip_holds_its_shard_and_its_share_of_the_activations():
    got = chip_memory(1e9, 2.0, 8.0, 4e12, 1000)
    assert got == {
        "weights_per_chip": 2e9,
        "gradients_per_chip": 2e9,
        "optimizer_per_chip": 8e9,
        "activations_per_chip": 4e9,
    }
