"""Fast, exact CSV writing with pyarrow compute (results.csv, errors.csv).

Format (DESIGN §6): header row, comma-separated, "\n" line ends; floats in the shortest text
that reads back to the same double; booleans True/False; integers plain; an empty cell for
none/NaN; a text cell is quoted only when it holds a comma, quote or line break (RFC 4180).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

_SPECIAL = r'[",\r\n]'


def _quote(arr: pa.Array) -> pa.Array:
    """Quote the cells that need it, doubling inner quotes."""
    needs = pc.match_substring_regex(arr, _SPECIAL)
    q = pa.scalar('"', arr.type)
    quoted = pc.binary_join_element_wise(
        q, pc.replace_substring(arr, '"', '""'), q, pa.scalar("", arr.type)
    )
    return pc.if_else(needs, quoted, arr)


def _cell_text(series: pd.Series) -> pa.Array:
    """One column as CSV cell text (large_string, no nulls)."""
    kind = series.dtype.kind if not isinstance(series.dtype, pd.BooleanDtype) else "b"
    if isinstance(series.dtype, pd.BooleanDtype) or kind == "b":
        values = series.astype("boolean")
        text = np.where(values.isna(), "", np.where(values.fillna(False), "True", "False"))
        return pa.array(text, type=pa.large_string())
    if kind == "f":
        arr = pa.array(series.to_numpy(dtype=float), from_pandas=True)  # NaN -> null
        return pc.fill_null(pc.cast(pc.cast(arr, pa.string()), pa.large_string()), "")
    if kind in "iu" or isinstance(series.dtype, pd.Int64Dtype):
        arr = pa.array(series, from_pandas=True)
        return pc.fill_null(pc.cast(arr, pa.large_string()), "")
    arr = pa.array(series.astype(object).where(series.notna(), ""), type=pa.large_string())
    return _quote(arr)


def format_csv(frame: pd.DataFrame) -> bytes:
    """The CSV bytes for a frame (header included)."""
    header = ",".join(_quote(pa.array([str(c) for c in frame.columns])).to_pylist()) + "\n"
    if len(frame) == 0:
        return header.encode("utf-8")
    cells = [_cell_text(frame[c]) for c in frame.columns]
    comma = pa.scalar(",", pa.large_string())
    joined = pc.binary_join_element_wise(*cells, comma)
    lines = pc.binary_join_element_wise(
        joined, pa.scalar("\n", pa.large_string()), pa.scalar("", pa.large_string())
    )
    lines = lines.combine_chunks() if isinstance(lines, pa.ChunkedArray) else lines
    offsets = np.frombuffer(lines.buffers()[1], dtype=np.int64)
    start, end = offsets[lines.offset], offsets[lines.offset + len(lines)]
    body = memoryview(lines.buffers()[2])[start:end]
    return header.encode("utf-8") + bytes(body)


def write_csv(frame: pd.DataFrame, path: Path) -> Path:
    """Write a frame as CSV (format above); returns the path."""
    Path(path).write_bytes(format_csv(frame))
    return Path(path)
