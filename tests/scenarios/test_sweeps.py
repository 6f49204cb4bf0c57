"""scenarios/sweeps.py: whole numbers read exactly up to 2^53, sweeps counted before built."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.scenarios.sweeps import (
    MAX_EXACT,
    TOO_BIG,
    Sweep,
    is_sweep,
    parse_sweep,
    parse_whole,
    whole_number_reason,
)


@pytest.mark.parametrize(
    ("text", "value"),
    [("4096", 4096), (" 4096 ", 4096), ("+7", 7), ("4096.0", 4096), ("4e3", 4000), ("0007", 7),
     (".5e1", 5), (str(MAX_EXACT), MAX_EXACT)],
)  # fmt: skip
def test_parse_whole_reads_exact_whole_numbers(text, value):
    got = parse_whole(text)
    assert got == value and isinstance(got, int)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("4k", "is not a number"),
        ("-3", "is not a number"),
        ("nan", "is not a number"),
        ("4096.0000000000001", "is not a whole number"),  # float() would round it to 4096
        ("2.5", "is not a whole number"),
        ("0", "is not positive"),
        ("0.0", "is not positive"),
        (str(MAX_EXACT + 1), TOO_BIG),
        ("1" * 40, TOO_BIG),
        ("1e300", TOO_BIG),
    ],
)
def test_parse_whole_says_why_not(text, reason):
    with pytest.raises(ValueError) as exc:
        parse_whole(text)
    assert str(exc.value) == reason
    assert whole_number_reason(text) == reason


def test_whole_number_reason_is_none_for_blank_and_whole():
    assert whole_number_reason("") is None
    assert whole_number_reason("16") is None


def test_is_sweep():
    assert is_sweep("1|2") and is_sweep("1..8") and is_sweep("1..8*2")
    assert not is_sweep("1e3") and not is_sweep("8") and not is_sweep("1.5")


@pytest.mark.parametrize(
    ("text", "sweep", "values"),
    [
        ("128|256|512", Sweep(items=(128, 256, 512)), [128, 256, 512]),
        ("4|1|4", Sweep(items=(4, 1, 4)), [4, 1, 4]),  # a list keeps its order and repeats
        ("1..5", Sweep(lo=1, hi=5), [1, 2, 3, 4, 5]),
        (" 3 .. 4 ", Sweep(lo=3, hi=4), [3, 4]),
        ("1..4096*2", Sweep(lo=1, hi=4096, factor=2), [2**k for k in range(13)]),
        ("3..100*3", Sweep(lo=3, hi=100, factor=3), [3, 9, 27, 81]),
        ("7..7", Sweep(lo=7, hi=7), [7]),
    ],
)
def test_parse_sweep_forms(text, sweep, values):
    got = parse_sweep(text)
    assert got == sweep
    assert len(got) == len(values)
    assert got.largest == max(values)
    np.testing.assert_array_equal(got.values(), np.asarray(values, dtype=float))
    assert got.values().dtype == np.float64


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("1|x", "sweep item 'x' is not a positive integer"),
        ("1|0", "sweep item '0' is not a positive integer"),
        (f"1|{MAX_EXACT + 1}", f"sweep item '{MAX_EXACT + 1}' {TOO_BIG}"),
        ("1|" + "x" * 50, "sweep item '" + "x" * 39 + "…' is not a positive integer"),
        ("1...8", "not a positive integer or a sweep (128|256, 1..512, 1..4096*2)"),
        ("a..b", "not a positive integer or a sweep (128|256, 1..512, 1..4096*2)"),
        ("8..1", "range 8..1 must go from a positive start up to its end"),
        ("0..4", "range 0..4 must go from a positive start up to its end"),
        ("1..8*1", "geometric factor 1 must be at least 2"),
        ("1..8*0", "geometric factor 0 must be at least 2"),
        (f"1..{MAX_EXACT + 1}", f"'{MAX_EXACT + 1}' {TOO_BIG}"),
    ],
)
def test_parse_sweep_says_why_not(text, reason):
    with pytest.raises(ValueError) as exc:
        parse_sweep(text)
    assert str(exc.value) == reason


def test_a_huge_range_is_counted_not_built():
    sweep = parse_sweep(f"1..{MAX_EXACT}")
    assert len(sweep) == MAX_EXACT  # arithmetic: a list this long would not fit in memory
    assert sweep.largest == MAX_EXACT
    geometric = parse_sweep(f"1..{MAX_EXACT}*2")
    assert len(geometric) == 54 and geometric.largest == MAX_EXACT
