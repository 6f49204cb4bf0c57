"""Which of its sweep's points a scenario is, as bits: the `marks` column the expansion writes
(scenarios.expand) and the fleet answer reads (summary.fleet)."""

from __future__ import annotations

import numpy as np

# Which of its sweep's points a scenario is, as bits (the `marks` column the expansion writes:
# scenarios.expand): its first point (every swept dim at its first value), its last, and for
# the k-th swept dim (k < LINE_DIMS) a point of the line along that dim (the others at their
# first value; of a long sweep, LINE_POINTS of its values, spaced on a log scale of their
# positions, the first and the last kept). A row that sweeps nothing is every one of them;
# FLEET_POINT marks a point of a fleet series.
FIRST, LAST, LINE_DIMS, LINE_POINTS = 1, 2, 5, 64
EVERY = FIRST | LAST | sum(4 << k for k in range(LINE_DIMS))
FLEET_POINT = 1 << 8


def point_marks(index: tuple[np.ndarray, ...], sizes: list) -> np.ndarray:
    """The marks of a sweep's points at `index` (np.unravel_index over `sizes`, or per point)."""
    n = len(index[0])
    at_first = [i == 0 for i in index]
    first = np.logical_and.reduce(at_first)
    last = np.logical_and.reduce([i == size - 1 for i, size in zip(index, sizes, strict=True)])
    marks = np.where(first, FIRST, 0) | np.where(last, LAST, 0)
    for k, (i, size) in enumerate(zip(index[:LINE_DIMS], sizes, strict=False)):
        others = [f for j, f in enumerate(at_first) if j != k]
        on = np.logical_and.reduce(others) if others else np.ones(n, dtype=bool)
        for long in filter(LINE_POINTS.__lt__, np.unique(size).tolist()):  # some values kept
            on = on & ((size != long) | np.isin(i, line_positions(long)))
        marks = marks | np.where(on, 4 << k, 0)
    return marks.astype(np.int16)


def line_positions(size: int) -> np.ndarray:
    """The positions a line keeps of a sweep of `size` values: all, or LINE_POINTS of them
    spaced on a log scale (the first and the last kept)."""
    if size <= LINE_POINTS:
        return np.arange(size)
    return np.unique(np.geomspace(1, size, LINE_POINTS).round().astype(np.int64) - 1)
