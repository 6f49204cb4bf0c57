"""The catalog as terminal text: the list, one chip's fields with units or as stored and its
sources, and chips side by side."""

from __future__ import annotations

import pandas as pd
import pytest

import pipeline
from pipeline.render.text.catalog import (
    catalog_lines,
    chip_lines,
    compare_lines,
    source_lines,
    with_unit,
)
from tests.helpers import CHIP_TRIO


def test_the_list_has_a_line_per_chip_and_the_version():
    chips = pipeline.catalog()
    lines = catalog_lines(chips, "v1")
    assert len(lines) == 1 + len(chips) + 1
    assert lines[0].split()[:3] == ["name", "aliases", "bf16"]
    assert "     TDP  default link (one-way)" in lines[0]
    v5e = next(line for line in lines if line.startswith("tpu-v5e "))
    assert v5e.split()[-7:] == ["197.0", "820", "16", "\u2014", "ici", "45", "GB/s"]  # none printed
    h100 = next(line for line in lines if line.startswith("h100 "))
    assert h100.split()[-8:] == ["989.0", "3350", "80", "700", "W", "nvlink", "450", "GB/s"]
    assert len({line.index(" ici ") for line in lines if " ici " in line}) == 1  # aligned
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
        ("tdp", 700.0, "700 W"),
        ("tdp", 1400.0, "1.40 kW"),
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


def test_chips_side_by_side_with_units_ridges_and_dashes():
    table = pipeline.chips(["alpha", "beta", "gamma"], hardware=CHIP_TRIO)
    assert compare_lines(table) == [
        "chip                     alpha        beta  gamma",
        "vendor                    acme        acme      -",
        "architecture                a1           -      -",
        "HBM capacity (GB)         80.0        32.0      -",
        "HBM bandwidth (GB/s)     2,000       1,000    400",
        "peak fp32 (TFLOP/s)          -        50.0      -",
        "peak bf16 (TFLOP/s)      1,000         500    200",
        "peak fp8 (TFLOP/s)       2,000           -      -",
        "ridge fp32 (FLOP/byte)       -        50.0      -",
        "ridge bf16 (FLOP/byte)     500         500    500",
        "ridge fp8 (FLOP/byte)    1,000           -      -",
        "default link            nvlink         ici      -",
        "link one-way (GB/s)        450         100      -",
        "link topology           switch        ring      -",
        "link latency (µs)        0.600        1.00      -",
        "link reach (chips)           8         256      -",
        "as of                        -  2025-01-02      -",
    ]


def test_chips_side_by_side_show_board_power_when_a_chip_has_one():
    lines = compare_lines(pipeline.chips(["h100", "tpu-v5e"]))
    assert lines[5].split() == ["board", "power", "(W)", "700", "-"]  # after HBM bandwidth
    assert lines[4].startswith("HBM bandwidth")


def test_chips_side_by_side_raw_are_the_stored_numbers():
    table = pipeline.chips(["alpha", "beta"], hardware=CHIP_TRIO)
    lines = compare_lines(table, raw=True)
    assert lines[0].split() == ["chip", "alpha", "beta"]
    assert lines[6].split() == ["peak_bf16", "1000000000000000.0", "500000000000000.0"]
    assert lines[-3].split() == ["link_latency", "6e-07", "1e-06"]
    assert lines[7].split() == ["peak_fp8", "2000000000000000.0", "-"]


def test_chip_names_in_the_side_by_side_header_are_printable():
    table = pd.DataFrame({"a\x1bb": [1e14]}, index=pd.Index(["peak_bf16"], name="field"))
    assert compare_lines(table) == ["chip                 a\\x1bb", "peak bf16 (TFLOP/s)     100"]


SOURCES = pd.DataFrame(
    [
        ("hbm_capacity", "80 GB", "as-printed", "Datasheet, https://example.com/h100-datasheet-"
         "2023.pdf, Technical Specifications, H100 SXM column, GPU memory row", "2023-03"),
        ("peak_bf16", "1,979 TFLOPS", "sparse", "Datasheet, https://example.com/h100-datasheet-"
         "2023.pdf, Technical Specifications, H100 SXM column, GPU memory row", "2023-03"),
        ("nvlink_bandwidth", "900 GB/s", "bidirectional", "NVLink page", "2024-05"),
    ],
    columns=["field", "printed", "basis", "source", "as_of"],
).assign(per=[1.0, 1.0, 8.0]
)  # fmt: skip


def test_sources_a_line_per_field_grouped_by_document_wrapped_once():
    order = list(pipeline.catalog().columns)
    assert source_lines(SOURCES, order) == [
        "sources (each figure as printed, its basis, what the catalog divides it by, date):",
        "  peak_bf16        1,979 TFLOPS  sparse         ÷ 2   2023-03",  # the chip's field order
        "  hbm_capacity     80 GB         as-printed           2023-03",
        "      Datasheet, https://example.com/h100-datasheet-2023.pdf, Technical Specifications, H100 SXM",
        "      column, GPU memory row",
        "  nvlink_bandwidth 900 GB/s      bidirectional  ÷ 16  2024-05",
        "      NVLink page",
    ]  # fmt: skip
    assert all(len(line) <= 100 for line in source_lines(SOURCES, order))


def test_sources_say_a_field_a_users_file_changed_and_nothing_when_none():
    lines = source_lines(SOURCES, list(pipeline.catalog().columns), {"hbm_capacity"})
    assert lines[2].endswith("2023-03  (overridden by a --hardware file)")
    without_per = source_lines(SOURCES.drop(columns="per"), [])  # every divisor is the basis's
    assert [line for line in without_per if "÷" in line][1].split()[-2:] == ["2", "2024-05"]
    assert source_lines(SOURCES.iloc[:0], []) == []


def test_a_chips_source_text_is_wrapped_under_its_column():
    row = pd.Series({"peak_bf16": 1e14, "source": "word " * 40})
    lines = chip_lines("x", row)
    assert lines[2].startswith("source            word word")
    assert lines[3].startswith(" " * 18 + "word") and len(lines) == 5  # 200 characters: 3 lines
    assert all(len(line) <= 100 for line in lines)
    assert len(chip_lines("x", row, raw=True)) == 3  # as stored: one line
