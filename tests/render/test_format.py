"""The one number formatter: what each quantity reads as (three significant digits, the unit
chosen), that the text reads back as the value, the boundaries between units, and that the
workbook's Excel formats pick the same units."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest

from pipeline.render import format as fmt

# written out here, not taken from format.py: the SI prefixes as people read them
PREFIX = {"E": 1e18, "P": 1e15, "T": 1e12, "G": 1e9, "M": 1e6, "k": 1e3, "": 1.0,
          "m": 1e-3, "\u00b5": 1e-6, "n": 1e-9, "p": 1e-12}  # fmt: skip
UP, DOWN = ["E", "P", "T", "G", "M", "k", ""], ["", "m", "\u00b5", "n", "p"]
SCALED = {  # formatter, unit, the prefixes it chooses from, largest first
    "seconds": (fmt.seconds, "s", DOWN),
    "flop_rate": (fmt.flop_rate, "FLOP/s", UP),
    "flops": (fmt.flops, "FLOP", UP),
    "size": (fmt.size, "B", UP),
    "bandwidth": (fmt.bandwidth, "B/s", UP),
}
VALUES = np.geomspace(1.3e-13, 7.7e20, 1500)  # every unit, many positions within each


def read_back(text: str, unit: str) -> tuple[float, float, str]:
    """'1.01 ms' -> (1.011e-3 as written, 1.01, 'm')."""
    m = re.fullmatch(rf"(-?)([\d,]+(?:\.\d+)?) (\S?){re.escape(unit)}", text)
    assert m, text
    shown = float(m[2].replace(",", ""))
    return (-1 if m[1] else 1) * shown * PREFIX[m[3]], shown, m[3]


@pytest.mark.parametrize("kind", SCALED)
def test_scaled_text_reads_back_within_three_significant_digits(kind):
    format_, unit, prefixes = SCALED[kind]
    values = VALUES if prefixes is DOWN else VALUES[VALUES >= 1]  # no bytes below one
    for v in [*values, *-values[::50]]:
        text = format_(v)
        value, shown, prefix = read_back(text, unit)
        assert math.isclose(value, v, rel_tol=5e-3), (v, text)
        if 1 <= shown < 1000:  # the largest prefix that keeps it >= 1: three digits
            assert len(re.sub(r"\D", "", text.split()[0]).lstrip("0")) == 3, text
        else:  # beyond the prefixes: more digits at the largest, fewer at the smallest
            assert prefix == (prefixes[0] if shown >= 1000 else prefixes[-1]), text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (999.4, "999 B"),
        (999.6, "1.00 kB"),  # rounded first: never '1000 B'
        (1e3, "1.00 kB"),
        (9.995e8, "1.00 GB"),
        (1.6e10, "16.0 GB"),
        (1.5e21, "1,500 EB"),  # past the largest prefix: more digits, no new unit
        (0, "0 B"),
        (-2.5e6, "-2.50 MB"),
        (float("inf"), "\u221e"),
    ],
)
def test_unit_boundaries(value, text):
    assert fmt.size(value) == text


def test_times_go_down_to_picoseconds_and_up_to_seconds():
    assert [fmt.seconds(v) for v in (3600, 1.5, 0.9996, 1.011e-3, 2.05e-5, 1.02e-8, 3e-13)] == [
        "3,600 s", "1.50 s", "1.00 s", "1.01 ms", "20.5 \u00b5s", "10.2 ns", "0.3 ps"
    ]  # fmt: skip


def test_axis_labels_drop_trailing_zeros_only():
    assert [fmt.flop_rate(v, trim=True) for v in (5e13, 2.5e14, 1.5e12, 1.01e12)] == [
        "50 TFLOP/s", "250 TFLOP/s", "1.5 TFLOP/s", "1.01 TFLOP/s"
    ]  # fmt: skip
    assert fmt.flop_rate(5e13) == "50.0 TFLOP/s"


@pytest.mark.parametrize(
    "format_",
    [fmt.seconds, fmt.flop_rate, fmt.flops, fmt.size, fmt.bandwidth, fmt.percent, fmt.number,
     fmt.count, fmt.ratio],
)  # fmt: skip
@pytest.mark.parametrize("value", [None, float("nan"), pd.NA, np.nan])
def test_a_missing_value_is_a_dash(format_, value):
    assert format_(value) == fmt.DASH
    assert fmt.sort_key(value) == ""


def test_numbers_keep_three_significant_digits_and_read_back():
    for v in [*VALUES[300:], *-VALUES[300::40]]:  # 1e-7 and up
        text = fmt.number(v)
        back = float(text.replace(",", ""))
        assert math.isclose(back, v, rel_tol=5e-3), (v, text)
        if abs(v) < 1:  # written out with trailing zeros: 0.500, not 0.5
            assert len(text.lstrip("-0.")) == 3, text
    assert [fmt.number(v) for v in (0, 0.5, 2.0, 238.25, 4377.8, 1e6, float("inf"))] == [
        "0", "0.500", "2.00", "238", "4,378", "1,000,000", "\u221e"
    ]  # fmt: skip
    assert fmt.ratio(1.847) == "1.85\u00d7"


def test_percent_reads_back_with_one_decimal_except_0_and_100():
    for f in np.linspace(0, 1, 1001)[1:-1]:
        text = fmt.percent(f)
        assert re.fullmatch(r"\d+\.\d%", text), text
        assert abs(float(text[:-1]) / 100 - f) <= 0.0005 + 1e-12
    assert (fmt.percent(0), fmt.percent(1.0), fmt.percent(0.64637)) == ("0%", "100%", "64.6%")


def test_counts_are_exact_for_integers_and_rounded_for_floats():
    assert fmt.count(1035) == "1,035" and fmt.count(np.int64(1035)) == "1,035"
    assert fmt.count(2**62 + 1) == "4,611,686,018,427,387,905"  # no float in between
    assert [fmt.count(v) for v in (2.4, 2.6, 1234.5, 1e6)] == ["2", "3", "1,234", "1,000,000"]


def test_chart_labels():
    assert [fmt.tick(v) for v in (0.01, 0.5, 1.0, 1000.0, 99999.0, 1e5, 1e12)] == [
        "0.01", "0.5", "1", "1,000", "99,999", "1e5", "1e12"
    ]  # fmt: skip
    assert [fmt.rounded(v) for v in (0.5, 8.755, 9.999, 10.0, 240.6, 8755.1)] == [
        "0.5", "8.76", "10", "10", "241", "8,755"
    ]  # fmt: skip


def test_fixed_units_for_columns():
    assert fmt.fixed(1.97e14, 1e12, 1) == "197.0"
    assert fmt.fixed(8.2e11, 1e9) == "820"
    assert fmt.fixed(0.004999, decimals=2) == "0.00"


def test_sort_keys_keep_the_order_of_the_values():
    values = np.sort(np.concatenate([VALUES, -VALUES, [0.0]]))
    keys = [float(fmt.sort_key(v)) for v in values]
    assert keys == sorted(keys)
    assert all(math.isclose(k, v, rel_tol=1e-4) for k, v in zip(keys, values, strict=True))


def test_when_is_utc_only():
    assert fmt.when("2026-01-01T00:00:00+00:00") == "2026-01-01 00:00:00 UTC"
    assert fmt.when("2026-01-01T00:00:00+02:00") == "2026-01-01T00:00:00+02:00"  # not UTC
    assert fmt.when("2026-01-01T00:00:00") == "2026-01-01T00:00:00"  # no zone: not said UTC
    assert fmt.when("yesterday") == "yesterday"


def test_plural():
    assert [fmt.plural(n, "row") for n in (0, 1, 2, 1035)] == [
        "0 rows", "1 row", "2 rows", "1,035 rows"
    ]  # fmt: skip


def test_counted_takes_the_one_or_the_many_text():
    assert [fmt.counted(n, "{n} chip", "{n} chips") for n in (0, 1, 1035)] == [
        "0 chips", "1 chip", "1,035 chips"
    ]  # fmt: skip


def test_a_span_is_one_value_when_its_ends_are_equal():
    assert fmt.span(137, 227) == "137 \u2013 227"
    assert fmt.span(1024, 1024) == "1,024"
    assert fmt.span(1e-3, 2e-3, fmt.seconds) == "1.00 ms \u2013 2.00 ms"


EXCEL_SECTION = re.compile(r'(?:\[>=(\d+)\])?#,##0(?:\.0+)?(,*)"\s*(\S?)([A-Za-z/]+)"')


@pytest.mark.parametrize(("quantity", "unit"), [("flop_rate", "FLOP/s"), ("flops", "FLOP"),
                                                ("size", "B"), ("bandwidth", "B/s")])  # fmt: skip
def test_excel_formats_scale_like_the_formatter(quantity, unit):
    """Each section of a workbook format divides by the factor of the prefix it writes (a
    trailing comma is / 1,000), and from its threshold up the report writes the same unit."""
    sections = EXCEL_SECTION.findall(fmt.EXCEL[quantity])
    assert len(sections) == fmt.EXCEL[quantity].count(";") + 1, fmt.EXCEL[quantity]
    for threshold, commas, prefix, written in sections:
        assert written == unit
        assert 1000 ** len(commas) == PREFIX[prefix]
        if threshold:
            assert int(threshold) == PREFIX[prefix]
            for v in (int(threshold), int(threshold) * 999):
                assert read_back(SCALED[quantity][0](v), unit)[2] == prefix
