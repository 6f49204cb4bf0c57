"""A training step's FLOPs and bytes a chip holds, by rematerialization policy and optimizer
(docs/model.md#training; book "Transformer Math", "Gradient checkpointing", and "How to
Parallelize a Transformer for Training", Problems 2-3)."""

from __future__ import annotations

import numpy as np

# remat: FLOPs over 6 x params x tokens, and the activations kept per token and layer, in
# units of D (book: block remat saves each layer's input and redoes the forward pass, 8ND
# FLOPs instead of 6ND; saving the three big MLP matmuls' outputs keeps D + 2F; saving
# everything keeps about 20 D a layer, "2 x 20 x B x T x D x L" in bf16)
REMAT = ("none", "block", "save-matmuls")
REMAT_FLOPS = {"none": 1.0, "block": 8.0 / 6.0, "save-matmuls": 1.0}
DEFAULT_REMAT = "save-matmuls"  # the book's worked problems: checkpoints after the 3 matmuls
NO_REMAT_WIDTHS = 20.0  # the book's count of a layer's intermediate nodes, in units of D
# optimizer state, bytes a parameter (book: Adam's two fp32 moments, 8; with bf16 weights,
# "2 + 8 = 10 bytes per parameter"); sgd keeps none
OPTIMIZERS = {"adam": 8.0, "adamw": 8.0, "sgd": 0.0}
DEFAULT_OPTIMIZER = "adam"


def activation_bytes(remat: np.ndarray, tokens, layers, width, mlp_width, act) -> np.ndarray:
    """Bytes of the activations a step keeps for its backward pass, all chips together
    (`remat`: each row's index into REMAT): tokens x layers x (D for block remat; D + 2F
    saving the matmuls' outputs; 20 D with no remat) x an activation's bytes (book Problem
    2: LLaMA-2 13B, 16M tokens: 42 TB)."""
    per = np.where(
        remat == REMAT.index("block"),
        width,
        np.where(remat == REMAT.index("none"), NO_REMAT_WIDTHS * width, width + 2.0 * mlp_width),
    )
    return tokens * layers * per * act


def flops_factor(remat: str) -> float:
    """The FLOPs a step does over its model FLOPs (6 x params x tokens) with `remat`."""
    return REMAT_FLOPS.get(remat, np.nan)


def optimizer_bytes(optimizer: str) -> float:
    """Bytes of `optimizer` state a parameter (OPTIMIZERS)."""
    return OPTIMIZERS.get(optimizer, np.nan)


def chip_memory(held_params, weight_bytes, state_bytes, activations, chips) -> dict:
    """Bytes a chip holds (`held_params`: the parameters it keeps, its shard): its weights,
    their gradients (in the weights' dtype), the optimizer state, and its share of the
    activations (split over every chip: by batch, by tensor shard and by stage)."""
    return {
        "weights_per_chip": held_params * weight_bytes,
        "gradients_per_chip": held_params * weight_bytes,
        "optimizer_per_chip": held_params * state_bytes,
        "activations_per_chip": activations / chips,
    }
