"""The catalog as terminal text: the list, and one chip's fields with units or as stored."""

from __future__ import annotations

import pandas as pd
import pytest

import pipeline
from pipeline.render.catalog_text import catalog_lines, chip_lines, with_unit


def test_the_list_has_a_line_per_chip_and_the_version():
    chips = pipeline.catalog()
    lines = catalog_lines(chips, "v1")
    assert len(lines) == 1 + len(chips) + 1
    assert lines[0].split()[:3] == ["name", "aliases", "bf16"]
    v5e = next(line for line in lines if line.startswith("tpu-v5e "))
    assert v5e.split()[-6:] == ["197.0", "820", "16", "ici", "45", "GB/s"]
    assert lines[-1] == "catalog version v1; `pipeline hardware NAME` shows sources"


@pytest.mark.parametrize(
    ("key", "value", "shown"),
    [
        ("peak_bf16", 1.97e14, "197 TFLOP/s"),
        ("peak_fp8", 1.979e15, "1.98 PFLOP/s"),
        ("hbm_bandwidth", 8.2e11, "820 GB/s"),
        ("hbm_capacity", 1.6e10, "16.0 GB"),
        ("nvlink_latency", 6e-7, "600 ns"),
        ("compute_efficiency", 0.9, "90.0%"),
        ("aliases", "v5e;tpuv5e", "v5e, tpuv5e"),
        ("vendor", "google", "google"),
        ("as_of", "2025-02-04", "2025-02-04"),
    ],
)
def test_each_field_with_its_unit(key, value, shown):
    assert with_unit(key, value) == shown


def test_a_chip_shows_its_fields_with_units_or_as_stored():
    row = pd.Series({"aliases": "x1", "peak_bf16": 1e14, "ici_latency": None, "source": "mine"})
    assert chip_lines("x", row) == [
        "name              x",
        "aliases           x1",
        "peak_bf16         100 TFLOP/s",
        "source            mine",
    ]  # a field without a value is left out
    assert chip_lines("x", row, raw=True)[2] == "peak_bf16         100000000000000.0"


def test_a_long_field_name_widens_the_column_and_text_stays_printable():
    row = pd.Series({"network_efficiency": 0.5, "source": "a\x1b[2Jb"})
    assert chip_lines("x", row) == [
        "name                x",
        "network_efficiency  50.0%",
        "source              a\\x1b[2Jb",
    ]
