"""scenarios/numbers.py: a number column parsed once per distinct cell, NaN for blank or bad,
a bad one said (in the rows asked) with what would be valid."""

from __future__ import annotations

import numpy as np

from pipeline.scenarios.numbers import parse_numbers
from pipeline.scenarios.sweeps import TOO_BIG
from tests.helpers import coded

NAN = np.nan


def test_parse_numbers_positive_floats_bad_ones_only_in_rows():
    col = coded("1e12", "", "0", "-1", "x", "inf", "2.5")
    rows = np.array([True, True, True, True, False, True, True])
    nums, found = parse_numbers(col, "flops", rows=rows, what="a positive total")
    np.testing.assert_array_equal(nums.values(), [1e12, NAN, NAN, NAN, NAN, NAN, 2.5])
    assert found == [
        (2, "flops", "'0' is not a positive total"),
        (3, "flops", "'-1' is not a positive total"),
        (5, "flops", "'inf' is not a positive total"),
    ]  # row 4 is not among `rows`


def test_parse_numbers_whole_numbers_exactly():
    col = coded("4", "", "1.5", "4.0", "99999999999999999999")
    nums, found = parse_numbers(col, "chips", integer=True, what="a whole number of chips")
    np.testing.assert_array_equal(nums.values(), [4, NAN, NAN, 4, NAN])
    assert found == [
        (2, "chips", "'1.5' is not a whole number of chips"),
        (4, "chips", f"'99999999999999999999' {TOO_BIG}"),
    ]
