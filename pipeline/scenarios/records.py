"""Scenarios given in memory (a DataFrame or a list of dicts) as the reader's text table: every
cell as the text a CSV would hold, so they go through exactly the checks a file goes through."""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np
import pandas as pd
import pyarrow as pa

from pipeline.errors import ScenarioFileError, printable


def records_table(rows: pd.DataFrame | list[dict], source: str) -> tuple[pa.Table, np.ndarray]:
    """(table of text cells, line numbers): a row's line is its position + 2."""
    if isinstance(rows, pd.DataFrame):
        frame = rows
    elif isinstance(rows, list | tuple) and all(isinstance(r, dict) for r in rows):
        frame = pd.DataFrame(list(rows))
    else:
        raise ScenarioFileError(
            f"{printable(source)}: scenarios must be a path, a pandas DataFrame or a list of "
            f"dicts, not {type(rows).__name__}"
        )
    if frame.empty and len(frame.columns) == 0:
        raise ScenarioFileError(f"{printable(source)}: no columns and no scenario rows")
    if len(frame) == 0:
        raise ScenarioFileError(
            f"{printable(source)}: a header but no scenario rows: nothing to compute"
        )
    names = [str(c) for c in frame.columns]
    columns = {
        f"c{i}": pa.array(_texts(frame.iloc[:, i]), type=pa.string()) for i in range(len(names))
    }
    table = pa.table(columns).rename_columns(names)
    return table, np.arange(2, len(frame) + 2, dtype=np.int64)


def _texts(column: pd.Series) -> list[str]:
    """Each value as a CSV cell would hold it: missing is empty, a float as repr() writes it
    (8.0, which the checks read as the whole number 8)."""
    return [_text(v) for v in column.tolist()]


def _text(value) -> str:
    if value is None or value is pd.NA or value is pd.NaT:
        return ""
    if isinstance(value, bool | np.bool_):
        return str(bool(value))
    if isinstance(value, Integral):
        return str(int(value))
    if isinstance(value, Real):
        v = float(value)
        if math.isnan(v):
            return ""
        return repr(v)
    return str(value)
