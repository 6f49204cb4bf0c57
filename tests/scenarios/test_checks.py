"""scenarios/checks.py: the row checks of names, ops, chips, dtypes and numbers, and the
Checker that collects every problem and hands on the valid rows, typed."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from pipeline.model.ops import parse_op
from pipeline.scenarios.checks import (
    Checker,
    check_custom,
    check_dtypes,
    check_hardware,
    check_names,
    check_op,
    trimmed_names,
)
from pipeline.scenarios.coded import Col
from pipeline.scenarios.header import DTYPE_INPUTS
from tests.helpers import coded

NAN = np.nan


def test_check_names_empty_and_duplicates():
    names = trimmed_names(pa.chunked_array([[" a", "b", ""], ["a ", "  ", "c", "b"]]))
    assert names.to_pylist() == ["a", "b", "", "a", "", "c", "b"]
    found = check_names(names, np.array([2, 3, 5, 6, 7, 9, 10]))
    assert sorted(found) == [
        (2, "name", "empty name; every scenario needs a unique name"),
        (3, "name", "duplicate name 'a' (first on line 2); names must be unique"),
        (4, "name", "empty name; every scenario needs a unique name"),  # not also a duplicate
        (6, "name", "duplicate name 'b' (first on line 3); names must be unique"),
    ]
    assert check_names(pa.array(["x", "y"]), np.array([2, 3])) == []


def test_check_op_signatures_and_why_an_op_is_bad():
    sig, found = check_op(coded("matmul", "matmull", "", "frobnicate", "BD,DF->BQ", "matmull"))
    assert sig.at(0) == parse_op("matmul")
    assert sig.is_(None).tolist() == [False, True, True, True, True, True]
    reasons = dict((p, r) for p, _, r in found)
    assert reasons[1] == reasons[5] == "unknown op 'matmull' (did you mean 'matmul'?)"
    assert reasons[2].startswith("empty op; use matmul, ")
    assert reasons[2].endswith(" or an einsum")
    assert reasons[3].startswith("unknown op 'frobnicate'; use matmul, ")
    assert reasons[3].endswith(" or an einsum like BD,DF->BF")
    assert "'BD,DF->BQ'" in reasons[4]
    assert {c for _, c, _ in found} == {"op"}


def test_check_hardware_by_name_or_alias(catalog):
    hw, found = check_hardware(coded("V5E", "tpu-v6e", "h10", "", "qqqqq"), catalog)
    assert hw.values().tolist() == ["tpu-v5e", "tpu-v6e", "", "", ""]
    assert found == [
        (2, "hardware", "unknown hardware 'h10' (did you mean 'h100'?)"),
        (3, "hardware", "empty hardware; name a chip from `pipeline hardware`"),
        (4, "hardware", "unknown hardware 'qqqqq'; see `pipeline hardware` for the list"),
    ]


def test_check_dtypes_own_else_dtype_else_bf16_compute_the_wider():
    cells = {
        "dtype": coded("", "float32", "", "int8", "bfloat17"),
        "x_dtype": coded("", "", "int8", "", ""),
        "y_dtype": coded("", "INT8", "fp16", "", ""),
        "out_dtype": coded("", "", "", "bf16", ""),
        "compute_dtype": coded("", "", "", "", "fp8"),
    }
    out, found = check_dtypes(cells)
    assert list(out) == ["x_dtype", "y_dtype", "out_dtype", "compute_dtype"]
    assert out["x_dtype"].values().tolist() == ["bf16", "fp32", "int8", "int8", "bf16"]
    assert out["y_dtype"].values().tolist() == ["bf16", "int8", "fp16", "int8", "bf16"]
    assert out["out_dtype"].values().tolist() == ["bf16", "fp32", "bf16", "bf16", "bf16"]
    assert out["compute_dtype"].values().tolist() == ["bf16", "fp32", "fp16", "int8", "fp8"]
    assert found == [(4, "dtype", "unknown dtype 'bfloat17' (did you mean 'bfloat16'?)")]
    assert set(DTYPE_INPUTS) == set(cells)


def test_check_custom_needs_totals_and_one_chip():
    op = coded("custom", "custom", "matmul", "custom")
    chips = Col(np.arange(4, dtype=np.intp), np.array([1.0, 2.0, 4.0, 1.0]))
    given = {"flops": np.array([NAN, 1e12, NAN, NAN]), "bytes": np.array([1e9, 1e9, NAN, NAN])}
    # row 3's flops cell is a bad number (reported as such), so not also missing
    found = check_custom(op, chips, given, coded("", "1e12", "", "x"), coded("1e9", "1e9", "", ""))
    assert found == [
        (0, "flops", "op custom needs a positive flops total in column flops"),
        (3, "bytes", "op custom needs a positive bytes total in column bytes"),
        (1, "chips", "custom ops run on one chip; give per-chip flops and bytes with chips = 1"),
    ]


def table(header: str, *rows: str) -> pa.Table:
    names = header.split(",")
    cells = [r.split(",") for r in rows]
    return pa.table({n: pa.array([c[i] for c in cells], pa.string()) for i, n in enumerate(names)})


FRAME_COLUMNS = [
    "line", "name", "series", "op", "einsum", "hardware", "x_dtype", "y_dtype", "out_dtype",
    "compute_dtype", "chips", "peak_flops", "hbm_bandwidth", "hbm_capacity", "link_bandwidth",
    "flops", "measured_seconds", "bytes", "own_numbers", "given", "shard", "link", "link_topology",
    "link_latency", "tdp", "compute_efficiency", "hbm_efficiency", "network_efficiency", "B", "D",
    "F",
    "notes", "team", "swept", "marks",
]  # fmt: skip


def test_checker_hands_on_the_valid_rows_typed_in_the_frames_column_order(catalog):
    rows = table(
        "name,op,B,D,F,hardware,chips,shard,team",
        "a,matmul,8,64,32,v5e,2,D,x",
        "b,matmul,8,64,32,h10,,,y",
        "c,matmul,1|2,64,32,h100,,,z",
    )
    checker = Checker(rows, np.array([2, 3, 5]), None, "s.csv", catalog)
    frame = checker.run(["B", "D", "F"], 100)
    assert list(frame.columns) == FRAME_COLUMNS
    assert frame["name"].tolist() == ["a", "c[B=1]", "c[B=2]"]
    assert frame["line"].tolist() == [2, 5, 5]
    assert frame["hardware"].tolist() == ["tpu-v5e", "h100", "h100"]
    assert frame["hardware"].dtype == "category" and frame["chips"].dtype == float
    assert frame["link"].tolist() == ["ici", "nvlink", "nvlink"]
    assert frame["shard"].tolist() == ["D", "", ""]
    assert frame["team"].tolist() == ["x", "z", "z"]
    assert [str(p) for p in checker.sorted_problems()] == [
        "s.csv:3: column hardware: unknown hardware 'h10' (did you mean 'h100'?)"
    ]


def test_checker_a_ragged_row_reports_only_its_fields(catalog):
    rows = table("name,op,hardware", "a,matmul,v5e", "b,nope,h10")
    checker = Checker(rows, np.array([2, 3]), np.array([3, 5]), "s.csv", catalog)
    frame = checker.run([], 100)
    assert frame["name"].tolist() == []  # row a: op matmul needs dims the file lacks
    assert [str(p) for p in checker.sorted_problems()] == [
        "s.csv:2: column B: op matmul needs dim B, and the file has no column 'B'",
        "s.csv:2: column D: op matmul needs dim D, and the file has no column 'D'",
        "s.csv:2: column F: op matmul needs dim F, and the file has no column 'F'",
        "s.csv:3: column *: 5 fields but the header has 3; quote cells that hold commas, e.g. "
        'an einsum op "BD,DF->BF" or a note',
    ]
