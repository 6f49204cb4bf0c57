"""How a value is written (pipeline/words.py): a row's dtypes as one label, a row's shape from
the one builder a series' shape uses too (its op's dims in the op's order, nothing for custom
ops and collectives)."""

from __future__ import annotations

import pandas as pd

from pipeline.words import dtype_labels, row_shapes, shape_texts
from tests.helpers import analyze_rows


def test_dtype_labels_one_label_per_row():
    """The one dtype label (report tables, critical batches): short when all agree, the
    compute dtype only when it is not the default (the wider of X and Y)."""
    x = ["bf16", "bf16", "int8", "bf16", "fp8"]
    y = ["bf16", "int8", "int8", "bf16", "fp8"]
    out = ["bf16", "bf16", "int8", "fp32", "fp8"]
    compute = ["bf16", "bf16", "int8", "bf16", "bf16"]
    assert dtype_labels(x, y, out, compute).tolist() == [
        "bf16",
        "bf16 × int8 → bf16",
        "int8",
        "bf16 × bf16 → fp32",
        "fp8, bf16 compute",
    ]
    assert dtype_labels([], [], [], []).tolist() == []


def by_name(analysis) -> dict[str, str]:
    shapes = row_shapes(analysis.results)
    return dict(zip(analysis.results["name"].astype(str), shapes, strict=True))


def test_row_shapes_of_the_book(book):
    shapes = by_name(book)
    assert shapes["q3_D4096[B=1]"] == "B=1 D=4096 F=4096"
    assert shapes["q5_h100_bf16"] == "B=512 D=65536 F=65536"
    assert shapes["dot_product"] == "N=1000000"  # the dot's one dim, nothing of the others
    assert shapes["intro_h100_1e12_flops"] == ""  # a custom op: its FLOPs and bytes say it


def test_a_rows_dims_in_the_ops_order_and_a_missing_value_left_out():
    rows = [{"name": "attn", "op": "BSD,DF->BSF", "B": 2, "S": "128|256", "D": 64, "F": 32,
             "hardware": "h100"}]  # fmt: skip
    a = analyze_rows(rows)
    assert set(row_shapes(a.results)) == {"B=2 S=128 D=64 F=32", "B=2 S=256 D=64 F=32"}
    low = pd.DataFrame({"B": pd.array([1, None], dtype="Int64"), "D": [8, 8], "F": [4, 4]})
    einsum = pd.Series(["BD,DF->BF", "BD,DF->BF"])
    assert list(shape_texts(einsum, low, low)) == ["B=1 D=8 F=4", "D=8 F=4"]
    low = pd.DataFrame({"B": [1, 1], "D": [8, 8], "F": [4, 4]})
    assert list(shape_texts(pd.Series(["BD,DF->BF", ""]), low, low + 3)) == [
        "B=1..4 D=8..11 F=4..7",
        "",
    ]
