"""A file checked but not expanded, for the Dask engine (docs/input.md#beyond-one-machine):
its valid rows typed, each row's sweeps and number of scenarios, so any range of the
expansion can be built where it is computed (`Planned.rows`), by a worker, from the source
rows that range touches (`Planned.part`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipeline.scenarios.expand import expand_slice, grids
from pipeline.scenarios.problems import Found
from pipeline.scenarios.sweeps import Sweep

# the most scenarios one file may plan: past it a count is no longer exact in float64
PLAN_LIMIT = 2**53
# the most rows fleet lists (hardware, dtype, chips: scenarios.fleet) may make in one file:
# the client builds them before it plans (a million take about 1 GB and 10 s), while a
# dim's sweep is only counted
FLEET_LIMIT = 1_000_000
FLEET_LIMIT_NAME = (
    "the Dask engine's for fleet lists, which its client builds; a dim's sweep has none"
)


@dataclass(frozen=True)
class Planned:
    """The checked rows (not expanded), which are valid, the sweeps of each swept one, each
    row's number of scenarios and the fleet arrays (series, labels, axes) or None."""

    frame: pd.DataFrame
    valid: np.ndarray
    swept: dict[int, list[tuple[str, Sweep]]]
    counts: np.ndarray
    fleet: tuple[np.ndarray, np.ndarray, np.ndarray] | None

    @property
    def total(self) -> int:
        """Scenarios the valid rows expand to."""
        return int(self.counts[self.valid].sum())

    def rows(self, lo: int, hi: int) -> pd.DataFrame:
        """Scenarios lo to hi (end excluded), as the local engine expands them."""
        return expand_slice(self.frame, self.valid, self.swept, self.counts, self.fleet, lo, hi)

    def part(self, lo: int, hi: int) -> tuple[Planned, int, int]:
        """Only the valid rows scenarios lo to hi touch, and the range within them: what a
        worker is sent for one partition."""
        positions = np.flatnonzero(self.valid)
        reps = self.counts[positions]
        ends = np.cumsum(reps)
        first = int(np.searchsorted(ends, lo, "right"))
        last = int(np.searchsorted(ends - reps, hi, "left"))
        keep = positions[first:last]
        offset = int(ends[first - 1]) if first else 0
        renumber = {int(p): i for i, p in enumerate(keep.tolist())}
        fleet = None if self.fleet is None else tuple(a[keep] for a in self.fleet)
        part = Planned(
            frame=self.frame.iloc[keep].reset_index(drop=True),
            valid=np.ones(len(keep), dtype=bool),
            swept={renumber[p]: g for p, g in self.swept.items() if p in renumber},
            counts=self.counts[keep],
            fleet=fleet,
        )
        return part, lo - offset, hi - offset


def plan(
    frame: pd.DataFrame,
    valid: np.ndarray,
    sweeps: dict[str, tuple[np.ndarray, np.ndarray]],
    fleet: tuple[np.ndarray, np.ndarray, np.ndarray] | None,
) -> tuple[Planned, Found]:
    """The checked rows planned; a row whose scenarios would pass PLAN_LIMIT (with the rows
    before it) is refused, counted and never built."""
    swept = grids(valid, sweeps)
    counts = np.ones(len(valid), dtype=np.int64)
    found: Found = []
    total = int(valid.sum()) - len(swept)
    valid = valid.copy()
    for p, grid in sorted(swept.items()):
        count = math.prod(len(cell) for _, cell in grid)
        if total + count > PLAN_LIMIT:
            found.append((p, grid[0][0], f"expands to {count:,} scenarios, which takes the file "
                          f"past {PLAN_LIMIT:,}, the most one run counts exactly"))  # fmt: skip
            valid[p] = False
            continue
        total += count
        counts[p] = count
    swept = {p: g for p, g in swept.items() if valid[p]}
    return Planned(frame, valid, swept, counts, fleet), found
