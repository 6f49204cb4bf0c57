"""The model against the numbers "All About Rooflines" states (book value, book rounding)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pipeline
from pipeline.model.roofline import BOUNDS, bound_codes, collective_time, compute_roofline
from pipeline.scenarios import load_scenarios
from tests.helpers import BOOK_SCENARIOS, compute_text, write_scenarios

BIG = 1 << 20  # "with D, F large": the book's approximations assume B << D, F


def one(tmp_path, catalog, header: str, row: str) -> pd.Series:
    return compute_text(tmp_path, catalog, f"{header}\n{row}\n").iloc[0]


# -- intro timings -------------------------------------------------------------------------


def test_intro_h100_1e12_flops_takes_1_01_ms(book):
    r = book.results.set_index("name").loc["intro_h100_1e12_flops"]
    assert r["t_math"] == pytest.approx(1.01e-3, rel=0.005)  # book: 1e12 / 9.89e14 = 1.01ms
    assert r["bound"] == "compute"


def test_intro_v6e_1e12_flops_takes_about_1_1_ms(book):
    r = book.results.set_index("name").loc["intro_v6e_1e12_flops"]
    # book: 1e12 / 9.1e14 = 1.1ms; the TPU chapter's table (our catalog) says 9.2e14 -> 1.09 ms
    assert r["t_math"] == pytest.approx(1.1e-3, rel=0.05)


# -- the v5e critical intensity and the dot product ----------------------------------------


def test_v5e_critical_intensity_is_240(book):
    r = book.results.set_index("name").loc["v5e_critical_intensity"]
    assert r["critical_intensity"] == pytest.approx(240, abs=0.5)  # 1.97e14 / 8.2e11
    assert r["bound"] == "memory"  # B = 240 < 240.24 (and the weights make it worse)


def test_dot_product_intensity_tends_to_one_half(tmp_path, catalog):
    r = one(tmp_path, catalog, "name,op,N,hardware", f"d,dot,{10**8},v5e")
    n = 10**8
    assert r["flops"] == 2 * n  # docs/model.md: 2 x product (the book counts 2N - 1)
    assert r["bytes_read"] == 4 * n and r["bytes_written"] == 2  # book: 2N + 2N + 2
    assert r["intensity"] == pytest.approx(0.5, abs=1e-6)  # book: (2N-1)/(4N+2) -> 1/2
    assert r["bound"] == "memory"
    assert pd.isna(r["critical_batch"])


# -- matmul --------------------------------------------------------------------------------


def test_matmul_bf16_bytes_flops_and_intensity(tmp_path, catalog):
    b, d, f = 128, 8192, 4096
    r = one(tmp_path, catalog, "name,op,B,D,F,hardware", f"m,matmul,{b},{d},{f},v5e")
    assert r["flops"] == 2 * b * d * f
    assert r["bytes_read"] == 2 * b * d + 2 * d * f
    assert r["bytes_written"] == 2 * b * f
    assert r["intensity"] == pytest.approx(b * d * f / (b * d + d * f + b * f), rel=1e-12)


@pytest.mark.parametrize(
    ("hardware", "dtypes", "book", "tol"),
    [
        ("v5e", "bf16,bf16,bf16", 240, 0.01),  # takeaway: B > 240 on most TPUs
        ("v5e", "int8,int8,int8", 240, 0.01),  # the book: int8 x int8 ~ 240
        ("v5e", "bf16,int8,bf16", 120, 0.015),  # Q2: 2B > 240, B > 120
        ("h100", "bf16,bf16,bf16", 295, 0.01),  # Q5 with the 9.89e14 spec-sheet figure
    ],
)
def test_critical_batch_matches_book(tmp_path, catalog, hardware, dtypes, book, tol):
    header = "name,op,B,D,F,hardware,x_dtype,y_dtype,out_dtype"
    r = one(tmp_path, catalog, header, f"m,matmul,64,{BIG},{BIG},{hardware},{dtypes}")
    assert r["critical_batch"] == pytest.approx(book, rel=tol)


def test_q1_int8_with_question_constants(tmp_path, catalog):
    header = "name,op,B,D,F,hardware,dtype,peak_flops,hbm_bandwidth"
    b = 256
    r = one(tmp_path, catalog, header, f"q1,matmul,{b},{BIG},{BIG},v5e,int8,3.94e14,8.1e11")
    assert r["bytes_read"] == b * BIG + BIG * BIG  # BD + DF loaded
    assert r["bytes_written"] == b * BIG  # BF written back
    assert r["flops"] == 2 * b * BIG * BIG  # still 2BDF
    assert r["critical_intensity"] == pytest.approx(486, abs=0.5)  # 3.94e14 / 8.1e11
    assert r["critical_batch"] == pytest.approx(243, rel=0.01)  # B > 486 / 2 = 243
    t_math = 2 * b * BIG * BIG / 3.94e14
    t_comms = (b * BIG + BIG * BIG + b * BIG) / 8.1e11
    assert r["t_math"] == pytest.approx(t_math, rel=1e-12)
    assert r["t_hbm"] == pytest.approx(t_comms, rel=1e-12)
    assert r["t_lower"] == pytest.approx(max(t_math, t_comms), rel=1e-12)
    assert r["t_upper"] == pytest.approx(t_math + t_comms, rel=1e-12)


def test_q5_with_book_rounded_peak_gives_298(tmp_path, catalog):
    header = "name,op,B,D,F,hardware,peak_flops"
    r = one(tmp_path, catalog, header, f"q5,matmul,64,{BIG},{BIG},h100,1e15")
    assert r["critical_intensity"] == pytest.approx(298, abs=0.6)  # 1e15 / 3.35e12 = 298
    assert r["critical_batch"] == pytest.approx(298, rel=0.01)


def test_critical_batch_is_exact_smallest_compute_bound_batch(tmp_path, catalog):
    header = "name,op,B,D,F,hardware,x_dtype,y_dtype"
    r = one(tmp_path, catalog, header, "m,matmul,1,4096,4096,v5e,bf16,int8")
    crit = int(r["critical_batch"])
    text = f"{header}\nlo,matmul,{crit - 1},4096,4096,v5e,bf16,int8\n"
    text += f"at,matmul,{crit},4096,4096,v5e,bf16,int8\n"
    rows = compute_text(tmp_path, catalog, text)
    assert rows.loc["lo", "bound"] == "memory"
    assert rows.loc["at", "bound"] == "compute"


def test_q3_sweeps_reach_peak_and_small_needs_almost_double(book):
    res = book.results
    first = {}
    for series, d in (("q3_D4096", 4096), ("q3_D1024", 1024)):
        s = res[res["series"] == series]
        assert len(s) == 511 + 1  # B = 1..512
        b = s["B"].to_numpy(dtype=float)
        # the book's own code: comms_time = (2BD + DF + 2BF) / 8.2e11, exact bytes
        book = (
            2
            * b
            * d
            * d
            / np.maximum(2 * b * d * d / 1.97e14, (2 * b * d + d * d + 2 * b * d) / 8.2e11)
        )
        np.testing.assert_allclose(s["attainable_flops"].to_numpy(), book, rtol=1e-12)
        assert s["attainable_flops"].max() == pytest.approx(1.97e14)  # both reach peak
        first[d] = int(s.loc[s["bound"] == "compute", "B"].min())
        assert int(s["critical_batch"].iloc[0]) == first[d]
    assert 1.5 < first[1024] / first[4096] <= 2.0  # "almost doubles the critical batch size"


def test_q4_batched_int8_intensity_about_two(book):
    r = book.results.set_index("name").loc["q4_batched_int8"]
    b, d, f = 256, 4096, 4096
    assert r["intensity"] == pytest.approx(2 * b * d * f / (b * d + b * d * f + b * f), rel=1e-12)
    assert r["intensity"] == pytest.approx(2, abs=0.01)
    assert r["bound"] == "memory"
    assert pd.isna(r["critical_batch"])  # no batch size makes it compute-bound


# -- network rooflines ---------------------------------------------------------------------


def test_two_chip_comms_time_is_2BF_over_4_5e10(tmp_path, catalog):
    b, d, f = 4096, 9216, 16384
    r = one(
        tmp_path, catalog, "name,op,B,D,F,hardware,chips,shard", f"n,matmul,{b},{d},{f},v5e,2,D"
    )
    assert r["collective"] == "all_reduce"
    assert r["network_bytes"] == 2 * b * f
    assert r["t_network"] == pytest.approx(2 * b * f / 4.5e10, rel=1e-12)
    assert r["t_math"] == pytest.approx(b * d * f / 1.97e14, rel=1e-12)  # half the work per chip
    assert r["flops_per_chip"] * 2 == r["flops"]


@pytest.mark.parametrize(("d", "bound"), [(8754, "network"), (8756, "compute")])
def test_two_chip_compute_bound_iff_D_over_8755(tmp_path, catalog, d, bound):
    header = "name,op,B,D,F,hardware,chips,shard"
    r = one(tmp_path, catalog, header, f"n,matmul,8192,{d},65536,v5e,2,D")
    assert r["bound"] == bound
    # D/2 > 1.97e14 / 4.5e10 = 4377: the critical network intensity
    assert 1.97e14 / r["link_bandwidth"] == pytest.approx(4377, abs=1)


def test_sharding_a_non_contracted_dim_needs_no_communication(tmp_path, catalog):
    r = one(
        tmp_path, catalog, "name,op,B,D,F,hardware,chips,shard", "n,matmul,4096,4096,4096,v5e,4,F"
    )
    assert r["collective"] == "" and r["t_network"] == 0 and r["network_bytes"] == 0
    assert r["flops_per_chip"] == 2 * 4096 * 4096 * 1024
    assert r["bytes_read"] == 2 * 4096 * 4096 + 2 * 4096 * 1024


def test_uneven_shard_uses_ceil(tmp_path, catalog):
    r = one(tmp_path, catalog, "name,op,B,D,F,hardware,chips,shard", "n,matmul,10,7,5,v5e,2,D")
    assert r["flops_per_chip"] == 2 * 10 * 4 * 5  # ceil(7 / 2) = 4


def test_switched_link_allreduce_time(tmp_path, catalog):
    b, d, f, n = 1024, 65536, 8192, 8
    header = "name,op,B,D,F,hardware,chips,shard"
    r = one(tmp_path, catalog, header, f"g,matmul,{b},{d},{f},h100,{n},D")
    v = 2 * b * f
    assert r["t_network"] == pytest.approx(2 * v * (n - 1) / (n * 4.5e11), rel=1e-12)


def test_collective_latency_floor():
    t = collective_time(
        volume=np.array([2.0, 2.0]),
        chips=np.array([2.0, 16.0]),
        bandwidth=np.array([4.5e10, 4.5e10]),
        topology=np.array(["ring", "ring"]),
        latency=np.array([1e-6, 1e-6]),
        phases=np.array([2.0, 2.0]),
    )
    np.testing.assert_allclose(t, [2 * 1e-6 * 2 / 2, 2 * 1e-6 * 16 / 2])


def test_bound_ties():
    codes = bound_codes(
        np.array([1.0, 1.0, 1.0]), np.array([1.0, 0.5, 2.0]), np.array([0.0, 1.0, 2.0])
    )
    assert [BOUNDS[c] for c in codes] == [
        "memory",  # compute only when strictly largest
        "network",  # math ties network: not strictly largest; network is largest
        "memory",  # memory/network tie is memory
    ]


# -- capacity, attainable, measured --------------------------------------------------------


def test_fits_and_attainable_and_measured(tmp_path, catalog):
    header = "name,op,B,D,F,hardware,measured_seconds"
    text = f"{header}\nsmall,matmul,512,4096,4096,v5e,0.001\nhuge,matmul,512,131072,131072,v5e,\n"
    rows = compute_text(tmp_path, catalog, text)
    assert bool(rows.loc["small", "fits"]) and not bool(rows.loc["huge", "fits"])
    assert rows.loc["huge", "memory_footprint"] > 16e9
    s = rows.loc["small"]
    assert s["attainable_flops"] == pytest.approx(s["flops_per_chip"] / s["t_lower"])
    assert s["peak_fraction"] == pytest.approx(s["attainable_flops"] / 1.97e14)
    assert s["measured_over_predicted"] == pytest.approx(0.001 / s["t_lower"])
    assert pd.isna(rows.loc["huge", "measured_over_predicted"])


def test_einsum_with_two_batch_dims(tmp_path, catalog):
    header = "name,op,B,S,D,F,hardware"
    r = one(tmp_path, catalog, header, 'e,"BSD,DF->BSF",4,64,8192,8192,v5e')
    assert r["flops"] == 2 * 4 * 64 * 8192 * 8192
    assert r["einsum"] == "BSD,DF->BSF"
    assert r["critical_batch"] == pytest.approx(240, rel=0.08)  # product B*S, D = F = 8192


def test_compute_does_not_mutate_input(catalog):
    frame = load_scenarios(BOOK_SCENARIOS, catalog).frame
    before = frame.copy()
    compute_roofline(frame)
    pd.testing.assert_frame_equal(frame, before)


# -- invariants (hypothesis) ---------------------------------------------------------------

dims = st.integers(min_value=1, max_value=1 << 14)


@settings(max_examples=60, deadline=None)
@given(b=dims, d=dims, f=dims, dtype=st.sampled_from(["bf16", "fp32", "int8"]))
def test_matmul_intensity_grows_with_batch(catalog, b, d, f, dtype):
    rows = [
        {
            "name": f"b{bb}",
            "op": "matmul",
            "B": bb,
            "D": d,
            "F": f,
            "hardware": "h100",  # it has a peak for each of the dtypes
            "dtype": dtype,
        }
        for bb in (b, b + 1)
    ]
    results = pipeline.analyze(rows, hardware=catalog).results
    small, large = results["intensity"]
    assert large >= small
    size = {"bf16": 2, "fp32": 4, "int8": 1}[dtype]  # bytes per element
    assert small == pytest.approx(2 * b * d * f / ((b * d + d * f + b * f) * size), rel=1e-12)


@settings(max_examples=40, deadline=None)
@given(b=dims, d=dims, f=dims, chips=st.sampled_from([1, 2, 4, 8]), shard=st.sampled_from("BDF"))
def test_bounds_and_per_chip_work(tmp_path_factory, catalog, b, d, f, chips, shard):
    tmp = tmp_path_factory.mktemp("h")
    sizes = {"B": b, "D": d, "F": f}
    sizes[shard] = sizes[shard] * chips  # divisible: per-chip x chips == total
    header = "name,op,B,D,F,hardware,chips,shard"
    r = one(
        tmp, catalog, header, f"h,matmul,{sizes['B']},{sizes['D']},{sizes['F']},v5e,{chips},{shard}"
    )
    assert r["t_lower"] <= r["t_upper"] <= 3 * r["t_lower"] * (1 + 1e-12)
    if r["t_network"] == 0:
        assert r["t_upper"] <= 2 * r["t_lower"] * (1 + 1e-12)
    assert r["flops_per_chip"] * chips == r["flops"]


SCALED = ["flops", "flops_per_chip", "bytes_read", "bytes_written", "hbm_bytes", "network_bytes",
          "t_math", "t_hbm", "t_network", "t_lower", "t_upper"]  # fmt: skip
ONE_OPS = ["intensity", "critical_intensity", "bound", "critical_batch", "attainable_flops",
           "peak_fraction", "memory_footprint", "fits"]  # fmt: skip


@pytest.mark.parametrize(
    "row",
    [
        "m,matmul,32,4096,14336,,,h100,1,,",  # a decode-sized layer matmul (memory-bound)
        "s,matmul,4096,8192,8192,,,v5e,4,D,",  # sharded: its AllReduce too
        "c,custom,,,,1e12,1e9,tpu-v6e,1,,",  # FLOPs and bytes given
        "a,all_gather,,,,,2e9,v5e,16,,",  # a collective: its latency floor scales too
    ],
)
def test_count_multiplies_flops_bytes_and_times_and_nothing_else(tmp_path, catalog, row):
    """count = 32 is 32 identical ops, one after another: 32 x one op's work and time, the
    intensity, bound, critical batch and footprint one op's (docs/model.md#count)."""
    header = "name,op,B,D,F,flops,bytes,hardware,chips,shard,count"
    once = one(tmp_path, catalog, header, row + "1")
    many = one(tmp_path, catalog, header, row + "32")
    for c in SCALED:
        assert many[c] == pytest.approx(32 * once[c], rel=1e-12, abs=0), c
    for c in ONE_OPS:
        assert (pd.isna(many[c]) and pd.isna(once[c])) or many[c] == once[c], c
    assert (many["count"], once["count"]) == (32, 1)


def test_count_is_a_whole_number_and_only_in_results_when_given(tmp_path, catalog):
    rows = "name,op,B,D,F,hardware,count\nz,matmul,8,8,8,h100,0\nh,matmul,8,8,8,h100,1.5\n"
    rows += "w,matmul,8,8,8,h100,two\nk,matmul,8,8,8,h100,\n"
    a = pipeline.analyze(write_scenarios(tmp_path, rows), hardware=catalog)
    assert [p.reason for p in a.problem_list] == [
        f"'{v}' is not how many times the op runs (1 or more)" for v in ("0", "1.5", "two")
    ]
    assert a.results["count"].tolist() == [1]  # a blank count is one op
    plain = compute_text(tmp_path, catalog, "name,op,B,D,F,hardware\nk,matmul,8,8,8,h100\n")
    assert "count" not in plain.columns
