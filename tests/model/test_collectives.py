"""Collectives as rows and efficiency, against the numbers the book states (chapters "Sharded
Matrices and How to Multiply Them" and "How to Think About GPUs"); book value in the test,
tolerance from its rounding."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pipeline
from pipeline.model.collectives import collective_footprint, collective_time, latency_knee

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios" / "collectives.csv"


def rows(catalog, *given: dict) -> pd.DataFrame:
    """The results of rows given in memory, which must all be valid, indexed by name."""
    analysis = pipeline.analyze(list(given), hardware=catalog)
    assert not analysis.problem_list, [str(p) for p in analysis.problem_list]
    return analysis.results.set_index("name", drop=False)


def coll(name, op, v, n, hw="v5e", **more) -> dict:
    return {"name": name, "op": op, "bytes": str(v), "chips": str(n), "hardware": hw, **more}


@pytest.fixture(scope="module")
def shipped(catalog) -> pd.DataFrame:
    analysis = pipeline.analyze(SCENARIOS, hardware=catalog)
    assert not analysis.problem_list, [str(p) for p in analysis.problem_list]
    return analysis.results.set_index("name")


# -- TPU ICI ring ---------------------------------------------------------------------------


def test_v5e_allgather_of_2GB_takes_V_over_W_bidi_whatever_N(catalog):
    r = rows(catalog, *(coll(f"ag{n}", "all_gather", 2e9, n) for n in (4, 16, 256)))
    # book: T = V / W_ici (bidirectional) = 2e9 / 9e10 = 22.2 ms, "doesn't depend on X"
    for n in (4, 16, 256):
        assert r.loc[f"ag{n}", "t_network"] == pytest.approx(22.2e-3, rel=0.002)
        assert r.loc[f"ag{n}", "bound"] == "network"


def test_v5e_worked_problem_6_allgather_of_15GB_takes_167_ms(catalog):
    r = rows(catalog, coll("q6", "all_gather", 15e9, 16)).iloc[0]
    assert r["t_network"] == pytest.approx(167e-3, rel=0.003)  # book: 15e9 / (4.5e10 * 2)


def test_v5e_latency_crossover_is_45_kB_per_chip(catalog):
    """Book: "sending any buffer under 4.5e10 * 1e-6 = 45kB will be latency bound"."""
    n = 16
    per_chip = np.arange(40_000, 50_001, 250)
    r = rows(catalog, *(coll(f"v{p}", "all_gather", p * n, n) for p in per_chip))
    t = r["t_network"].to_numpy()
    floor = 1e-6 * n / 2  # 1 us per hop, N / 2 hops
    assert t.min() == pytest.approx(floor, rel=1e-12)  # never below the floor
    latency_bound = per_chip[np.isclose(t, floor, rtol=1e-12, atol=0)]
    assert latency_bound.max() == pytest.approx(45_000, abs=250)  # the last size at the floor
    assert (t[per_chip > 45_000] > floor).all()


def test_alltoall_is_a_quarter_of_allgather_on_a_bidirectional_ring(catalog):
    r = rows(
        catalog, coll("ag", "all_gather", 2e9, 16), coll("a2a", "all_to_all", 2e9, 16)
    )  # book: V / (4 W_ici), "1 / 4 the cost of an AllGather"
    assert r.loc["a2a", "t_network"] / r.loc["ag", "t_network"] == pytest.approx(0.25, rel=1e-12)
    assert r.loc["a2a", "t_network"] == pytest.approx(5.56e-3, rel=0.001)


@pytest.mark.parametrize("hw, n", [("v5e", 16), ("h100", 8), ("b200", 72)])
def test_allreduce_is_twice_allgather_and_reducescatter_equals_it(catalog, hw, n):
    r = rows(
        catalog,
        coll("ag", "all_gather", 1e9, n, hw),
        coll("rs", "reduce_scatter", 1e9, n, hw),
        coll("ar", "all_reduce", 1e9, n, hw),
    )  # book: "an AllReduce is twice as expensive as an AllGather"; RS "same as AllGather"
    assert r.loc["ar", "t_network"] == pytest.approx(2 * r.loc["ag", "t_network"], rel=1e-12)
    assert r.loc["rs", "t_network"] == r.loc["ag", "t_network"]


# -- GPU NVLink switch ----------------------------------------------------------------------


def test_h100_node_allgather_of_bf16_4096x65536_takes_1_04_ms(catalog):
    v = 2 * 4096 * 65536
    r = rows(catalog, coll("q3", "all_gather", v, 8, "h100")).iloc[0]
    assert r["t_network"] == pytest.approx(1.04e-3, rel=0.005)  # 536e6 * 7 / (8 * 450e9)


def test_h100_node_allgather_of_bf16_1024x16384_takes_65_us(catalog):
    v = 2 * 1024 * 16384
    r = rows(catalog, coll("pq1", "all_gather", v, 8, "h100")).iloc[0]
    assert r["t_network"] == pytest.approx(65e-6, rel=0.005)  # "or more precisely, 65us"


def test_gpu_in_node_allgather_tends_to_B_over_450e9_for_large_N(catalog):
    v = 1e9
    r = rows(catalog, *(coll(f"n{n}", "all_gather", v, n, "h100") for n in (8, 64, 4096)))
    t = r["t_network"].to_numpy()
    assert np.all(np.diff(t) > 0)  # (N - 1) / N grows towards 1
    assert t[-1] == pytest.approx(v / 450e9, rel=0.001)  # book: "about B / 450e9 on an H100"
    assert t[0] == pytest.approx(v / 450e9 * 7 / 8, rel=1e-9)


def test_gpu_in_node_alltoall_is_B_N_minus_1_over_W_N_squared(catalog):
    v = 2 * 4096 * 65536
    r = rows(catalog, coll("a2a", "all_to_all", v, 8, "h100")).iloc[0]
    assert r["t_network"] == pytest.approx(v * 7 / (450e9 * 64), rel=1e-9)


def test_a_collective_row_has_no_flops_no_hbm_term_and_no_intensity(catalog):
    r = rows(catalog, coll("ag", "all_gather", 2e9, 16)).iloc[0]
    assert r["flops"] == 0 and r["hbm_bytes"] == 0 and r["t_math"] == 0 and r["t_hbm"] == 0
    assert r["network_bytes"] == 2e9 and r["collective"] == "all_gather"
    assert pd.isna(r["intensity"]) and pd.isna(r["critical_intensity"])
    assert pd.isna(r["critical_batch"])
    assert r["memory_footprint"] == 2e9 + 2e9 / 16  # its shard in, the whole array out


def test_footprints_of_each_collective():
    v, n = np.full(5, 1600.0), np.full(5, 16.0)
    got = collective_footprint(np.arange(5), v, n)
    assert got.tolist() == [0, 1700, 1700, 3200, 200]  # none, AG, RS, AR, A2A


def test_sharded_matmul_keeps_its_allreduce(catalog):
    r = rows(
        catalog,
        {"name": "mm", "op": "matmul", "B": "8", "D": "8192", "F": "8192", "hardware": "v5e",
         "chips": "2", "shard": "D"},
    ).iloc[0]  # fmt: skip
    assert r["collective"] == "all_reduce"
    assert r["t_network"] == pytest.approx(2 * 8 * 8192 / 4.5e10, rel=1e-9)  # 2BF / 4.5e10


def test_shipped_collectives_file_reproduces_the_book(shipped):
    t = shipped["t_network"]
    assert t["v5e_allgather_2GB_16"] == pytest.approx(22.2e-3, rel=0.002)
    assert t["v5e_allreduce_2GB_16"] == pytest.approx(44.4e-3, rel=0.002)
    assert t["v5e_alltoall_2GB_16"] == pytest.approx(5.56e-3, rel=0.002)
    assert t["v5e_allgather_32kB_per_chip"] == pytest.approx(8e-6, rel=1e-9)
    assert t["h100_allgather_bf16_4096x65536"] == pytest.approx(1.04e-3, rel=0.005)
    # "difficult in practice to exceed 370 GB/s": 536e6 * 7 / (8 * 370e9) = 1.27 ms
    assert t["h100_allgather_at_370GBps"] == pytest.approx(1.27e-3, rel=0.005)
    sweep = shipped[shipped["series"] == "v5e_allgather_message_sweep"]
    assert len(sweep) == 7 and (sweep["bound"] == "network").all()


# -- efficiency -----------------------------------------------------------------------------

MATMUL = {"op": "matmul", "D": "8192", "F": "8192", "hardware": "v5e"}


@pytest.mark.parametrize(
    "column, term, b",
    [("compute_efficiency", "t_math", 4096), ("hbm_efficiency", "t_hbm", 64)],
)
def test_efficiency_one_half_doubles_exactly_the_term_it_derates(catalog, column, term, b):
    r = rows(
        catalog,
        {"name": "nominal", "B": str(b), **MATMUL},
        {"name": "half", "B": str(b), column: "0.5", **MATMUL},
    )
    nominal, half = r.loc["nominal"], r.loc["half"]
    for t in ("t_math", "t_hbm", "t_network"):
        want = 2 * nominal[t] if t == term else nominal[t]
        assert half[t] == pytest.approx(want, rel=1e-12), t
    assert half["t_lower"] == pytest.approx(2 * nominal["t_lower"], rel=1e-12)  # it binds
    assert half[column] == 0.5 and nominal[column] == 1.0
    assert half["peak_fraction"] == pytest.approx(nominal["peak_fraction"] / 2, rel=1e-12)


def test_network_efficiency_one_half_doubles_a_bandwidth_bound_collective(catalog):
    r = rows(
        catalog,
        coll("nominal", "all_gather", 2e9, 16),
        coll("half", "all_gather", 2e9, 16, network_efficiency="0.5"),
        coll("floor", "all_gather", 1e4, 16, network_efficiency="0.5"),
    )
    assert r.loc["half", "t_network"] == pytest.approx(2 * r.loc["nominal", "t_network"], 1e-12)
    assert r.loc["floor", "t_network"] == pytest.approx(8e-6, rel=1e-12)  # latency: no rate


def test_derated_critical_batch_and_intensity_follow_the_derated_roof(catalog):
    r = rows(
        catalog,
        {"name": "nominal", "B": "1024", **MATMUL},
        {"name": "derated", "B": "1024", "compute_efficiency": "0.9",
         "hbm_efficiency": "0.6", **MATMUL},
    )  # fmt: skip
    ratio = 0.9 / 0.6
    assert r.loc["derated", "critical_intensity"] == pytest.approx(
        r.loc["nominal", "critical_intensity"] * ratio, rel=1e-12
    )
    assert r.loc["derated", "critical_batch"] > r.loc["nominal", "critical_batch"]


def test_a_chip_efficiency_from_a_hardware_file_applies_and_the_row_wins(tmp_path):
    hw = tmp_path / "hw.csv"
    hw.write_text("name,compute_efficiency,network_efficiency\nv5e,0.8,0.95\n")
    analysis = pipeline.analyze(
        [
            {"name": "chip", "B": "4096", **MATMUL},
            {"name": "row", "B": "4096", "compute_efficiency": "0.5", **MATMUL},
            {"name": "other", "B": "4096", **{**MATMUL, "hardware": "v5p"}},
        ],
        hardware=hw,
    )
    r = analysis.results.set_index("name")
    assert r.loc["chip", "compute_efficiency"] == 0.8
    assert r.loc["chip", "network_efficiency"] == 0.95
    assert r.loc["row", "compute_efficiency"] == 0.5  # the row's own wins
    assert r.loc["other", "compute_efficiency"] == 1.0  # default
    derated = analysis.summary.derated
    assert derated["rows"].sum() == 2 and set(derated["hardware"]) == {"tpu-v5e"}


# -- properties -----------------------------------------------------------------------------


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    volumes=st.lists(st.integers(1, 2**50), min_size=2, max_size=6, unique=True),
    chips=st.integers(2, 4096),
    op=st.sampled_from(["all_gather", "reduce_scatter", "all_reduce", "all_to_all"]),
    hw=st.sampled_from(["v5e", "h100", "tpu7x", "gb200"]),
)
def test_collective_time_is_monotone_in_V_and_never_below_the_latency_floor(
    catalog, volumes, chips, op, hw
):
    volumes = sorted(volumes)
    r = rows(catalog, *(coll(f"v{i}", op, v, chips, hw) for i, v in enumerate(volumes)))
    t = r["t_network"].to_numpy()
    assert np.all(np.diff(t) >= 0)
    link = catalog.chips.loc[r["hardware"].iat[0], "default_link"]
    latency = catalog.chips.loc[r["hardware"].iat[0], f"{link}_latency"]
    phases = 2 if op == "all_reduce" else 1
    assert np.all(t >= phases * latency * chips / 2 * (1 - 1e-12))
    assert (r["t_lower"] == r["t_network"]).all() and (r["bound"] == "network").all()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    b=st.integers(1, 1 << 16),
    d=st.integers(1, 1 << 14),
    f=st.integers(1, 1 << 14),
    chips=st.sampled_from([1, 2, 8]),
    e=st.tuples(*[st.floats(0.01, 1.0) for _ in range(3)]),
)
def test_derating_never_makes_a_row_faster(catalog, b, d, f, chips, e):
    shape = {"op": "matmul", "B": str(b), "D": str(d), "F": str(f), "hardware": "v5e",
             "chips": str(chips), "shard": "D" if chips > 1 else ""}  # fmt: skip
    names = ("compute_efficiency", "hbm_efficiency", "network_efficiency")
    efficiencies = dict(zip(names, map(str, e), strict=True))
    r = rows(catalog, {"name": "nominal", **shape}, {"name": "derated", **shape, **efficiencies})
    for t in ("t_math", "t_hbm", "t_network", "t_lower", "t_upper"):
        assert r.loc["derated", t] >= r.loc["nominal", t] * (1 - 1e-12), t


def test_collective_time_without_a_collective_is_zero():
    t = collective_time(
        np.array([1e9]), np.array([8.0]), np.array([4.5e10]), np.array([True]),
        np.array([1e-6]), np.array([0.0]),
    )  # fmt: skip
    assert t.tolist() == [0.0]


# -- the latency knee -----------------------------------------------------------------------


def test_the_knee_is_where_the_bandwidth_time_meets_the_latency_floor():
    """Book, a note on ICI latency: 45 kB per chip, 720 kB over 16 v5e chips on a ring; an
    AllReduce's two phases each leave the floor at the same V; through a switch (8 H100s,
    600 ns per hop) the floor 2.4 us meets V (N - 1) / (N W)."""
    chips, bandwidth = np.array([16.0, 16.0, 8.0]), np.array([4.5e10, 4.5e10, 4.5e11])
    ring, latency = np.array([True, True, False]), np.array([1e-6, 1e-6, 6e-7])
    phases = np.array([1.0, 2.0, 1.0])  # AllGather, AllReduce, AllGather
    knee = latency_knee(chips, bandwidth, ring, latency, phases)
    assert knee == pytest.approx([720e3, 720e3, 2.4e-6 * 8 * 4.5e11 / 7], rel=1e-12)
    floor = phases * latency * chips / 2
    at = collective_time(knee, chips, bandwidth, ring, latency, phases)
    past = collective_time(knee * 1.01, chips, bandwidth, ring, latency, phases)
    assert at == pytest.approx(floor, rel=1e-12) and np.all(past > floor)


def test_no_knee_without_a_collective_or_a_hop_latency_and_none_reached_on_one_chip():
    one = np.ones(1)
    knee = [
        latency_knee(one * 16, one * 4.5e10, np.array([True]), one * 1e-6, one * 0),
        latency_knee(one * 16, one * 4.5e10, np.array([True]), one * np.nan, one),
        latency_knee(one * 16, one * 4.5e10, np.array([True]), one * 0, one),
        latency_knee(one, one * 4.5e11, np.array([False]), one * 6e-7, one),
    ]
    assert [float(k[0]) for k in knee[:3]] == pytest.approx([np.nan] * 3, nan_ok=True)
    assert knee[3][0] == np.inf  # one chip through a switch: the time is the floor


def test_an_alltoall_leaves_the_floor_at_four_times_the_allgathers_v_on_a_ring():
    one = np.ones(1)
    args = (one * 16, one * 4.5e10, np.array([True]), one * 1e-6, one)
    assert latency_knee(*args, all_to_all=True)[0] == pytest.approx(4 * latency_knee(*args)[0])
