"""scenarios/coded.py: columns as codes into their distinct values, each worked on once."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

from pipeline.scenarios.coded import Col, combine
from tests.helpers import coded


def test_from_arrow_codes_each_distinct_cell_once_stripped():
    chunked = pa.chunked_array([["v5e", " h100"], ["v5e", "h100 ", ""]], type=pa.string())
    col = Col.from_arrow(chunked)
    assert col.codes.dtype == np.intp
    np.testing.assert_array_equal(col.values(), ["v5e", "h100", "v5e", "h100", ""])
    # the dictionary keeps the raw spellings apart; each is stripped once
    assert sorted(col.uniques.tolist()) == ["", "h100", "h100", "v5e"]
    assert col.at(1) == "h100" and col.at(4) == ""


def test_blank_is_one_empty_value():
    col = Col.blank(3)
    np.testing.assert_array_equal(col.values(), ["", "", ""])
    assert col.is_("").all()


def test_derive_runs_once_per_distinct_value():
    col = coded("a", "b", "a", "a", "b")
    calls = []
    upper = col.derive(lambda u: calls.append(u) or u.upper())
    assert sorted(calls) == ["a", "b"]
    np.testing.assert_array_equal(upper.values(), ["A", "B", "A", "A", "B"])
    lengths = col.derive(len, dtype=float)
    assert lengths.uniques.dtype == float


def test_per_row_and_is_():
    col = coded("x", "y", "x")
    flags = np.array([u == "y" for u in col.uniques])
    np.testing.assert_array_equal(col.per_row(flags), [False, True, False])
    np.testing.assert_array_equal(col.is_("x"), [True, False, True])
    maybe = col.derive(lambda u: None if u == "y" else u)
    np.testing.assert_array_equal(maybe.is_(None), [False, True, False])


def test_categorical_from_the_codes():
    col = coded("v6e", "h100", "v6e", "a100")
    cat = col.categorical()
    assert isinstance(cat, pd.Categorical)
    assert list(cat.categories) == ["a100", "h100", "v6e"]  # sorted
    assert list(cat) == ["v6e", "h100", "v6e", "a100"]


def test_combine_once_per_combination_that_occurs():
    a = coded("x", "x", "y", "x", "y")
    b = coded("1", "2", "1", "1", "1")
    calls = []
    both = combine(lambda u, v: calls.append((u, v)) or u + v, a, b)
    assert sorted(calls) == [("x", "1"), ("x", "2"), ("y", "1")]  # (y, 2) never occurs
    np.testing.assert_array_equal(both.values(), ["x1", "x2", "y1", "x1", "y1"])
    three = combine(lambda u, v, w: f"{u}{v}{w}", a, b, coded("p", "p", "q", "p", "p"))
    np.testing.assert_array_equal(three.values(), ["x1p", "x2p", "y1q", "x1p", "y1p"])
    flags = combine(lambda u, v: v == "2", a, b, dtype=bool)
    assert flags.uniques.dtype == bool
    np.testing.assert_array_equal(flags.values(), [False, True, False, False, False])


def test_combine_of_many_distinct_values_sorts_instead_of_a_table():
    n = 3000  # 3,000 x 3,000 combinations: past the dense look-up table's 2^22
    a = Col.from_arrow(pa.array([str(i) for i in range(n)]))
    b = Col.from_arrow(pa.array([str(n - i) for i in range(n)]))
    summed = combine(lambda u, v: int(u) + int(v), a, b, dtype=np.int64)
    assert len(summed.uniques) == n  # one per row: every combination is new
    assert (summed.values() == n).all()
