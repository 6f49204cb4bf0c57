"""The shape text of a row and of a series, from one builder: its op's dims in the op's
order, a swept dim as its range, nothing for custom ops and collectives. A series' shape is
its line's (Summary.lines), worded from its dims' ranges over every row (summary.series)."""

from __future__ import annotations

import pandas as pd

from pipeline.summary.shapes import range_dims, row_shapes, series_shapes, shape_texts
from tests.helpers import analyze_rows


def by_name(analysis) -> dict[str, str]:
    shapes = row_shapes(analysis.results)
    return dict(zip(analysis.results["name"].astype(str), shapes, strict=True))


def test_row_shapes_of_the_book(book):
    shapes = by_name(book)
    assert shapes["q3_D4096[B=1]"] == "B=1 D=4096 F=4096"
    assert shapes["q5_h100_bf16"] == "B=512 D=65536 F=65536"
    assert shapes["dot_product"] == "N=1000000"  # the dot's one dim, nothing of the others
    assert shapes["intro_h100_1e12_flops"] == ""  # a custom op: its FLOPs and bytes say it


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


def test_dims_in_the_ops_order_and_a_missing_value_left_out():
    rows = [{"name": "attn", "op": "BSD,DF->BSF", "B": 2, "S": "128|256", "D": 64, "F": 32,
             "hardware": "h100"}]  # fmt: skip
    a = analyze_rows(rows)
    assert set(row_shapes(a.results)) == {"B=2 S=128 D=64 F=32", "B=2 S=256 D=64 F=32"}
    assert a.summary.lines.at["attn", "shape"] == "B=2 S=128..256 D=64 F=32"
    low = pd.DataFrame({"B": pd.array([1, None], dtype="Int64"), "D": [8, 8], "F": [4, 4]})
    einsum = pd.Series(["BD,DF->BF", "BD,DF->BF"])
    assert list(shape_texts(einsum, low, low)) == ["B=1 D=8 F=4", "D=8 F=4"]


def test_a_custom_ops_size_is_its_flops_and_bytes_over_its_rows(book):
    rows = [{"name": "given", "op": "custom", "flops": 1e12, "bytes": 1e6,
             "hardware": "h100|h200"}]  # fmt: skip
    sizes = ["flops_min", "flops_max", "hbm_bytes_min", "hbm_bytes_max"]
    lines = analyze_rows(rows).summary.lines
    assert lines.loc["given", sizes].tolist() == [1e12, 1e12, 1e6, 1e6]
    intro = book.summary.lines.loc["intro_h100_1e12_flops"]
    assert (intro["flops_min"], intro["hbm_bytes_max"]) == (1e12, 1e6)
    assert book.summary.lines.loc["q3_D4096", sizes].isna().all()  # not a custom op
