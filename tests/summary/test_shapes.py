"""The shape text of a series: its op's dims in the op's order, a swept dim as its range,
nothing for custom ops and collectives; its line's (Summary.lines), worded from its dims'
ranges over every row (summary.series) by the one builder of a row's (tests/test_words.py)."""

from __future__ import annotations

import pandas as pd

from pipeline.summary.shapes import range_dims, series_shapes
from tests.helpers import analyze_rows


def test_series_shapes_give_a_swept_dim_its_range(book, mix):
    shapes = book.summary.lines["shape"]
    assert shapes["q3_D4096"] == "B=1..512 D=4096 F=4096"
    assert shapes["q5_h100_bf16"] == "B=512 D=65536 F=65536"
    assert shapes["intro_h100_1e12_flops"] == ""
    assert mix.summary.lines.at["ag", "shape"] == ""  # a collective: its V says it


def test_series_shapes_read_the_lines_ranges():
    lines = pd.DataFrame(
        {"einsum": ["BD,DF->BF", "", "N,N->"], "B_min": pd.array([1, None, None], dtype="Int64"),
         "B_max": pd.array([512, None, None], dtype="Int64"), "D_min": [8, 1, 1],
         "D_max": [8, 1, 1], "F_min": [4, 1, 1], "F_max": [16, 1, 1], "bytes_min": [1, 2, 3]}
    )  # fmt: skip
    assert range_dims(lines) == ["B", "D", "F"]
    assert list(series_shapes(lines)) == ["B=1..512 D=8 F=4..16", "", ""]


def test_a_series_shape_gives_its_dims_in_the_ops_order():
    rows = [{"name": "attn", "op": "BSD,DF->BSF", "B": 2, "S": "128|256", "D": 64, "F": 32,
             "hardware": "h100"}]  # fmt: skip
    a = analyze_rows(rows)
    assert a.summary.lines.at["attn", "shape"] == "B=2 S=128..256 D=64 F=32"


def test_a_custom_ops_size_is_its_flops_and_bytes_over_its_rows(book):
    rows = [{"name": "given", "op": "custom", "flops": 1e12, "bytes": 1e6,
             "hardware": "h100|h200"}]  # fmt: skip
    sizes = ["flops_min", "flops_max", "hbm_bytes_min", "hbm_bytes_max"]
    lines = analyze_rows(rows).summary.lines
    assert lines.loc["given", sizes].tolist() == [1e12, 1e12, 1e6, 1e6]
    intro = book.summary.lines.loc["intro_h100_1e12_flops"]
    assert (intro["flops_min"], intro["hbm_bytes_max"]) == (1e12, 1e6)
    assert book.summary.lines.loc["q3_D4096", sizes].isna().all()  # not a custom op
