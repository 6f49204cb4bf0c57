"""model/train.py: a `train` row is one training step in closed form, checked against the
worked answers of "How to Scale Your Model" (jax-ml/scaling-book): training.md (Part 5),
applied-training.md (Part 6), transformers.md (Part 4) and gpus.md (Part 12)."""

from __future__ import annotations

import pandas as pd
import pytest

import pipeline
from pipeline.model.train import TRAIN_COLUMNS, distinct_rows

LLAMA3 = {"op": "train", "model": "llama3-70b", "train_tokens": 15e12}
LLAMA2 = {"op": "train", "model": "llama2-13b", "hardware": "tpu-v5p", "chips": 4096}


def train(**row) -> pd.Series:
    """The result row of one train scenario."""
    return pipeline.analyze([{"name": "t", **row}]).results.iloc[0]


def test_llama3_70b_on_4096_h100_at_45_percent_mfu_takes_about_40_days():
    # gpus.md Quiz 5 Q2.2: "6 * 70e9 * 15e12 = 6.3e24 bf16 FLOPs ... at 45% MFU ... 3.5e6
    # seconds, or 40 days" (LLaMA-3's 16M-token batch keeps 4096 GPUs compute-bound)
    r = train(**LLAMA3, hardware="h100", chips=4096, tokens=16e6, compute_efficiency=0.45)
    assert r["bound"] == "compute" and bool(r["compute_bound_batch"])
    assert r["days"] == pytest.approx(40, rel=0.03)
    assert r["mfu"] == pytest.approx(0.45)
    assert r["model_flops"] / 16e6 * 15e12 == pytest.approx(6.3e24, rel=0.01)


def test_the_same_flops_on_8960_v5p_at_40_percent_take_about_44_days():
    # applied-training.md: "T = 6.3e24 / (8960 * 4.59e14 * 0.4) = 3.8e6 seconds ... about 44
    # days"; FSDP over the pod's three axes (training.md: 850 a chip) keeps 16M tokens
    # compute-bound
    r = train(**LLAMA3, hardware="tpu-v5p", chips=8960, tokens=16e6, compute_efficiency=0.4,
              mesh_axes="fsdp=3")  # fmt: skip
    assert r["bound"] == "compute"
    assert r["days"] == pytest.approx(44, rel=0.03)


def test_block_remat_does_8_over_6_the_flops_and_mfu_counts_the_model_flops():
    # transformers.md "Gradient checkpointing": block remat increases "our FLOPs from 6ND to
    # roughly 8ND"
    base = {**LLAMA3, "hardware": "h100", "chips": 4096, "tokens": 16e6}
    kept, redone = train(**base, remat="save-matmuls"), train(**base, remat="block")
    assert redone["flops"] == pytest.approx(kept["flops"] * 8 / 6)
    assert redone["model_flops"] == kept["model_flops"]
    assert redone["mfu"] == pytest.approx(kept["mfu"] * 6 / 8, rel=0.01)


def test_fsdp_on_v5p_is_compute_bound_past_2550_tokens_a_chip_on_one_axis():
    # training.md, FSDP: "4.59e14 / 1.8e11 = 2550 for v5p"
    r = train(**LLAMA2, tokens=3e6)
    assert r["critical_tokens_per_chip"] == pytest.approx(2550, rel=0.005)
    assert r["comm_strategy"] == "fsdp" and r["collective"] == "all_gather"


def test_pure_fsdp_of_llama2_13b_on_4096_v5p_needs_3_48m_tokens():
    # training.md Problem 3.2: "With 4096 chips and 3 axes ... a minimum batch size of
    # 850 * 4096 = 3.48M tokens. That's slightly above our 3M batch size. So we're actually
    # comms-bound"
    r = train(**LLAMA2, tokens=3e6, mesh_axes="fsdp=3")
    assert r["critical_tokens_per_chip"] * 4096 == pytest.approx(3.48e6, rel=0.005)
    assert not r["compute_bound_batch"] and r["bound"] == "network"


def test_fsdp_with_4_way_tp_of_llama2_13b_steps_in_about_300_ms_at_40_percent():
    # training.md Problem 3.3: "needs to be above 2550^2 / 2F = 235 ... sqrt(3e6 * 2 * 4096
    # / 13824) = 1333, meaning we'll do roughly 1024 way DP and 4 way TP ... step time will
    # just be 6 * 3e6 * 13e9 / (4096 * 4.6e14 * 0.4) = 300ms"
    split = {"tokens": 3e6, "parallel": "fsdp=1024 tp=4", "mesh_axes": "fsdp=2 tp=1"}
    r = train(**LLAMA2, **split, compute_efficiency=0.4)
    assert bool(r["compute_bound_batch"]) and r["bound"] == "compute"
    assert r["t_lower"] == pytest.approx(6 * 3e6 * 13e9 / (4096 * 4.6e14 * 0.4), rel=0.02)
    # at the nominal peak the split the book rounds 1333 to is compute-bound past
    # 2550 / (Y M_X) a chip: above its best split's 235, below the 732 a chip it has
    nominal = train(**LLAMA2, **split)
    assert 235 < nominal["critical_tokens_per_chip"] < 3e6 / 4096
    assert nominal["critical_tokens_per_chip"] == pytest.approx(2550 / (4 * 2), rel=0.01)
    # at 40 % of it the chips need proportionally fewer tokens to hide the same traffic
    assert r["critical_tokens_per_chip"] == pytest.approx(2550 / (4 * 2) * 0.4, rel=0.01)


