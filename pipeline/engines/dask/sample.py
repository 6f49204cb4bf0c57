"""What a Dask run's report, workbook and charts show row by row (docs/outputs.md): a sample
of its scenarios the client computes itself from the plan, at most SAMPLE_ROWS, spread over
every sweep: each series keeps every scenario up to its share of the budget, else a grid of
each long sweep's values, evenly spaced (and on a log scale for a long range), the first and
the last kept, so its sweep charts
draw the same curves through fewer points and its shape (the values each dim takes) is the
whole series'. Counts, series lines, critical batches and findings never come from it:
they are merged from every partition."""

from __future__ import annotations

import math

import numpy as np

from pipeline.scenarios.plan import Planned
from pipeline.scenarios.sweeps import Sweep

SAMPLE_ROWS = 50_000  # scenarios the client computes for the report, workbook and charts


def sample_plan(plan: Planned, budget: int = SAMPLE_ROWS) -> Planned:
    """`plan` thinned to about `budget` scenarios (see the module); the first of every row
    is kept, and of every sweep the first and last value. With more source rows than the
    budget, evenly spaced rows are kept (the first and the last among them)."""
    positions = np.flatnonzero(plan.valid)
    valid = plan.valid.copy()
    if len(positions) > budget:
        keep = positions[np.unique(np.linspace(0, len(positions) - 1, budget).round().astype(int))]
        valid[:] = False
        valid[keep] = True
        if "group" in plan.frame.columns:  # a group is summed whole: kept whole
            group = plan.frame["group"].astype(str).to_numpy()
            kept = np.setdiff1d(group[keep], [""])
            valid |= plan.valid & np.isin(group, kept)
        positions = np.flatnonzero(valid)
    # each row's share of the budget, so the sample stays within it (the workbook's Results
    # sheet and the report's tables hold it: their size budget, docs/outputs.md); a sweep
    # keeps at least its first and last values, so a row of d swept dims at least 2**d
    share = max(1, budget // max(len(positions), 1))
    swept, counts = {}, plan.counts.copy()
    for p, grid in plan.swept.items():
        if not valid[p]:
            continue
        sizes = [len(cell) for _, cell in grid]
        keep = _per_axis(sizes, share)
        swept[p] = [
            (d, _thinned(cell, n, k)) for (d, cell), n, k in zip(grid, sizes, keep, strict=True)
        ]
        counts[p] = math.prod(len(cell) for _, cell in swept[p])
    return Planned(plan.frame, valid, swept, counts, plan.fleet)


def _per_axis(sizes: list[int], share: int) -> list[int]:
    """How many values each sweep keeps: all, while the product stays within `share`; else
    the same most m for every long sweep (short ones keep all), m as large as fits."""
    if math.prod(sizes) <= share:
        return sizes
    lo, hi = 2, max(sizes)
    while lo < hi:  # the largest m with prod(min(n, m)) <= share (m >= 2: first and last)
        m = (lo + hi + 1) // 2
        if math.prod(min(n, m) for n in sizes) <= share:
            lo = m
        else:
            hi = m - 1
    return [min(n, lo) for n in sizes]


def _thinned(cell: Sweep, size: int, keep: int) -> Sweep:
    """About `keep` values of `cell`, its first and last among them: evenly spaced by
    position, and for a range of every integer over a decade or more half of them evenly
    spaced on a log scale too (as the charts' axes are), so 1..100000 keeps its small
    values where its curve bends."""
    if keep >= size:
        return cell
    at = np.linspace(0, size - 1, keep).round().astype(np.int64)
    if not cell.items and cell.factor == 1 and cell.lo >= 1 and cell.hi >= 10 * cell.lo:
        logs = np.geomspace(cell.lo, cell.hi, keep - keep // 2).round().astype(np.int64)
        at = np.concatenate([at[::2], logs - cell.lo, [size - 1]])
    return Sweep(items=tuple(int(v) for v in cell.values_at(np.unique(at))))
