"""results.parquet: the results frame, typed, for notebooks and downstream jobs."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq


def to_arrow(frame: pd.DataFrame) -> pa.Table:
    """The frame as Arrow: floats float64 (NaN as null), nullable Int64 as int64, booleans as
    booleans, categories and text as strings."""
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
