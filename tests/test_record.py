"""The frozen record (pipeline/record.py): every fact a renderer needs, computed once by the
model, handed out read-only; checked against the book's numbers where the book gives them."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import pipeline
from pipeline.model.roofline import FACTS
from pipeline.record import Record
from tests.helpers import ROOT

COLLECTIVES = ROOT / "scenarios" / "collectives.csv"


@pytest.fixture(scope="module")
def collectives() -> pipeline.Analysis:
    return pipeline.analyze(COLLECTIVES)


def test_an_analysis_is_the_record_with_write(book):
    assert isinstance(book, Record)
    assert [f.name for f in dataclasses.fields(book)] == [
        f.name for f in dataclasses.fields(Record)
    ]
    with pytest.raises(dataclasses.FrozenInstanceError):
        book.source = "x"


def test_facts_are_row_for_row_beside_the_results(book):
    facts, results = book.facts, book.results
    assert list(facts.columns) == list(FACTS)
    assert len(facts) == len(results) and facts.index.equals(results.index)
    assert not set(FACTS) & set(results.columns)  # internal: not results.csv's columns


def test_facts_are_handed_out_as_copies(book):
    facts = book.facts
    facts.loc[:, "in_sweep"] = True
    facts.loc[:, "peak_flops_derated"] = 0.0
    assert not book.facts["in_sweep"].all()
    assert (book.facts["peak_flops_derated"] > 0).all()


def test_sweep_points_and_their_swept_dims_are_data(book):
    """q1-q5's two B sweeps expand to 1,024 points; the swept dim is data, not a name."""
    facts, results = book.facts, book.results
    assert int(facts["in_sweep"].sum()) == 1024
    assert set(facts.loc[facts["in_sweep"], "swept"]) == {("B",)}  # a tuple: no text to parse
    assert set(facts.loc[~facts["in_sweep"], "swept"]) == {()}
    sweeping = results.loc[facts["in_sweep"].to_numpy(), "name"].astype(str)
    assert sweeping.str.contains(r"\[B=\d+\]").all()


def test_op_kinds(book, collectives):
    assert set(collectives.facts["kind"]) == {"collective"}
    kinds = book.facts["kind"].astype(str)
    ops = book.results["op"].astype(str)
    assert set(kinds[ops == "custom"]) == {"custom"}
    assert set(kinds[ops == "matmul"]) == {"einsum"}


def test_derated_rates_are_efficiency_times_nominal(collectives):
    """Book, GPUs: 'difficult in practice to exceed 370 GB/s' of NVLink's 450 GB/s."""
    facts = collectives.facts.set_index(collectives.results["name"].astype(str))
    row = facts.loc["h100_allgather_at_370GBps"]
    assert row["link_bandwidth_derated"] == pytest.approx(370e9, rel=1e-3)
    assert facts.loc["h100_allgather_bf16_4096x65536", "link_bandwidth_derated"] == 450e9


def test_latency_floor_of_a_v5e_allgather(collectives):
    """Book, a note on ICI latency: 16 chips on a ring, 1 us per hop: at least N/2 = 8 us."""
    facts = collectives.facts.set_index(collectives.results["name"].astype(str))
    assert facts.loc["v5e_allgather_2GB_16", "link_latency"] == pytest.approx(1e-6)
    assert facts.loc["v5e_allgather_2GB_16", "latency_floor"] == pytest.approx(8e-6)
    # an AllReduce has two phases, each with the floor
    assert facts.loc["v5e_allreduce_2GB_16", "latency_floor"] == pytest.approx(16e-6)
    # each leaves it at 45 kB per chip, V = 720 kB over 16 chips: where V / W_bidi = 8 us
    assert facts.loc["v5e_allgather_2GB_16", "latency_knee"] == pytest.approx(720e3)
    assert facts.loc["v5e_allreduce_2GB_16", "latency_knee"] == pytest.approx(720e3)


def test_network_intensity_of_a_sharded_matmul():
    """Book, network rooflines: a v5e matmul with D split over 2 chips is compute-bound on the
    network when D/2 > 1.97e14 / 4.5e10 = 4377 (per-chip FLOPs over bytes sent)."""
    rows = [
        {"name": n, "op": "matmul", "B": 8192, "D": d, "F": 8192, "hardware": "v5e",
         "chips": 2, "shard": "D"}
        for n, d in (("under", 8192), ("over", 9216))
    ]  # fmt: skip
    a = pipeline.analyze(rows)
    facts = a.facts
    results = a.results
    expected = results["flops_per_chip"] / results["network_bytes"]
    np.testing.assert_allclose(facts["network_intensity"], expected)
    ridge = facts["network_critical_intensity"].iat[0]
    assert ridge == pytest.approx(1.97e14 / 4.5e10, rel=5e-3)
    assert facts["network_intensity"].iat[0] < ridge < facts["network_intensity"].iat[1]


def test_dims_are_the_dim_columns_in_order(book, collectives):
    assert book.dims == ("B", "D", "F", "N")
    assert collectives.dims == ()


def test_summary_chips_says_each_chip_once(collectives):
    """One per-chip facts table: the efficiencies its derated rows use most, how many rows
    are derated, and every catalog rate times its efficiency."""
    chips = collectives.summary.chips
    assert list(chips.index) == ["h100", "tpu-v5e"]
    h100 = chips.loc["h100"]
    assert h100["network_efficiency"] == pytest.approx(0.8222)
    assert h100["derated_rows"] == 1 and h100["top_rows"] == 1
    assert h100["nvlink_bandwidth_derated"] == pytest.approx(0.8222 * 450e9)
    assert h100["hbm_bandwidth_derated"] == 3.35e12  # HBM not derated: nominal
    assert chips.loc["tpu-v5e", "ici_bandwidth_derated"] == pytest.approx(0.95 * 4.5e10)


def test_summary_chips_of_a_run_without_derating(book):
    chips = book.summary.chips
    assert (chips["derated_rows"] == 0).all()
    assert (chips[["compute_efficiency", "hbm_efficiency", "network_efficiency"]] == 1).all().all()
    assert chips.loc["tpu-v5e", "peak_bf16_derated"] == 1.97e14
