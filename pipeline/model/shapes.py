"""The shape of a scenario or a series in words: its dims as its op names them, a dim whose
values vary as its range ('B=1..512 D=4096 F=4096'); '' for custom and collective ops, which
have no dims (their size is their FLOPs and bytes, series_sizes, or a collective's V). One
builder for a row (the report's scenario tables) and a series (its line, its sweep block)."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from pipeline.model.ops import is_dim, parse_op


def shape_texts(einsum: pd.Series, low: pd.DataFrame, high: pd.DataFrame) -> np.ndarray:
    """Per item (a row, or a series' rows), from its einsum and the lowest and highest
    value of each dim column over it: 'D=4096' where they agree, 'B=1..512' where not; a dim
    the item has no value of is left out. Built per distinct einsum, a column at a time."""
    out = np.full(len(einsum), "", dtype=object)
    codes, einsums = pd.factorize(einsum.astype(str))
    for k, text in enumerate(einsums):
        at = np.flatnonzero(codes == k)
        parts = np.full(len(at), "", dtype=object)
        for d in _dims_of(text):
            if d not in low.columns:
                continue
            a, b = (_whole(frame[d].iloc[at]) for frame in (low, high))
            piece = np.where(a == b, d + "=" + a, d + "=" + a + ".." + b)
            piece = np.where(a == "", "", piece).astype(object)
            gap = np.where((parts != "") & (piece != ""), " ", "")
            parts = parts + gap + piece
        out[at] = parts
    return out


def row_shapes(rows: pd.DataFrame) -> np.ndarray:
    """Each row's shape: 'B=128 D=4096 F=4096'."""
    dims = [c for c in rows.columns if is_dim(c)]
    return shape_texts(rows["einsum"], rows[dims], rows[dims])


def series_shapes(results: pd.DataFrame, series: Iterable) -> dict[str, str]:
    """The shape of each of `series` (a few: the ones a table shows) over its rows, a
    swept dim as its range: 'B=1..512 D=4096 F=4096'."""
    wanted = results["series"].astype(str).isin(list(series)).to_numpy(dtype=bool)
    rows = results[wanted]
    if rows.empty:
        return {}
    key = rows["series"].astype(str)
    dims = [c for c in rows.columns if is_dim(c)]
    grouped = rows.groupby(key, sort=False)
    low, high = grouped[dims].min(), grouped[dims].max()  # one per shown series, not per row
    einsum = grouped["einsum"].first()
    texts = shape_texts(einsum, low, high)
    return dict(zip(low.index.astype(str), texts.tolist(), strict=True))


def series_sizes(results: pd.DataFrame, series: Iterable) -> pd.DataFrame:
    """The size of each of `series` (a few: the ones a table shows) as its rows give it, for
    an op without dims (a custom op's FLOPs and HBM bytes): flops_min, flops_max,
    hbm_bytes_min and hbm_bytes_max over its rows, indexed by series."""
    columns = ["flops", "hbm_bytes"]
    wanted = results["series"].astype(str).isin(list(series)).to_numpy(dtype=bool)
    rows = results[wanted]
    grouped = rows.groupby(rows["series"].astype(str), sort=False)[columns]
    low, high = grouped.min(), grouped.max()
    return pd.concat([low.add_suffix("_min"), high.add_suffix("_max")], axis=1)[
        ["flops_min", "flops_max", "hbm_bytes_min", "hbm_bytes_max"]
    ]


def _whole(values: pd.Series) -> np.ndarray:
    """Whole numbers as text, '' where missing."""
    numbers = pd.to_numeric(values, errors="coerce").astype("Int64")
    return numbers.astype("string").fillna("").to_numpy(dtype=object)


def _dims_of(einsum: str) -> str:
    """The op's dims in order of first appearance ('' for no einsum)."""
    if not einsum:
        return ""
    try:
        return parse_op(einsum).dims
    except ValueError:
        return ""
