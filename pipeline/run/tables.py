"""results.csv, errors.csv, results.parquet and changes.csv, written by Arrow's C++ writers.

CSV format (docs/outputs.md#resultscsv): a header row, comma-separated, "\n" line ends, UTF-8.
Numbers unquoted: integers plain, floats in the shortest text that reads back to the same
double (1.97e+14, 0.5); an empty unquoted cell for none/NaN/empty text; booleans
"True"/"False"; every other text cell quoted (RFC 4180, inner quotes doubled), so a comma or
line break is always safe.

A text cell that a spreadsheet would run as a formula (one starting with = + - @, a tab or a
carriage return: OWASP's CSV injection list) is written with a leading ' so Excel shows it as
text; a cell that is a plain number ("-5", "+1.5e3") is no formula and is left as it is. A
text cell that starts with ' gets one more too, so the quote is never ambiguous: `=x` is
written `'=x` and `'=x` is written `''=x`, and `unquoted()` takes exactly one ' back off
(results.csv read back for a comparison). Only the CSV files do this: results.parquet and the
DataFrames keep every value exactly.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from pipeline.changes.compare import COLUMNS as CHANGE_COLUMNS
from pipeline.changes.compare import Changes

_OPTIONS = pacsv.WriteOptions(quoting_style="needed", batch_size=8192, include_header=False)


def _column(series: pd.Series) -> pa.Array:
    """One column as an Arrow array whose CSV rendering is the promised one (Arrow's compute
    functions and dictionaries: no Python object per cell)."""
    dtype = series.dtype
    if isinstance(dtype, pd.BooleanDtype) or dtype.kind == "b":
        flags = pa.array(series, type=pa.bool_(), from_pandas=True)
        return pc.if_else(flags, pa.scalar("True"), pa.scalar("False"))  # null stays null
    if dtype.kind == "f":
        return pa.array(series.to_numpy(dtype=float), from_pandas=True)  # NaN -> null
    if dtype.kind in "iu" or isinstance(dtype, pd.core.dtypes.dtypes.BaseMaskedDtype):
        return pa.array(series, from_pandas=True)
    if isinstance(dtype, pd.CategoricalDtype):  # the writer takes the dictionary as it is
        arr = pa.array(series, from_pandas=True)
        return pa.DictionaryArray.from_arrays(arr.indices, _empty_is_null(arr.dictionary))
    if isinstance(dtype, pd.StringDtype):
        arr = pa.array(series, type=pa.string(), from_pandas=True)
    else:
        arr = pa.array(series.astype(object).where(series.notna(), None), type=pa.string())
    return _empty_is_null(arr)


def _empty_is_null(arr: pa.Array) -> pa.Array:
    """Empty text as null: an empty, unquoted cell; a formula-leading text neutralized."""
    if pa.types.is_null(arr.type):  # a text column of no rows (every row refused): no text
        return arr
    return _neutralized(pc.if_else(pc.equal(arr, ""), pa.scalar(None, arr.type), arr))


# the first characters of a text cell a spreadsheet runs as a formula (OWASP's CSV injection
# list: = + - @, tab, carriage return), and the quote that neutralizes one
LEADS = r"=+\-@\t\r'"  # inside a regex's [...]
_FORMULA_START = f"^[{LEADS}]"
_NUMBER = r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$"


def _neutralized(arr: pa.Array) -> pa.Array:
    """Text cells a spreadsheet would run as formulas, or that start with ', prefixed with '
    (vectorized: one Arrow regex over the column; only the cells it matches are looked at
    again and rebuilt)."""
    risky = pc.match_substring_regex(arr, _FORMULA_START)
    if not pc.any(risky).as_py():
        return arr
    at = pc.indices_nonzero(risky)
    cells = arr.take(at)
    formula = pc.invert(pc.match_substring_regex(cells, _NUMBER)).to_numpy(zero_copy_only=False)
    if not formula.any():
        return arr
    mask = np.zeros(len(arr), dtype=bool)
    mask[at.to_numpy()[formula]] = True
    quote, empty = pa.scalar("'", arr.type), pa.scalar("", arr.type)  # string or large_string
    fixed = pc.binary_join_element_wise(quote, cells.filter(pa.array(formula)), empty)
    return pc.replace_with_mask(arr, pa.array(mask), fixed)


_QUOTED = f"^'[{LEADS}]"  # what _neutralized writes: ' then a formula start or a '


def unquoted(text: pd.Series) -> pd.Series:
    """A text column of a CSV written here, as it was before the quote above: one leading '
    taken off each cell the quote made (' then a formula start or a second '). A results.csv
    of an earlier version, which quoted formula starts only, reads the same way: '=x is =x
    (what it wrote for =x and, lossily, for '=x), 'abc stays 'abc; only a text that began
    with two quotes (''x) loses one."""
    quoted = text.str.match(_QUOTED, na=False)
    return text.where(~quoted, text.str.slice(1)) if quoted.any() else text


def to_table(frame: pd.DataFrame) -> pa.Table:
    """The frame as an Arrow table with CSV-ready column types."""
    return pa.table({str(c): _column(frame[c]) for c in frame.columns})


def _header(frame: pd.DataFrame) -> bytes:
    """The header row, quoted only where a name needs it."""
    buf = io.StringIO()
    names = pa.array([str(c) for c in frame.columns], type=pa.string())
    csv.writer(buf, lineterminator="\n").writerow(_neutralized(names).to_pylist())
    return buf.getvalue().encode("utf-8")


def write_csv(frame: pd.DataFrame, path: Path) -> Path:
    """Write a frame as CSV (format above); returns the path."""
    table = to_table(frame)
    with pa.OSFile(str(path), "wb") as sink:  # Arrow's own file: no Python call per block
        sink.write(_header(frame))
        if table.num_rows:
            pacsv.write_csv(table, sink, _OPTIONS)
    return Path(path)


def to_arrow(frame: pd.DataFrame) -> pa.Table:
    """The frame as Arrow for Parquet: floats float64 (NaN as null), nullable Int64 as int64,
    booleans as booleans, text as strings (categories as dictionaries of strings, which a
    Parquet file stores as its own dictionary encoding)."""
    columns = {}
    for name in frame.columns:
        series = frame[name]
        if series.dtype == object:
            arr = pa.array(series, type=pa.string(), from_pandas=True)
        else:
            arr = pa.array(series, from_pandas=True)
        columns[str(name)] = arr
    return pa.table(columns)


def write_parquet(frame: pd.DataFrame, path: Path) -> Path:
    """Write the frame as Parquet (zstd); returns the path. The Arrow schema is not stored, so
    readers see the text columns as plain strings, not dictionaries (categoricals)."""
    pq.write_table(to_arrow(frame), str(path), compression="zstd", store_schema=False)
    return Path(path)


def write_changes_csv(changes: Changes, path: Path) -> Path:
    """Write the changes table as CSV (the results.csv format, CSV-injection-safe); several
    inputs' as one (changes.compare.merge_changes) with their `input` column first."""
    columns = [*(["input"] if "input" in changes.table else []), *CHANGE_COLUMNS]
    table = changes.table.loc[:, columns]
    # text as Python strings: tables.write_csv takes an Arrow-backed "str" column as a
    # chunked array, which its formula neutralizing cannot splice
    table = table.astype({c: object for c in columns if c != "ratio"})
    return write_csv(table, Path(path))
