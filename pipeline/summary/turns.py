"""Where a sweep turns compute-bound: one rule for every line that sweeps a dim, a series line
(summary.series, Summary.lines) or a sweep chart's line (a series' rows on one chip with its
other swept values fixed). A sweep of one dim, its op's only batch dim, whose rows are
compute-bound and otherwise bound and share one critical batch, is compute-bound from that
dim = that batch, exactly (book Q3: from B = 137 for D = F = 4096 on a TPU v5e, not from the
next swept value); any other line has no turn (all one bound, or mixed)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import pyarrow as pa

from pipeline.model.ops import parse_op
from pipeline.model.roofline import BOUNDS

MIXED = "mixed"  # a line whose rows are bound by more than one thing
TURN_COLUMNS = (*BOUNDS, "bound", "critical_min", "critical_max", "change_dim", "change_at")


def change_points(table: pd.DataFrame) -> tuple[pd.api.extensions.ExtensionArray, pd.Series]:
    """Each line's turn, `change_dim` ('' for none) and `change_at` (NA for none), from a
    table of lines with columns einsum, swept (the dims the line sweeps, comma-joined), bound
    (a bound, or MIXED), compute (its compute-bound rows), critical_min and critical_max.
    Worked out on codes; only the few candidate lines' swept dims are compared as text."""
    codes, einsums = pd.factorize(table["einsum"].astype(str))  # few distinct einsums
    batch = np.asarray([batch_dim(e) for e in einsums] or [""], dtype=object)
    critical = table["critical_min"].to_numpy(dtype=float, na_value=np.nan)
    candidate = np.flatnonzero(
        (table["bound"] == MIXED).to_numpy(dtype=bool)
        & (table["compute"] > 0).to_numpy(dtype=bool)
        & (batch[codes] != "")
        & (table["critical_min"] == table["critical_max"]).fillna(False).to_numpy(dtype=bool)
    )
    swept = table["swept"].iloc[candidate].astype(str).to_numpy(dtype=object)
    turns = candidate[swept == batch[codes[candidate]]]
    which = np.zeros(len(table), dtype=np.int64)  # 0: no turn, else 1 + the einsum's code
    which[turns] = codes[turns] + 1
    at = np.full(len(table), np.nan)
    at[turns] = critical[turns]
    labels = pa.array(["", *batch], pa.string()).take(pa.array(which))
    return pd.array(labels, dtype="str"), pd.array(at, dtype="Float64").astype("Int64")


def batch_dim(einsum: str) -> str:
    """The op's batch dim when it has exactly one (B of BD,DF->BF), else ''."""
    if not einsum:
        return ""
    try:
        batch = parse_op(einsum).batch
    except ValueError:
        return ""
    return batch if len(batch) == 1 else ""


def line_turns(rows: pd.DataFrame, lines: Sequence[np.ndarray], dim: str) -> pd.DataFrame:
    """Per line (positions into `rows`, which hold einsum, bound and critical_batch; each
    line one or more rows, a sweep of `dim` alone): its rows per bound, its bound (or
    MIXED), its critical batch range and its turn (change_dim, change_at) by change_points,
    as the series lines have theirs. One row per line, in order."""
    n = len(lines)
    sizes = np.array([len(line) for line in lines], dtype=np.intp)
    codes = np.repeat(np.arange(n), sizes)
    at = np.concatenate(lines) if n else np.empty(0, dtype=np.intp)
    bound = pd.Categorical(rows["bound"].iloc[at], categories=list(BOUNDS)).codes.astype(np.int64)
    counts = np.bincount(codes * len(BOUNDS) + bound, minlength=n * len(BOUNDS))
    counts = counts.reshape(n, len(BOUNDS))
    kinds = (counts > 0).sum(axis=1)
    critical = pd.to_numeric(rows["critical_batch"].iloc[at], errors="coerce")
    critical = critical.to_numpy(dtype=float, na_value=np.nan)
    starts = np.cumsum(sizes) - sizes
    low = np.fmin.reduceat(critical, starts) if n else np.empty(0)
    high = np.fmax.reduceat(critical, starts) if n else np.empty(0)
    table = pd.DataFrame(
        {
            "einsum": rows["einsum"].iloc[at[starts]].astype(str).to_numpy(dtype=object),
            "swept": dim,
            "bound": np.asarray([*BOUNDS, MIXED], dtype=object)[
                np.where(kinds == 1, counts.argmax(axis=1), len(BOUNDS))
            ],
            **{b: counts[:, i] for i, b in enumerate(BOUNDS)},
            "critical_min": pd.array(low, dtype="Float64").astype("Int64"),
            "critical_max": pd.array(high, dtype="Float64").astype("Int64"),
        }
    )
    table["change_dim"], table["change_at"] = change_points(table)
    return table[list(TURN_COLUMNS)]