def test_tensor_parallelism_wider_than_f_over_2550_is_never_compute_bound():
    # training.md: tensor parallelism "becomes communication bound when Y > M_Y F / 2550"
    r = train(**LLAMA2, tokens=3e6, parallel="fsdp=256 tp=16")
    assert pd.isna(r["critical_tokens_per_chip"]) and not r["compute_bound_batch"]
    assert r["comm_strategy"] == "tp"


def test_h100_fsdp_needs_2200_tokens_a_gpu_in_a_node_and_2475_across_nodes():
    # gpus.md "Data Parallelism": "Within a node ... 990e12 / 450e9 = 2200. Within an SU or
    # at the spine level, BS > 990e12 / 400e9 = 2475"; the project's switched AllGather moves
    # (N - 1) / N of V, 7/8 within an 8-GPU node
    node = train(**LLAMA3, hardware="h100", chips=8, tokens=1e5)
    assert node["critical_tokens_per_chip"] == pytest.approx(2200 * 7 / 8, rel=0.01)
    pod = train(**LLAMA3, hardware="h100", chips=4096, tokens=4e6)
    assert pod["critical_tokens_per_chip"] == pytest.approx(2475, rel=0.01)


def test_8_way_pipelining_spreads_llama3_70b_fsdp_over_8_nodes_309_tokens_a_gpu():
    # gpus.md Quiz 5 Q2.3: ZeRO-3 with 8-way TP on 4096 GPUs at 4M tokens, 976 a GPU, is
    # comms-bound; "With 8-way pipelining ... 990e12 / 3200e9 = 309, so we should be good"
    base = {**LLAMA3, "hardware": "h100", "chips": 4096, "tokens": 4e6}
    flat = train(**base, parallel="fsdp=512 tp=8")
    assert not flat["compute_bound_batch"]
    piped = train(**base, parallel="fsdp=64 tp=8 pp=8", microbatches=64)
    assert piped["critical_tokens_per_chip"] == pytest.approx(309, rel=0.03)
    assert bool(piped["compute_bound_batch"])
    assert piped["bubble"] == pytest.approx(7 / 64)


def test_adam_keeps_10_bytes_a_parameter_with_bf16_weights():
    # training.md: "params are in bfloat16 and optimizer state is in float32 ... 2 + 8 = 10
    # bytes per parameters"; gpus.md Quiz 5 Q2.1: LLaMA-3 70B "at least 700GB"
    r = train(**LLAMA3, hardware="h100", chips=16, tokens=1e5)
    held = (r["weights_per_chip"] + r["optimizer_per_chip"]) * 16
    assert held == pytest.approx(700e9, rel=0.02)
    assert held / r["model_flops"] * 6 * 1e5 == pytest.approx(10)


def test_activations_saved_after_the_three_mlp_matmuls_are_the_books_42_tb():
    # training.md Problem 2: LLaMA-2 13B at 16M tokens, "2LB (D + 2F) ... ~ 4.2e13 = 42TB"
    r = train(**LLAMA2, tokens=16e6)
    assert r["activations_per_chip"] * 4096 == pytest.approx(4.2e13, rel=0.02)
    assert r["fits"]


def test_train_columns_only_when_the_run_has_train_rows():
    a = pipeline.analyze([{"name": "t", **LLAMA2, "tokens": 3e6},
                          {"name": "m", "op": "matmul", "B": 8, "D": 8, "F": 8,
                           "hardware": "h100"}])  # fmt: skip
    r = a.results.set_index("name")
    assert list(r.columns[-len(TRAIN_COLUMNS) :]) == list(TRAIN_COLUMNS)
    assert r.loc["m", ["mfu", "days"]].isna().all() and pd.isna(r.loc["m", "compute_bound_batch"])
    plain = pipeline.analyze([{"name": "m", "op": "matmul", "B": 8, "D": 8, "F": 8,
                               "hardware": "h100"}])  # fmt: skip
    assert not set(TRAIN_COLUMNS) & set(plain.results.columns)
    assert "degree_fsdp" not in r.columns


def test_rows_alike_in_every_column_are_computed_once_and_given_back_to_each():
    frame = pd.DataFrame(
        {
            "a": [1.0, 1.0, 2.0, float("nan"), float("nan"), 1.0],
            "b": pd.Categorical(["x", "x", "x", "y", "y", "y"]),
            "c": [5.0] * 6,
        }
    )
    first, inverse = distinct_rows(frame)
    assert len(first) == 4
    groups = first[inverse]
    assert groups[0] == groups[1] and groups[3] == groups[4]
    assert len({groups[0], groups[2], groups[3], groups[5]}) == 4


def test_distinct_rows_are_numbered_in_order_of_first_appearance():
    frame = pd.DataFrame({"a": [3.0, 1.0, 3.0, 2.0, 1.0, 4.0], "b": [9.0, 8.0, 9.0, 7.0, 8.0, 6.0]})
    first, inverse = distinct_rows(frame)
    assert first.tolist() == [0, 1, 3, 5]
    assert inverse.tolist() == [0, 1, 0, 2, 1, 3]
