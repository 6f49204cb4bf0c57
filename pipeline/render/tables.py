"""results.csv, errors.csv and results.parquet, written by Arrow's C++ writers.

CSV format (docs/outputs.md#resultscsv): a header row, comma-separated, "\n" line ends, UTF-8.
Numbers unquoted: integers plain, floats in the shortest text that reads back to the same
double (1.97e+14, 0.5); an empty unquoted cell for none/NaN/empty text; booleans
"True"/"False"; every other text cell quoted (RFC 4180, inner quotes doubled), so a comma or
line break is always safe.
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

_OPTIONS = pacsv.WriteOptions(quoting_style="needed", batch_size=1 << 16, include_header=False)


def _column(series: pd.Series) -> pa.Array:
    """One column as an Arrow array whose CSV rendering is the promised one."""
    dtype = series.dtype
    if isinstance(dtype, pd.BooleanDtype) or dtype.kind == "b":
        values = series.astype("boolean")
        text = np.where(values.isna(), None, np.where(values.fillna(False), "True", "False"))
        return pa.array(text, type=pa.string())
    if dtype.kind == "f":
        return pa.array(series.to_numpy(dtype=float), from_pandas=True)  # NaN -> null
    if dtype.kind in "iu" or isinstance(dtype, pd.core.dtypes.dtypes.BaseMaskedDtype):
        return pa.array(series, from_pandas=True)
    if isinstance(dtype, pd.CategoricalDtype):
        arr = pc.cast(pa.array(series, from_pandas=True), pa.string())
    elif isinstance(dtype, pd.StringDtype):
        arr = pa.array(series, type=pa.string(), from_pandas=True)
    else:
        arr = pa.array(series.astype(object).where(series.notna(), None), type=pa.string())
    return pc.if_else(pc.equal(arr, ""), pa.scalar(None, pa.string()), arr)  # "" -> empty cell


def to_table(frame: pd.DataFrame) -> pa.Table:
    """The frame as an Arrow table with CSV-ready column types."""
    return pa.table({str(c): _column(frame[c]) for c in frame.columns})


def _header(frame: pd.DataFrame) -> bytes:
    """The header row, quoted only where a name needs it."""
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow([str(c) for c in frame.columns])
    return buf.getvalue().encode("utf-8")


def write_csv(frame: pd.DataFrame, path: Path) -> Path:
    """Write a frame as CSV (format above); returns the path."""
    table = to_table(frame)
    with open(path, "wb") as fh:
        fh.write(_header(frame))
        if table.num_rows:
            pacsv.write_csv(table, fh, _OPTIONS)
    return Path(path)


def format_csv(frame: pd.DataFrame) -> bytes:
    """The CSV bytes for a frame, as write_csv writes them."""
    sink = pa.BufferOutputStream()
    table = to_table(frame)
    if table.num_rows:
        pacsv.write_csv(table, sink, _OPTIONS)
    return _header(frame) + sink.getvalue().to_pybytes()


def to_arrow(frame: pd.DataFrame) -> pa.Table:
    """The frame as Arrow for Parquet: floats float64 (NaN as null), nullable Int64 as int64,
    booleans as booleans, categories and text as strings."""
    columns = {}
    for name in frame.columns:
        series = frame[name]
        if isinstance(series.dtype, pd.CategoricalDtype):  # cast by Arrow, no Python objects
            arr = pc.cast(pa.array(series, from_pandas=True), pa.string())
        elif series.dtype == object:
            arr = pa.array(series, type=pa.string(), from_pandas=True)
        else:
            arr = pa.array(series, from_pandas=True)
        columns[str(name)] = arr
    return pa.table(columns)


def write_parquet(frame: pd.DataFrame, path: Path) -> Path:
    """Write the frame as Parquet (zstd); returns the path."""
    pq.write_table(to_arrow(frame), str(path), compression="zstd")
    return Path(path)
