"""The Models table's steps (docs/outputs.md#the-report): which total rows (a transformer step's
or a group's) the Summary keeps, ranked: the slowest first, and every fleet point's best
included, so that a fleet of hundreds of steps shows each chip, precision and chip count, not
only the first in the file. A fleet point is a series' (a source row's) model, chip, dtypes
(and KV cache dtype) and chip count; its best step is its most tokens per second among its
steps that fit in HBM (its fastest, the first of equals, when none fits or none has a batch).
Only a point of a sweep or a fleet (a step named for its point, `dec[B=64]`) has a best: a
row of its own is one step, listed if it is among the slowest.

As every statistic (summary.partial): `step_table` keeps of one frame's totals the candidates
(each fleet point's best and the `limit` slowest; no other step can be chosen, whatever the
other frames hold), `merge_steps` those of consecutive frames as those of all their rows, and
`ranked_steps` the table itself: at most `limit` steps, every fleet point's best first
(the slowest of them when there are more than `limit`), then the slowest of the rest; listed
slowest first, equal times in file order."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.model.dtypes import DTYPE_COLUMNS
from pipeline.model.ops import TRANSFORMER
from pipeline.model.step_totals import STEP_FIELDS, STEP_ROWS, is_total

# a step's fleet point: its series and the columns that tell its configuration (those the
# results have)
CONFIGURATION = ("series", "model", "hardware", *DTYPE_COLUMNS, "kv_dtype", "chips")
# the table's own columns after STEP_FIELDS: the op taking the most time in the step and its
# time, whether the step is its fleet point's best, and its row in the results (0-based)
OWN_COLUMNS = ("top_op", "top_time", "best", "position")


def step_table(
    results: pd.DataFrame, top: np.ndarray | None, limit: int = STEP_ROWS
) -> pd.DataFrame:
    """The candidate total rows of `results` (each fleet point's best and the `limit`
    slowest), in file order: their STEP_FIELDS (and configuration), the op taking the most
    time among the rows summed into each (`top`: model.step_totals.top_rows; a step's op by
    its name after the step's, a group's row by its series; '' and NaN without one), whether
    it is its fleet point's best and its position in `results`."""
    fields = _fields(results)
    totals = np.flatnonzero(is_total(results)) if top is not None else np.array([], np.intp)
    rows = results.iloc[totals]
    keep, best = _candidates(rows, totals, limit)
    totals = totals[keep]
    table = results.iloc[totals][fields].reset_index(drop=True)
    at = top[totals] if len(totals) else np.array([], np.int64)
    label = np.full(len(totals), "", dtype=object)
    time = np.full(len(totals), np.nan)
    got = at >= 0
    if got.any():
        tops = results.iloc[at[got]]
        step = (results["op"].iloc[totals[got]] == TRANSFORMER).to_numpy(dtype=bool)
        name = tops["name"].astype(str).str.rpartition("/")[2].to_numpy(dtype=object)
        label[got] = np.where(step, name, tops["series"].astype(str).to_numpy(dtype=object))
        time[got] = tops["t_lower"].to_numpy(dtype=float)
    return table.assign(top_op=label, top_time=time, best=best[keep], position=totals)


def merge_steps(tables: list[pd.DataFrame], sizes: list[int], limit: int) -> pd.DataFrame:
    """step_table of consecutive frames (`sizes`: each frame's rows) as that of all their
    rows: positions counted from the first frame's first row, the candidates chosen again."""
    offsets = np.cumsum([0, *sizes[:-1]])
    pairs = zip(tables, offsets, strict=True)
    shifted = [t.assign(position=t["position"] + o) for t, o in pairs if len(t)]
    if not shifted:
        return tables[0]
    both = shifted[0] if len(shifted) == 1 else pd.concat(shifted, ignore_index=True)
    keep, best = _candidates(both, both["position"].to_numpy(dtype=np.int64), limit)
    return both[keep].assign(best=best[keep]).reset_index(drop=True)


def ranked_steps(table: pd.DataFrame, limit: int) -> pd.DataFrame:
    """The Models table's steps of merged candidates (step_table): at most `limit`, every
    fleet point's best first (the slowest of them when there are more), then the slowest
    of the rest; slowest first, equal times in file order."""
    t = _slowest_first(table)
    best = table["best"].to_numpy(dtype=bool)
    position = table["position"].to_numpy(dtype=np.int64)
    order = np.lexsort((position, t, ~best))  # the bests, slowest first; then the others
    chosen = order[:limit]
    chosen = chosen[np.lexsort((position[chosen], t[chosen]))]  # slowest first, file order
    return table.iloc[chosen].reset_index(drop=True)


def _fields(results: pd.DataFrame) -> list[str]:
    """The columns a step keeps: STEP_FIELDS and its configuration, those `results` has."""
    wanted = [*STEP_FIELDS, *(c for c in CONFIGURATION if c not in STEP_FIELDS)]
    return [c for c in wanted if c in results.columns]


def _candidates(rows: pd.DataFrame, position: np.ndarray, limit: int):
    """Which of `rows` (totals, in file order, at `position`) may be chosen, and which are
    their fleet point's best: the order on every frame the same, so any cut gives them."""
    n = len(rows)
    if not n:
        return np.zeros(0, dtype=bool), np.zeros(0, dtype=bool)
    fits = rows["fits"].to_numpy(dtype=bool, na_value=False)
    rate = rows["tokens_per_second"].to_numpy(dtype=float, na_value=np.nan)
    rate = np.where(np.isnan(rate), -np.inf, rate)
    t = rows["t_lower"].to_numpy(dtype=float, na_value=np.nan)
    t = np.where(np.isnan(t), np.inf, t)
    config = _configurations(rows)
    # per fleet point: fitting first, the most tokens/s, the fastest, the first in the file
    order = np.lexsort((position, t, -rate, ~fits, config))
    first = np.r_[True, config[order][1:] != config[order][:-1]]
    best = np.zeros(n, dtype=bool)
    best[order[first]] = True
    best &= (rows["name"].astype(str) != rows["series"].astype(str)).to_numpy(dtype=bool)
    keep = best.copy()
    keep[np.lexsort((position, _slowest_first(rows)))[:limit]] = True
    return keep, best


def _slowest_first(rows: pd.DataFrame) -> np.ndarray:
    """A sort key putting the slowest rows first (a missing time last)."""
    t = rows["t_lower"].to_numpy(dtype=float, na_value=np.nan)
    return np.where(np.isnan(t), np.inf, -t)


def _configurations(rows: pd.DataFrame) -> np.ndarray:
    """Each row's fleet point as one code (CONFIGURATION's columns, those present)."""
    columns = [c for c in CONFIGURATION if c in rows.columns]
    key = np.zeros(len(rows), dtype=np.int64)
    for c in columns:
        codes, uniques = pd.factorize(rows[c].astype(str) if c == "chips" else rows[c])
        key = key * (len(uniques) + 1) + codes + 1
        key = pd.factorize(key)[0].astype(np.int64)  # kept small: never overflows
    return key
