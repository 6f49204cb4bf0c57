"""How a value is written, one rule shared by the statistics and the renderers: a row's dtypes as
one label, and the shape of a row or a series ('B=1..512 D=4096 F=4096'). Words only: no fact
of a run is worked out here (summary/ reduces, render/ shows; both word with these)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.model.dtypes import DTYPES, wider_dtype
from pipeline.model.ops import is_dim, parse_op


def dtype_labels(x, y, out, compute) -> np.ndarray:
    """The one label of a row's dtypes: 'bf16' when operands and output agree, else
    'bf16 × int8 → bf16'; ', fp32 compute' added when the compute dtype is not the default
    (the wider of X and Y, docs/input.md#dtypes). Built once per distinct combination, found
    with integer codes (no Python string per row)."""
    key = None
    parts = []
    for column in (x, y, out, compute):
        codes, uniques = pd.factorize(pd.Series(column), use_na_sentinel=False)
        parts.append((codes, [str(u) for u in uniques]))
        # renumbered densely at each step: the key stays below rows x distinct values
        key = codes if key is None else pd.factorize(key * len(uniques) + codes)[0]
    if key is None or not len(key):
        return np.array([], dtype=object)
    combos, first = np.unique(key, return_index=True)
    labels = []
    for at in first.tolist():
        xd, yd, od, cd = (names[codes[at]] for codes, names in parts)
        text = xd if xd == yd == od else f"{xd} \u00d7 {yd} \u2192 {od}"
        default = wider_dtype(xd, yd) if xd in DTYPES and yd in DTYPES else ""
        labels.append(text if cd == default else f"{text}, {cd} compute")
    return np.asarray(labels, dtype=object)[np.searchsorted(combos, key)]


def shape_texts(einsum: pd.Series, low: pd.DataFrame, high: pd.DataFrame):
    """Per item (a row, or a series), from its einsum and the lowest and highest value of
    each dim column over it: 'D=4096' where they agree, 'B=1..512' where not; a dim the item
    has no value of is left out; '' for custom and collective ops, which have no dims (their
    size is their FLOPs and bytes, or a collective's V). Built per distinct einsum, a column
    at a time, in Arrow (no Python string per item: a nightly run has a million series)."""
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


def row_shapes(rows: pd.DataFrame):
    """Each row's shape: 'B=128 D=4096 F=4096'."""
    dims = [c for c in rows.columns if is_dim(c)]
    return shape_texts(rows["einsum"], rows[dims], rows[dims])


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
