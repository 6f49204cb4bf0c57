"""scenarios/dims.py: dim cells (whole numbers or sweeps, per op), a collective's bytes, and the
numbers each row takes from the catalog."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.catalogs.hardware import EFFICIENCY_COLUMNS, EFFICIENCY_RANGE
from pipeline.scenarios.dims import (
    MAX_OP_LOG2,
    check_bytes,
    check_dims,
    check_peak,
    whole_or_sweep,
)
from pipeline.scenarios.sweeps import TOO_BIG, Sweep
from tests.helpers import coded, op_columns, with_chip

NAN = np.nan


def test_whole_or_sweep_values_sweeps_and_problems():
    col = coded("8", "1..4", "", "x", "8", "2|3", "1e3")
    need = np.array([True, True, True, True, False, True, True])
    values, (rows, cells), found = whole_or_sweep(col, "B", need, lambda p: f"empty at {p}")
    np.testing.assert_array_equal(values, [8, NAN, NAN, NAN, NAN, NAN, 1000])
    assert rows.tolist() == [1, 5]
    assert list(cells) == [Sweep(lo=1, hi=4), Sweep(items=(2, 3))]
    assert sorted(found) == [
        (2, "B", "empty at 2"),
        (3, "B", "'x' is not a positive integer or a sweep (128|256, 1..512, 1..4096*2)"),
    ]


@pytest.mark.parametrize(
    ("cell", "reason"),
    [
        ("9007199254740993", f"'9007199254740993' {TOO_BIG}"),
        (
            "8..1",
            "a range that goes down: '8..1'; a range goes up from 1 or more, by one (1..64) "
            "or times 2 or more (1..64*2): write '1..8'",
        ),
        ("0", "'0' is not a positive integer or a sweep (128|256, 1..512, 1..4096*2)"),
    ],
)
def test_whole_or_sweep_says_why_a_cell_is_bad(cell, reason):
    _, _, found = whole_or_sweep(coded(cell), "D", np.array([True]), str)
    assert found == [(0, "D", reason)]


def test_check_dims_reads_the_dims_each_op_needs():
    sig, op = op_columns("matmul", "dot", "matmul", "", "matmul")
    cells = {"B": coded("8", "8", "1..3", "8", ""), "D": coded("16", "", "16", "", "16"),
             "F": coded("4", "9", "4", "", "4"), "N": coded("", "32", "", "", "")}  # fmt: skip
    values, sweeps, found = check_dims(sig, op, cells)
    assert list(values) == ["B", "D", "F", "N"]
    np.testing.assert_array_equal(values["B"], [8, NAN, NAN, NAN, NAN])  # dot takes N only
    np.testing.assert_array_equal(values["N"], [NAN, 32, NAN, NAN, NAN])
    np.testing.assert_array_equal(values["F"], [4, NAN, 4, NAN, 4])
    assert sweeps["B"][0].tolist() == [2] and list(sweeps["B"][1]) == [Sweep(lo=1, hi=3)]
    assert found == [(4, "B", "empty; op matmul needs a value for dim B")]  # a bad op: nothing


def test_check_dims_names_a_missing_column():
    sig, op = op_columns("matmul", "dot")
    _, _, found = check_dims(sig, op, {"B": coded("1", ""), "F": coded("2", "")})
    assert found == [(0, "D", "op matmul needs dim D, and the file has no column 'D'"),
                     (1, "N", "op dot needs dim N, and the file has no column 'N'")]  # fmt: skip


def test_check_dims_refuses_dims_that_multiply_past_float64():
    sig, op = op_columns("matmul", "matmul")
    big = str(2**50)
    cells = {"B": coded(big, "8"), "D": coded(big, "8"), "F": coded(f"1..{big}*2", "8")}
    _, _, found = check_dims(sig, op, cells)
    assert found == []  # 2^150 is far below 2^1000
    many = "".join(chr(ord("A") + i) for i in range(21))  # 21 dims of 2^50: 2^1050
    sig, op = op_columns(f"{many},{many}->{many}")
    _, _, found = check_dims(sig, op, {d: coded(big) for d in many})
    assert found == [
        (0, "op", f"its dims multiply to about 2^1050; the tool counts FLOPs and bytes up to "
         f"2^{MAX_OP_LOG2} (float64)")
    ]  # fmt: skip


def test_check_bytes_of_a_collective():
    _, op = op_columns("all_gather", "all_gather", "matmul", "all_reduce")
    collective = np.array([True, True, False, True])
    values, (rows, cells), found = check_bytes(coded("2e9", "1..8*2", "5", ""), collective, op)
    np.testing.assert_array_equal(values, [2e9, NAN, NAN, NAN])  # a matmul's bytes: not here
    assert rows.tolist() == [1] and len(cells[0]) == 4
    assert found == [
        (3, "bytes", "empty; op all_reduce needs bytes, the size of the whole array in bytes "
         "(V, before it is split over the chips)")
    ]  # fmt: skip


def given(n: int, **values) -> dict[str, np.ndarray]:
    """The numbers a row may give itself, NaN where it gives none."""
    out = {c: np.full(n, NAN) for c in ("peak_flops", "hbm_bandwidth", "hbm_capacity")}
    out.update({c: np.full(n, NAN) for c in EFFICIENCY_COLUMNS})
    out.update({k: np.asarray(v, dtype=float) for k, v in values.items()})
    return out


def test_check_peak_the_rows_own_else_the_catalogs(catalog):
    hw = coded("tpu-v5e", "tpu-v5e", "h100", "")
    compute = coded("bf16", "int8", "fp32", "bf16")
    own = given(4, peak_flops=[NAN, 1e15, NAN, NAN], hbm_capacity=[NAN, NAN, 1e9, NAN])
    out, found = check_peak(catalog.chips, hw, compute, np.zeros(4, bool), own, np.ones(4, bool))
    np.testing.assert_array_equal(out["peak_flops"], [1.97e14, 1e15, 6.7e13, NAN])
    np.testing.assert_array_equal(out["hbm_bandwidth"], [8.2e11, 8.2e11, 3.35e12, NAN])
    np.testing.assert_array_equal(out["hbm_capacity"], [1.6e10, 1.6e10, 1e9, NAN])
    for c in EFFICIENCY_COLUMNS:  # neither the rows nor the chips give one: 1
        np.testing.assert_array_equal(out[c], [1.0] * 4)
    assert found == []


def test_check_peak_a_dtype_the_chip_has_no_peak_for(catalog):
    hw, compute = coded("tpu-v5e", "tpu-v5e", "tpu-v5e"), coded("fp32", "fp32", "fp32")
    collective = np.array([False, False, True])  # a collective needs no peak
    given_peak = np.array([True, False, True])  # row 1 gives a peak_flops cell (a bad one)
    _, found = check_peak(catalog.chips, hw, compute, collective, given(3), given_peak)
    assert found == [
        (0, "compute_dtype", "chip tpu-v5e has no fp32 peak in the catalog; give a peak_flops "
         "column (FLOP/s) or a --hardware file with peak_fp32")
    ]  # fmt: skip


def test_check_peak_a_chip_without_hbm_bandwidth(catalog):
    chips = with_chip(catalog, "nohbm", hbm_bandwidth=NAN).chips
    hw, compute = coded("nohbm", "nohbm"), coded("bf16", "bf16")
    own = given(2, hbm_bandwidth=[NAN, 1e12])
    out, found = check_peak(chips, hw, compute, np.zeros(2, bool), own, np.ones(2, bool))
    np.testing.assert_array_equal(out["hbm_bandwidth"], [NAN, 1e12])
    assert found == [
        (0, "hbm_bandwidth", "chip nohbm has no HBM bandwidth; give hbm_bandwidth (bytes/s)")
    ]


def test_check_peak_efficiencies_the_rows_else_the_chips_else_1(catalog):
    chips = with_chip(catalog, "derated", hbm_efficiency=0.8).chips
    hw, compute = coded("derated", "derated", "tpu-v5e"), coded("bf16", "bf16", "bf16")
    own = given(3, hbm_efficiency=[NAN, 0.5, NAN], compute_efficiency=[1.5, NAN, 0.9])
    out, found = check_peak(chips, hw, compute, np.zeros(3, bool), own, np.ones(3, bool))
    np.testing.assert_array_equal(out["hbm_efficiency"], [0.8, 0.5, 1.0])
    np.testing.assert_array_equal(out["compute_efficiency"], [1.5, 1.0, 0.9])
    np.testing.assert_array_equal(out["network_efficiency"], [1.0, 1.0, 1.0])
    assert found == [(0, "compute_efficiency", f"1.5 is above 1; {EFFICIENCY_RANGE}")]
