"""A calibration's groups (pipeline.calibration.groups): each row's key, the names calibrate
says, which used group estimates a key and which matmul group a step's custom op borrows."""

from __future__ import annotations

import pandas as pd

import pipeline
from pipeline.calibration.groups import group_name, resolve, row_keys
from tests.helpers import analyze_rows


def test_a_rows_key_is_its_dtype_for_ops_and_its_link_and_n_for_collectives():
    rows = [
        {"name": "a", "op": "matmul", "B": 1, "D": 8, "F": 8, "dtype": "bf16"},
        {"name": "b", "op": "matmul", "B": 2, "D": 8, "F": 8, "dtype": "bf16"},
        {"name": "c", "op": "matmul", "B": 1, "D": 8, "F": 8, "dtype": "fp8"},
        {"name": "d", "op": "custom", "flops": 1, "bytes": 1, "dtype": "bf16"},
        {"name": "e", "op": "all_reduce", "bytes": 10, "chips": 8, "dtype": "bf16"},
        {"name": "f", "op": "all_reduce", "bytes": 10, "chips": 4, "dtype": "fp8"},
    ]
    results = analyze_rows([{**r, "hardware": "h100"} for r in rows]).results
    codes, keys = row_keys(results)
    got = [tuple(keys.iloc[c]) for c in codes]
    assert got == [
        ("h100", "matmul", "bf16", 0, ""), ("h100", "matmul", "bf16", 0, ""),
        ("h100", "matmul", "fp8", 0, ""), ("h100", "custom", "bf16", 0, ""),
        ("h100", "all_reduce", "", 8, "nvlink"), ("h100", "all_reduce", "", 4, "nvlink"),
    ]  # fmt: skip
    plain = results.drop(columns=["compute_dtype", "link", "chips"])
    assert set(row_keys(plain)[1]["dtype"]) == {""}  # a run's results without the columns


def test_group_names():
    assert group_name(("h100", "matmul", "bf16", 0, "")) == "h100 matmul bf16"
    assert group_name(("h100", "matmul", "", 0, "")) == "h100 matmul (every dtype)"
    assert group_name(("h100", "all_reduce", "", 8, "nvlink")) == "h100 all_reduce nvlink 8"
    assert group_name(("h100", "all_reduce", "", 0, "nvlink")) == "h100 all_reduce nvlink (any N)"


def table(*keys: tuple, used=None) -> pd.DataFrame:
    frame = pd.DataFrame(keys, columns=["hardware", "kind", "dtype", "chips", "link"])
    return frame.assign(used=True if used is None else used)


def test_resolve_takes_the_own_group_then_the_wider_then_borrows_for_custom_ops():
    keys = table(
        ("h100", "matmul", "bf16", 0, ""), ("h100", "matmul", "fp8", 0, ""),
        ("h100", "custom", "fp8", 0, ""), ("h100", "all_reduce", "", 16, "nvlink"),
        ("b200", "custom", "bf16", 0, ""),
    )  # fmt: skip
    groups = table(
        ("h100", "matmul", "bf16", 0, ""), ("h100", "matmul", "fp8", 0, ""),
        ("h100", "matmul", "", 0, ""), ("h100", "all_reduce", "", 0, "nvlink"),
        used=[True, False, True, True],
    )  # fmt: skip
    own, borrowed = resolve(keys, groups)
    # fp8's own group is not used: every dtype's; N=16: the pooled group of any N
    assert list(own) == [0, 2, -1, 3, -1]
    assert list(borrowed) == [-1, -1, 2, -1, -1]  # fp8's matmul not used: every dtype's


def test_a_missing_text_and_an_empty_one_are_one_key():
    results = analyze_rows(
        [
            {
                "name": f"a{i}",
                "op": "all_gather",
                "bytes": 10,
                "chips": 8,
                "hardware": "h100",
                "dtype": "bf16",
            }
            for i in range(2)
        ]  # fmt: skip
    ).results
    results = results.astype({"link": object})
    results.loc[0, "link"], results.loc[1, "link"] = None, ""
    codes, keys = row_keys(results)
    assert list(codes) == [0, 0] and list(keys["link"]) == [""]


def test_fp8_spelled_e4m3_or_e5m2_is_the_fp8_group():
    """Found by a review: a trace's `c10::Float8_e4m3fn` rows (fp8_e4m3) got no estimate from
    the published fp8 groups, keyed by the dtype's exact name."""
    row = {"op": "matmul", "hardware": "h100", "B": 64, "D": 4096, "F": 4096,
           "x_dtype": "bf16", "out_dtype": "bf16"}  # fmt: skip
    rows = [{**row, "name": d, "y_dtype": d, "compute_dtype": d}
            for d in ("fp8", "fp8_e4m3", "fp8_e5m2")]  # fmt: skip
    r = pipeline.analyze(rows, calibration="published").results
    assert r["t_estimate"].notna().all() and r["t_estimate"].nunique() == 1
