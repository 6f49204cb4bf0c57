"""The shape of a scenario or a series in words: its dims as its op names them, a dim whose
values vary as its range ('B=1..512 D=4096 F=4096'); '' for custom and collective ops, which
have no dims (their size is their FLOPs and bytes, or a collective's V: summary.series). One
builder for a row (the report's scenario tables) and a series (its line over the whole run,
from the ranges summary.series keeps of its dims)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.model.ops import is_dim, parse_op


def shape_texts(einsum: pd.Series, low: pd.DataFrame, high: pd.DataFrame):
    """Per item (a row, or a series), from its einsum and the lowest and highest value of
    each dim column over it: 'D=4096' where they agree, 'B=1..512' where not; a dim the item
    has no value of is left out. Built per distinct einsum, a column at a time, in Arrow (no
    Python string per item: a nightly run has a million series); a text column."""
    codes, einsums = pd.factorize(pd.Series(einsum).astype(str))
    parts, where = [], []
    for k, text in enumerate(einsums):
        if len(einsums) > 1:
            at = np.flatnonzero(codes == k)
            lo, hi = low.iloc[at], high.iloc[at]
        else:  # one op for every item (a nightly's million series): no copy
            at, lo, hi = np.arange(len(codes)), low, high
        pieces = [_piece(d, lo[d], hi[d]) for d in _dims_of(text) if d in lo]
        joined = (
            pc.binary_join_element_wise(*pieces, " ", null_handling="skip")
            if pieces
            else pa.nulls(len(at), pa.string())
        )
        parts.append(pc.fill_null(joined, ""))
        where.append(at)
    if len(parts) <= 1:
        return pd.array(parts[0] if parts else [], dtype="str")
    order = np.empty(len(codes), dtype=np.int64)
    order[np.concatenate(where)] = np.arange(len(codes))
    return pd.array(pa.concat_arrays(parts).take(pa.array(order)), dtype="str")


def _piece(d: str, low: pd.Series, high: pd.Series) -> pa.Array:
    """'D=4096' where low and high agree, 'B=1..512' where not, null where missing."""
    low, high = (_whole(v) for v in (low, high))
    a = pc.cast(pa.array(low.array), pa.string())
    one = pc.binary_join_element_wise(d + "=", a, "")
    same = low.to_numpy(np.int64, na_value=0) == high.to_numpy(np.int64, na_value=0)
    if same.all():  # rows, or series of one row each: no range to say
        return one
    both = pc.binary_join_element_wise(
        d + "=", a, "..", pc.cast(pa.array(high.array), pa.string()), ""
    )
    return pc.if_else(pa.array(same), one, both)


def row_shapes(rows: pd.DataFrame):
    """Each row's shape: 'B=128 D=4096 F=4096'."""
    dims = [c for c in rows.columns if is_dim(c)]
    return shape_texts(rows["einsum"], rows[dims], rows[dims])


def series_shapes(lines: pd.DataFrame):
    """Each series line's shape over its whole run (summary.series: its dims' `<dim>_min` and
    `<dim>_max`), a swept dim as its range: 'B=1..512 D=4096 F=4096'."""
    dims = range_dims(lines)
    low = pd.DataFrame({d: lines[f"{d}_min"].array for d in dims}, index=lines.index)
    high = pd.DataFrame({d: lines[f"{d}_max"].array for d in dims}, index=lines.index)
    return shape_texts(lines["einsum"], low, high)


def range_dims(table: pd.DataFrame) -> list[str]:
    """The dims whose range a series table holds (its `<dim>_min` columns), in order."""
    return [c[0] for c in table.columns if isinstance(c, str) and _RANGE.match(c)]


_RANGE = re.compile(r"^[A-Z]_min$")


def _whole(values: pd.Series) -> pd.Series:
    """Whole numbers (Int64: NA where missing)."""
    if values.dtype == "Int64":
        return values
    return pd.to_numeric(values, errors="coerce").astype("Int64")


def _dims_of(einsum: str) -> str:
    """The op's dims in order of first appearance ('' for no einsum)."""
    if not einsum:
        return ""
    try:
        return parse_op(einsum).dims
    except ValueError:
        return ""
