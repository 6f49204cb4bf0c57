"""changes/values.py: a column's values as two runs' comparison reads them, the same
whether the column came from memory, CSV or Parquet; text compared by its distinct values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.changes.values import exact, exact_texts, plain_text, text_differs, values_at


def test_exact_text():
    assert [exact(v) for v in (8756, 8.2e11, 0.9, 1.5e-7, np.nan, "bf16")] == [
        "8756", "8.2e11", "0.9", "1.5e-07", "", "bf16",
    ]  # fmt: skip
    assert exact_texts(np.array([8.2e11, 8.2e11, 1.0])).tolist() == ["8.2e11", "8.2e11", "1"]


@pytest.mark.parametrize("dtype", [object, "str", "string"])
def test_text_columns_differ_where_their_values_do_whatever_their_dtype(dtype):
    old = pd.Series(["bf16", "fp8", None, "int8", "bf16"], dtype=dtype)
    new = pd.Series(["int8", "bf16", "fp8", "", "bf16"], dtype=dtype)
    assert plain_text(old) and plain_text(new)
    at, a, b = text_differs(old, np.array([0, 1, 2, 4]), new, np.array([1, 2, 3, 4]))
    # rows: bf16|bf16 same, fp8|fp8 same, missing|'' same, bf16|bf16 same
    assert at.tolist() == [] and len(a) == len(b) == 0
    at, a, b = text_differs(old, np.array([0, 3, 2]), new, np.array([0, 1, 2]))
    assert at.tolist() == [0, 1, 2]
    assert a.tolist() == ["bf16", "int8", ""] and b.tolist() == ["int8", "bf16", "fp8"]


def test_values_as_compared():
    flags = pd.Series([True, None, False], dtype="boolean")
    assert values_at(flags, np.array([2, 1, 0])).tolist() == ["False", "", "True"]
    numbers = pd.Series([1.5, None], dtype="Float64")
    assert (
        np.isnan(values_at(numbers, np.array([1])))[0]
        and values_at(numbers, np.array([0]))[0] == 1.5
    )
    text = pd.Series(["a", None, "c"], dtype="str")
    assert values_at(text, np.array([2, 1])).tolist() == ["c", ""]
    cats = pd.Series(pd.Categorical(["x", None]))
    assert values_at(cats, np.array([1, 0])).tolist() == ["", "x"]
    assert not plain_text(numbers) and not plain_text(flags) and plain_text(cats)  # by codes
