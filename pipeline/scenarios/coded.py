"""Columns as codes into their distinct values, so that every check and catalog lookup runs
once per distinct value (or combination of values), never once per row."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc


class Col:
    """A column as codes into a few distinct values: every check and lookup runs once per
    distinct value (or combination of values), then is broadcast to the rows by the codes."""

    def __init__(self, codes: np.ndarray, uniques: np.ndarray):
        self.codes = codes
        self.uniques = uniques  # per distinct value: stripped text, or a derived value

    @classmethod
    def from_arrow(cls, arr: pa.ChunkedArray | pa.Array) -> Col:
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks()
        enc = pc.dictionary_encode(arr)
        uniques = np.array([u.strip() for u in enc.dictionary.to_pylist()], dtype=object)
        return cls(enc.indices.to_numpy(zero_copy_only=False).astype(np.intp), uniques)

    @classmethod
    def blank(cls, n: int) -> Col:
        return cls(np.zeros(n, dtype=np.intp), np.array([""], dtype=object))

    def at(self, pos: int):
        return self.uniques[self.codes[pos]]

    def per_row(self, per_unique: np.ndarray) -> np.ndarray:
        """Broadcast a per-distinct-value array to rows."""
        return np.asarray(per_unique)[self.codes]

    def values(self) -> np.ndarray:
        return self.uniques[self.codes]

    def derive(self, fn, dtype=object) -> Col:
        """fn applied once per distinct value."""
        out = np.empty(len(self.uniques), dtype=dtype)
        for k, u in enumerate(self.uniques):
            out[k] = fn(u)
        return Col(self.codes, out)

    def is_(self, value) -> np.ndarray:
        if value is None:
            return self.per_row(np.array([u is None for u in self.uniques], dtype=bool))
        return self.per_row(np.array([u == value for u in self.uniques], dtype=bool))

    def categorical(self) -> pd.Categorical:
        """The rows as a pandas Categorical, built from the codes (no per-row work)."""
        cats, inverse = np.unique(self.uniques.astype(str), return_inverse=True)
        return pd.Categorical.from_codes(inverse[self.codes], categories=cats)


def combine(fn, *cols: Col, dtype=object) -> Col:
    """fn(*values) evaluated once per combination of the columns' values that occurs."""
    codes = cols[0].codes
    parts = [np.arange(max(len(cols[0].uniques), 1), dtype=np.intp)]  # per combination
    for col in cols[1:]:
        # one column at a time, the combinations renumbered densely after each: the packed
        # key stays below (combinations so far) * (values) <= rows * values, far from 2^63
        size = max(len(col.uniques), 1)
        key = codes.astype(np.int64) * size + col.codes
        total = len(parts[0]) * size  # a Python int: no overflow
        if total <= 1 << 22:  # a dense look-up table: no sort
            present = np.zeros(total, dtype=bool)
            present[key] = True
            keys = np.flatnonzero(present)
            lut = np.zeros(total, dtype=np.intp)
            lut[keys] = np.arange(len(keys))
            codes = lut[key]
        else:
            keys, codes = np.unique(key, return_inverse=True)
        before, own = np.divmod(keys, size)
        parts = [p[before] for p in parts] + [own.astype(np.intp)]
    values = np.empty(len(parts[0]), dtype=dtype)
    for k, at in enumerate(zip(*(p.tolist() for p in parts), strict=True)):
        values[k] = fn(*(c.uniques[i] for c, i in zip(cols, at, strict=True)))
    return Col(np.asarray(codes, dtype=np.intp).reshape(-1), values)
