"""The one number formatter: how each quantity is shown to people (report, charts, workbook)."""

from __future__ import annotations

import pandas as pd
import pytest

from pipeline.render import format as fmt
from pipeline.render.templates import sort_key

FORMATTERS = {
    "seconds": fmt.seconds, "flop_rate": fmt.flop_rate, "flops": fmt.flops, "bytes": fmt.size,
    "bandwidth": fmt.bandwidth, "percent": fmt.percent, "num": fmt.number, "count": fmt.count,
    "ratio": fmt.ratio, "when": fmt.when, "sortkey": sort_key,
}  # fmt: skip


@pytest.mark.parametrize(
    ("name", "value", "text"),
    [
        ("seconds", 1.011e-3, "1.01 ms"),
        ("seconds", 5.24e-3, "5.24 ms"),
        ("seconds", 2.05e-5, "20.5 \u00b5s"),
        ("seconds", 1.02e-8, "10.2 ns"),
        ("seconds", 1.5, "1.50 s"),
        ("seconds", 0.0, "0 s"),
        ("seconds", 0.9996, "1.00 s"),
        ("seconds", float("nan"), "\u2014"),
        ("seconds", None, "\u2014"),
        ("flop_rate", 1.97e14, "197 TFLOP/s"),
        ("flop_rate", 1.979e15, "1.98 PFLOP/s"),
        ("flop_rate", 9.997e11, "1.00 TFLOP/s"),
        ("flops", 2.061584e12, "2.06 TFLOP"),
        ("bytes", 1.6e10, "16.0 GB"),
        ("bytes", 8.0e10, "80.0 GB"),
        ("bytes", 512, "512 B"),
        ("bytes", 1e6, "1.00 MB"),
        ("bandwidth", 8.2e11, "820 GB/s"),
        ("bandwidth", 3.35e12, "3.35 TB/s"),
        ("percent", 0.64637, "64.6%"),
        ("percent", 1.0, "100%"),
        ("percent", 0, "0%"),
        ("percent", None, "\u2014"),
        ("num", 238.254968, "238"),
        ("num", 4377.8, "4,378"),
        ("num", 0.5, "0.500"),
        ("num", 0.00208, "0.00208"),
        ("num", 2.0, "2.00"),
        ("num", 1e6, "1,000,000"),
        ("count", 1035, "1,035"),
        ("count", pd.NA, "\u2014"),
        ("ratio", 3.8168, "3.82\u00d7"),
        ("ratio", float("inf"), "\u221e\u00d7"),
        ("when", "2026-01-01T00:00:00+00:00", "2026-01-01 00:00:00 UTC"),
        ("when", "yesterday", "yesterday"),
        ("sortkey", 0.0010111223458, "0.0010111"),
        ("sortkey", float("nan"), ""),
    ],
)
def test_numbers_are_formatted_for_people(name, value, text):
    assert FORMATTERS[name](value) == text


def test_axis_labels_drop_trailing_zeros():
    assert fmt.flop_rate(5e13, trim=True) == "50 TFLOP/s"
    assert fmt.flop_rate(2.5e14, trim=True) == "250 TFLOP/s"
    assert fmt.flop_rate(1.5e12, trim=True) == "1.5 TFLOP/s"
    assert fmt.flop_rate(5e13) == "50.0 TFLOP/s"


def test_plural():
    assert fmt.plural(1, "row") == "1 row" and fmt.plural(1035, "scenario") == "1,035 scenarios"


def test_excel_formats_cover_every_quantity():
    assert set(fmt.EXCEL) >= {"seconds", "flop_rate", "flops", "size", "bandwidth", "percent"}
    assert fmt.EXCEL["seconds"].endswith('##0.000E+0" s"')  # engineering notation: E-3 = ms
