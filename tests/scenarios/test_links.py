"""scenarios/links.py: shard (a dim of the op), link (one the chip has) and a collective's
columns, and each row's link numbers."""

from __future__ import annotations

import numpy as np

from pipeline.scenarios.coded import Col
from pipeline.scenarios.links import check_collective, check_link, check_shard
from tests.helpers import coded, op_columns, with_chip

NAN = np.nan


def floats(*values: float) -> Col:
    """Parsed numbers as the checks hold them (chips)."""
    return Col(np.arange(len(values), dtype=np.intp), np.asarray(values, dtype=float))


def test_check_shard_a_dim_of_the_op_when_chips_split_it():
    sig, op = op_columns("matmul", "matmul", "matmul", "dot", "all_gather", "matmul")
    shard_cells = coded("d", "Q", "", "N", "", "F")
    chips = floats(2, 2, 4, 8, 16, 1)
    shard, has_shard, found = check_shard(shard_cells, sig, op, chips)
    # upper-cased; on one chip nothing is split, whatever the cell says
    np.testing.assert_array_equal(shard.values(), ["D", "Q", "", "N", "", ""])
    np.testing.assert_array_equal(has_shard, [True, True, False, True, False, True])
    assert found == [
        (1, "shard", "'Q' is not a dim of op matmul (its dims: B, D, F)"),
        (2, "shard", "chips = 4 needs a shard dim to split (one of B, D, F)"),
    ]  # a collective has no dims to split: its checks are check_collective's


def test_check_link_the_given_link_else_the_chips_default(catalog):
    sig, _ = op_columns("matmul", "matmul", "matmul", "all_gather")
    hw = coded("tpu-v5e", "tpu-v5e", "h100", "h100")
    shard = coded("D", "D", "", "")
    bandwidth = np.array([NAN, 1e9, NAN, NAN])
    links, found = check_link(
        coded("", "PCIe", "", "dcn"), hw, np.array([2, 2, 1, 8.0]), sig, shard,
        np.array([False, False, False, True]), bandwidth, catalog,
    )  # fmt: skip
    np.testing.assert_array_equal(links["link"].values(), ["ici", "pcie", "nvlink", "dcn"])
    np.testing.assert_array_equal(links["link_bandwidth"], [4.5e10, 1e9, 4.5e11, 5e10])
    np.testing.assert_array_equal(
        links["link_topology"].values(), ["ring", "switch", "switch", "switch"]
    )
    assert links["link_latency"][0] == 1e-6
    assert not np.isnan(links["link_latency"]).any()  # no latency in the catalog: 0
    assert found == []


def test_check_link_unknown_links_once_per_spelling(catalog):
    sig, _ = op_columns("matmul", "matmul", "matmul")
    hw = coded("tpu-v5e", "tpu-v5e", "tpu-v5e")
    _, found = check_link(
        coded("icy", "zzz", "icy"), hw, np.ones(3), sig, coded("", "", ""), np.zeros(3, bool),
        np.full(3, NAN), catalog,
    )  # fmt: skip
    assert found == [
        (0, "link", "unknown link 'icy' (did you mean 'ici'?)"),
        (1, "link", "unknown link 'zzz'; use one of ici, nvlink, xgmi, roce, pcie, dcn"),
        (2, "link", "unknown link 'icy' (did you mean 'ici'?)"),
    ]


def test_check_link_a_link_the_chip_has_no_bandwidth_for(catalog):
    sig, _ = op_columns("matmul", "matmul")
    _, found = check_link(
        coded("nvlink", "ici"), coded("tpu-v5e", "tpu-v5e"), np.array([2.0, 2.0]), sig,
        coded("D", "D"), np.zeros(2, bool), np.full(2, NAN), catalog,
    )  # fmt: skip
    assert found == [
        (0, "link", "chip tpu-v5e has no bandwidth for link 'nvlink' (it has ici, pcie, dcn); "
         "pick one of those or give link_bandwidth")
    ]  # fmt: skip


def test_check_link_a_chip_without_a_default_link(catalog):
    lonely = with_chip(catalog, "lonely", default_link="", ici_bandwidth=NAN)
    bare = with_chip(lonely, "bare", default_link="", ici_bandwidth=NAN, pcie_bandwidth=NAN,
                     dcn_bandwidth=NAN)  # fmt: skip
    sig, _ = op_columns("matmul", "all_gather", "matmul", "matmul")
    links, found = check_link(
        coded("", "", "", ""), coded("lonely", "bare", "lonely", "lonely"),
        np.array([2.0, 4.0, 2.0, 1.0]), sig, coded("D", "", "F", ""),
        np.array([False, True, False, False]), np.full(4, NAN), bare,
    )  # fmt: skip
    # row 2 splits F, which is not contracted: no communication, no link needed
    assert found == [
        (0, "link", "chip lonely has no default link; give link (it has pcie, dcn)"),
        (1, "link", "chip bare has no link; give link_bandwidth (bytes/s, one way)"),
    ]
    assert np.isnan(links["link_bandwidth"]).all()


def test_check_collective_columns_a_collective_does_not_take():
    _, op = op_columns("all_gather", "all_reduce", "all_gather", "matmul")
    collective = np.array([True, True, True, False])
    chips_cells = coded("1", "", "x", "1")
    found = check_collective(
        collective, op, chips_cells, np.array([1.0, 1.0, 1.0, 1.0]),
        np.array([True, False, False, True]), {"B": coded("", "8", "", "8")},
        coded("1e9", "", "", "1e9"),
    )  # fmt: skip
    # row 2's chips 'x' is not a whole number: said where chips is parsed, not here
    assert sorted(found) == [
        (
            0,
            "chips",
            "op all_gather runs over 2 or more chips; give chips = N >= 2, the chips "
            "the array of `bytes` is spread over (got 1)",
        ),
        (
            0,
            "flops",
            "op all_gather does no FLOPs (it is timed by the link alone); leave flops blank",
        ),
        (
            0,
            "shard",
            "op all_gather has no shard dim: `bytes` is the whole array, spread over "
            "all chips; leave shard blank",
        ),
        (
            1,
            "B",
            "op all_reduce is a collective: it takes bytes, not dims; leave B empty "
            "(bytes is V, the whole array)",
        ),
        (
            1,
            "chips",
            "op all_reduce runs over 2 or more chips; give chips = N >= 2, the chips "
            "the array of `bytes` is spread over (got none: chips is blank)",
        ),
    ]
