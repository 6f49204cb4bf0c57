"""How a results column's values are compared between two runs and shown (pipeline.model.
changes): numbers as floats (NaN for missing), flags and text as text ('' for missing), the
same for a column read back from CSV or Parquet; text columns compared by their few distinct
values (codes), so only the rows that differ become strings; each value shown exactly
(`exact`: 8756, 8.2e11, bf16)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from pipeline.errors import InvalidResults, quoted
from pipeline.model.dtypes import DTYPE_COLUMNS

# the inputs a scenario's result depends on, besides its dims (single capital letters)
FIRST_CAUSES = ("model",)  # said before the dims it sets (a transformer step's shape)
CAUSES = (
    *FIRST_CAUSES, "kv_dtype", "count", "group", "calibration",
    "op", "einsum", "bytes", "hardware",
    *DTYPE_COLUMNS,
    "chips", "shard", "link",
    "compute_efficiency", "hbm_efficiency", "network_efficiency",
    "peak_flops", "hbm_bandwidth", "link_bandwidth", "link_latency",
    "tdp", "usd_per_chip_hour",
)  # fmt: skip
NUMBERS = ("critical_batch", "t_lower", "t_estimate", "cost", "energy")  # compared as numbers
# what a missing cell may read as (Arrow's CSV reader takes the same texts for a null)
_MISSING = ("", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
            "1.#QNAN", "N/A", "NA", "NULL", "NaN", "n/a", "nan", "null")  # fmt: skip
_FLAGS = {"true": True, "false": False}
_KIND = {"fits": ("True or False", "True, False or empty"),
         "t_lower": ("a number", "a time in seconds, or empty"),
         "critical_batch": ("a number", "a batch size, or empty"),
         "t_estimate": ("a number", "a time in seconds, or empty"),
         "cost": ("a number", "US dollars, or empty"),
         "energy": ("a number", "joules, or empty")}  # fmt: skip


def exact(value) -> str:
    """One value as exact, compact text: 8756, 8.2e11, 0.9, bf16; '' for a missing one."""
    if isinstance(value, str):
        return value
    if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
        return ""
    v = float(value)
    if v.is_integer() and abs(v) < 1e6:
        return str(int(v))
    if 1e-3 <= abs(v) < 1e6:
        return repr(v)
    return np.format_float_scientific(v, unique=True, trim="-").replace("e+", "e")


def exact_texts(values: np.ndarray) -> np.ndarray:
    """Each value as exact(), each distinct value formatted once."""
    if values.size == 0:
        return values.astype(object)
    codes, uniques = pd.factorize(values, use_na_sentinel=False)
    return np.array([exact(u) for u in uniques], dtype=object)[codes]


def values_at(series: pd.Series, at: np.ndarray) -> np.ndarray:
    """The column's values at `at`: floats (NaN for missing) for numbers and booleans, text
    ('' for missing) otherwise; the same for a column read back from CSV or Parquet."""
    dtype = series.dtype
    if isinstance(dtype, pd.BooleanDtype) or dtype.kind == "b":
        flags = series.to_numpy(dtype=float, na_value=np.nan)[at]  # pd.NA: NaN
        words = np.array(["False", "True", ""], dtype=object)
        return words[np.where(np.isnan(flags), 2, flags == 1).astype(np.intp)]
    if dtype.kind in "iuf" or isinstance(dtype, pd.core.dtypes.dtypes.BaseMaskedDtype):
        return series.to_numpy(dtype=float, na_value=np.nan)[at]
    if isinstance(dtype, pd.CategoricalDtype):
        cats = np.append(series.cat.categories.astype(str).to_numpy(dtype=object), "")
        return cats[series.cat.codes.to_numpy()[at]]  # code -1 (missing) takes the ''
    values = series.take(at).to_numpy(dtype=object)  # only the rows asked for become objects
    missing = pd.isna(values)
    if missing.any():
        values = values.copy()
        values[missing] = ""
    return values.astype(str).astype(object) if values.size else values


def same_values(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "f" and b.dtype.kind == "f":
        return (a == b) | (np.isnan(a) & np.isnan(b))
    if a.dtype.kind == "f" or b.dtype.kind == "f":  # a column of numbers read back as text
        return exact_texts(a) == exact_texts(b)
    return a == b


def plain_text(series: pd.Series) -> bool:
    """A column of text (not numbers, flags or categories): compared by its distinct values."""
    dtype = series.dtype
    return dtype.kind in "OSU" or isinstance(dtype, pd.StringDtype)


def text_differs(a: pd.Series, a_at: np.ndarray, b: pd.Series, b_at: np.ndarray):
    """Where two text columns (taken at a_at and b_at, row for row) differ, and their values
    there: each side factorized once, its few distinct values matched by text ('' for a
    missing one), so only the differing rows become strings."""
    ids: dict[str, int] = {}
    coded = []
    for series, at in ((a, a_at), (b, b_at)):
        codes, uniques = pd.factorize(series)
        labels = [("" if u is None or u != u else str(u)) for u in uniques] + [""]
        canon = np.array([ids.setdefault(label, len(ids)) for label in labels], dtype=np.int64)
        codes = np.where(codes < 0, len(uniques), codes)[at]
        coded.append((canon[codes], np.array(labels, dtype=object)[codes]))
    (ia, ta), (ib, tb) = coded
    at = np.flatnonzero(ia != ib)
    return at, ta[at], tb[at]


def calibrated_alike(old: pd.DataFrame, new: pd.DataFrame):
    """A run with a calibration against one without: the other gets an empty estimate and
    calibration `none`, so losing (or gaining) the estimates is a change of each, caused by
    the calibration (a nightly job that forgot --calibration fails --fail-on t_estimate)."""
    has = ["t_estimate" in f.columns for f in (old, new)]
    if has[0] == has[1]:
        return old, new
    nothing = {"t_estimate": np.nan, "calibration": "none"}
    return (old, new.assign(**nothing)) if has[0] else (old.assign(**nothing), new)


def priced_alike(old: pd.DataFrame, new: pd.DataFrame):
    """A run with prices against one without: the other gets an empty cost and price, so
    losing (or gaining) the prices is a cost change of each row, caused by the price (a
    nightly job that forgot --prices fails --fail-on cost)."""
    has = ["cost" in f.columns for f in (old, new)]
    if has[0] == has[1]:
        return old, new
    nothing = {"cost": np.nan, "usd_per_chip_hour": np.nan}
    return (old, new.assign(**nothing)) if has[0] else (old.assign(**nothing), new)


def typed_results(frame: pd.DataFrame, where: Callable[[int], str]) -> pd.DataFrame:
    """`frame` with `t_lower` and `critical_batch` as numbers and `fits` as True/False/missing,
    text cells that hold them (a CSV read back) converted; InvalidResults naming the first
    cell that holds anything else (`where(i)`: how to name row i, e.g. 'the baseline X:3')."""
    fixed = {}
    for column in (*NUMBERS, "fits"):
        if column not in frame.columns or _typed(frame[column], column == "fits"):
            continue
        cells = frame[column].to_numpy(dtype=object)
        text = pd.Series(np.where(pd.notna(cells), cells, ""), dtype=object).astype(str)
        text = text.str.strip()
        missing = text.isin(_MISSING).to_numpy()
        if column == "fits":
            low = text.str.lower()
            good = missing | low.isin(_FLAGS.keys()).to_numpy()
            value = pd.array(low.map(_FLAGS).where(~missing, None), dtype="boolean")
        else:
            numbers = pd.to_numeric(text.where(~missing, None), errors="coerce")
            value = np.asarray(numbers, dtype=float)
            good = missing | ~np.isnan(value)
        bad = np.flatnonzero(~good)
        if bad.size:
            what, valid = _KIND[column]
            more = f" (and {bad.size - 1:,} more cells)" if bad.size > 1 else ""
            raise InvalidResults(
                f"{where(int(bad[0]))}: column {column}: {quoted(cells[bad[0]])} is not "
                f"{what}{more}; a results file's {column} is {valid}"
            )
        fixed[column] = value
    return frame.assign(**fixed) if fixed else frame


def _typed(series: pd.Series, flags: bool) -> bool:
    """Whether the column holds the kind it should already (numbers, or booleans for fits)."""
    dtype = series.dtype
    boolean = isinstance(dtype, pd.BooleanDtype) or dtype.kind == "b"
    if flags:
        return boolean
    numeric = dtype.kind in "iuf" or isinstance(dtype, pd.core.dtypes.dtypes.BaseMaskedDtype)
    return numeric and not boolean
