"""The chips chart's data: a roof per chip that has the dtype's peak, its ridge as the table
has it, its place among the chosen chips kept (its colour), the others left out and said."""

from __future__ import annotations

import pandas as pd

import pipeline
from pipeline.render.charts.chips_data import chips_data

TABLE = pd.DataFrame(
    {"a": [1e15, 2e15, 2e12, 500.0, 1000.0], "b": [5e14, None, 1e12, 500.0, None]},
    index=pd.Index(["peak_bf16", "peak_fp8", "hbm_bandwidth", "ridge_bf16", "ridge_fp8"]),
    dtype=object,
)


def test_a_roof_per_chip_with_its_ridge_and_place():
    data = chips_data(TABLE, "bf16")
    assert [(r.name, r.peak, r.bandwidth, r.ridge, r.index) for r in data.roofs] == [
        ("a", 1e15, 2e12, 500.0, 0),
        ("b", 5e14, 1e12, 500.0, 1),
    ]
    assert data.left_out == () and data.note == ""
    assert data.title == "bf16 rooflines: 2 chips"
    assert data.roofs[0].label == "a: 1.00 PFLOP/s, HBM 2.00 TB/s, ridge 500 FLOP/byte"


def test_a_chip_without_the_peak_is_left_out_and_said():
    data = chips_data(TABLE, "fp8")
    assert [(r.name, r.index) for r in data.roofs] == [("a", 0)]
    assert data.left_out == ("b",)
    assert data.note == "not drawn: b (has no fp8 peak in the catalog)"
    assert data.title == "fp8 rooflines: 1 chip"


def test_a_dtype_no_chosen_chip_has_leaves_every_chip_out():
    table = pipeline.chips(["h100", "tpu-v6e"])  # no fp4 row in their table at all
    data = chips_data(table, "fp4")
    assert data.roofs == () and data.left_out == ("h100", "tpu-v6e")
    assert data.note == "not drawn: h100, tpu-v6e (have no fp4 peak in the catalog)"
