"""Groups (docs/model.md#groups-blocks-of-your-own): rows with the same `group` summed, point
by point of their shared sweep, into one total row named after the group, through the total
row code of a transformer step (model.step_totals). Here the frame is rearranged as a step's
is: each point's total row (op `group`), then that point's rows in file order; and each row
says which total it is summed into (BLOCK), so the totals are one reduceat over the frame.

A group's rows come one after another in the file and sweep the same values
(scenarios.groups), so the k-th scenario of each of its rows is the same point; the Dask
engine cuts its partitions between groups (scenarios.plan), never inside one."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.model.ops import TRANSFORMER

GROUP = "group"  # the op (and the input column) of a group's total row
TOTAL_OPS = (TRANSFORMER, GROUP)  # the ops of total rows: a step's, a group's
BLOCK = "block_of"  # internal: the total row a row is summed into (-1: none)
STEP_OF = "step_of"  # internal: each row's position in the frame before the expansions
IN_STEP = "in_step"  # internal: a total or a row summed into one (their series recur)


def grouped(frame: pd.DataFrame) -> np.ndarray:
    """Which rows belong to a group."""
    if GROUP not in frame.columns:
        return np.zeros(len(frame), dtype=bool)
    column = frame[GROUP]
    if isinstance(column.dtype, pd.CategoricalDtype):
        named = np.asarray(column.cat.categories.astype(str) != "", dtype=bool)
        codes = column.cat.codes.to_numpy()
        return (codes >= 0) & named[np.maximum(codes, 0)]
    return (column.astype(str) != "").to_numpy(dtype=bool)


def expand_groups(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` (the expanded scenarios) with each group's total rows among its rows: per
    point of the group's sweep, the total then the group's rows at that point; STEP_OF,
    BLOCK and IN_STEP set on every row. Unchanged when no row has a group."""
    member = grouped(frame)
    if not member.any():
        return frame
    frame = frame.reset_index(drop=True)
    n = len(frame)
    pos = np.arange(n)
    line = frame["line"].to_numpy()
    starts = np.r_[True, line[1:] != line[:-1]]  # a source row's scenarios are consecutive
    point = pos - np.maximum.accumulate(np.where(starts, pos, 0))
    codes, names = pd.factorize(frame[GROUP].astype(str).to_numpy()[member])
    first = np.full(len(names), n)
    np.minimum.at(first, codes, pos[member])
    head_of = np.full(n, -1)
    head_of[member] = first[codes]  # each grouped row's group's first row
    head = member & (line == line[np.maximum(head_of, 0)])  # the first row's points
    block = np.where(member, head_of + point, -1)
    span = np.where(member, head_of, pos)
    part = np.where(member, line - line[np.maximum(head_of, 0)] + 1, 0)
    totals = _totals(frame[head], names, codes[head[member]])
    out = pd.concat(
        [
            frame.assign(**{STEP_OF: pos, BLOCK: block, IN_STEP: member, "_span": span,
                            "_point": np.where(member, point, 0), "_part": part}),
            totals.assign(**{STEP_OF: pos[head], BLOCK: block[head], IN_STEP: True,
                             "_span": span[head], "_point": point[head], "_part": 0}),
        ],
        ignore_index=True,
    )  # fmt: skip
    order = np.lexsort((out["_part"].to_numpy(), out["_point"].to_numpy(), out["_span"].to_numpy()))
    return out.iloc[order].drop(columns=["_span", "_point", "_part"]).reset_index(drop=True)


def _totals(heads: pd.DataFrame, names: np.ndarray, codes: np.ndarray) -> pd.DataFrame:
    """The total rows of the groups: a copy of each group's first row at each point, named
    after the group (a swept point keeps its `[B=8]`), op `group`, no work of its own (the
    sums are filled after the model: model.step_totals)."""
    totals = heads.copy()
    name = totals["name"].astype(str).to_numpy(dtype=object)
    series = totals["series"].astype(str).to_numpy(dtype=object)
    for g in np.unique(codes).tolist():  # per group, not per row: its rows share a prefix
        mine = codes == g
        cut = len(series[mine][0])
        suffix = pd.Series(name[mine]).str.slice(cut).to_numpy(dtype=object)
        name[mine] = names[g] + suffix
        series[mine] = names[g]
    totals["name"] = pd.array(name, dtype="str")
    totals["series"] = pd.array(series, dtype="str")
    totals["op"] = GROUP
    for c in ("einsum", "shard", "notes"):
        if c in totals.columns:
            totals[c] = ""
    totals["flops"], totals["bytes"], totals["measured_seconds"] = 0.0, 0.0, np.nan
    if "count" in totals.columns:
        totals["count"] = 1.0
    return totals
