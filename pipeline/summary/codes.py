"""A results column as integer codes, computed once for every statistic (summary.partial) and
chart that counts rows: the bound of each row as an index into BOUNDS, whether it fits HBM,
and any text column as codes with the names they stand for (no Python work per row)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.model.roofline import BOUNDS


def column_codes(column: pd.Series) -> tuple[np.ndarray, list[str]]:
    """A column as integer codes and the names they stand for (a categorical's own codes, in
    its categories' order; else in order of first appearance)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return column.cat.codes.to_numpy(), [str(c) for c in column.cat.categories]
    codes, uniques = pd.factorize(column.astype(str))
    return codes, [str(u) for u in uniques]


def bound_codes_of(results: pd.DataFrame) -> np.ndarray:
    """Each row's bound as an index into BOUNDS (compute 0, memory 1, network 2)."""
    bound = results["bound"]
    if isinstance(bound.dtype, pd.CategoricalDtype) and list(bound.cat.categories) == list(BOUNDS):
        return bound.cat.codes.to_numpy().astype(np.intp)
    return pd.Categorical(bound.astype(str), categories=list(BOUNDS)).codes.astype(np.intp)


def fits(results: pd.DataFrame) -> np.ndarray:
    """True where the row's footprint fits the chip's HBM, or either is unknown."""
    return results["fits"].astype("boolean").fillna(True).to_numpy(dtype=bool)
