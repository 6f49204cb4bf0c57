"""model/train_comms.py: a training step's collectives per strategy, over the link within its
reach and the data-center network past it, and the book's closed forms."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.model.collectives import collective_time
from pipeline.model.train_comms import Levels, floor, mfu, mixed_fsdp_tp, per_byte, spans


def test_deepseek_v3_ran_at_21_7_percent_mfu():
    # transformers.md Question 7: 2.79M H800 hours, 14.8T tokens, 37B activated parameters,
    # 1.513e15 FP8 FLOP/s dense: "the FLOPs utilization is about 3.3e24 / 1.52e25 = 21.7%"
    # (the catalog has no H800: the figures are given as the book gives them)
    assert mfu(6 * 37e9 * 14.8e12, 1, 1.513e15, 2.79e6 * 3600) == pytest.approx(0.217, abs=0.001)


def test_the_best_fsdp_and_tp_split_of_llama2_13b_on_4096_v5p():
    # training.md Problem 3.3: "sqrt(3e6 * 2 * 4096 / 13824) = 1333" and "2550^2 / 2F = 235"
    best, floor = mixed_fsdp_tp(3e6, 13824, 4096, 2550, axes_fsdp=2)
    assert best == pytest.approx(1333, rel=0.001) and floor == pytest.approx(235, rel=0.005)


def test_a_strategy_past_its_links_reach_spans_domains_innermost_first():
    one = np.ones(1)
    degrees = {"tp": 8 * one, "ep": one, "fsdp": 512 * one, "dp": one, "pp": one}
    where = spans(degrees, np.array([8.0]))
    assert (where["tp"][0][0], where["tp"][1][0]) == (8, 1)  # a node's NVLink
    assert (where["fsdp"][0][0], where["fsdp"][1][0]) == (1, 512)  # one GPU a node
    unlimited = spans(degrees, np.array([np.nan]))
    assert unlimited["fsdp"][0][0] == 512 and unlimited["fsdp"][1][0] == 1


def test_across_nodes_a_gpu_sends_its_eighth_over_its_own_nic():
    # gpus.md: beyond the node an AllGather costs B / W_node egress = B / 400e9 on H100
    one = np.ones(1)
    link = {"bandwidth": 4.5e11 * one, "ring": np.zeros(1, bool), "latency": 0 * one}
    dcn = {"bandwidth": 5e10 * one, "ring": np.zeros(1, bool), "latency": 0 * one}
    lv = Levels(8 * one, 512 * one, link, dcn, one)
    assert lv.slope(1.0)[0] == pytest.approx(511 / 512 / 4e11)
    assert lv.cost(1e9 * one, 1.0)[0] == pytest.approx(1e9 * 511 / 512 / 4e11)
    ring = {"bandwidth": 9e10 * one, "ring": np.ones(1, bool), "latency": 0 * one}
    three = Levels(4096 * one, one, ring, dcn, 3 * one)  # v5p: 3 axes, 3 x 1.8e11
    assert three.slope(1.0)[0] == pytest.approx(1 / 5.4e11)


@pytest.mark.parametrize("ring", [True, False])
@pytest.mark.parametrize(("phases", "all_to_all"), [(1.0, False), (2.0, False), (1.0, True)])
def test_a_collective_costs_what_a_collective_row_of_it_costs(ring, phases, all_to_all):
    volume, chips = np.array([1e3, 1e9]), np.array([16.0, 16.0])
    bw, latency, topology = np.full(2, 9e10), np.full(2, 1e-6), np.full(2, ring)
    row = collective_time(volume, chips, bw, topology, latency, np.full(2, phases), all_to_all)
    mine = np.maximum(volume * per_byte(chips, bw, topology, phases, all_to_all),
                      floor(chips, latency, phases))  # fmt: skip
    assert mine == pytest.approx(row)
