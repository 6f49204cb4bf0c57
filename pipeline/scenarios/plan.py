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
# the most rows fleet lists (hardware, dtype, chips: scenarios.lists) may make in one file:
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

    def cuts(self, rows: int) -> Cuts:
        """Where the partitions of `rows` scenarios begin, then the end (Cuts: one bound
        worked out when asked, however many partitions): every `rows`th scenario, a bound
        inside a group moved to the group's end (model.groups sums a group in one
        partition), which may leave a partition empty."""
        return Cuts(self.total, rows, *self._group_spans())

    def snapped(self, bounds) -> np.ndarray:
        """Partition bounds (sorted, 0 and the total among them) with a bound inside a group
        moved to the group's end, once each."""
        lo, hi = self._group_spans()
        return np.unique(_snap(np.asarray(bounds, dtype=np.int64), lo, hi))

    def _group_spans(self) -> tuple[np.ndarray, np.ndarray]:
        """The scenarios each group spans, [lo, hi) sorted by lo (empty without groups)."""
        none = np.zeros(0, dtype=np.int64)
        if "group" not in self.frame.columns:
            return none, none
        positions = np.flatnonzero(self.valid)
        group = self.frame["group"].astype(str).to_numpy()[positions]
        member = group != ""
        if not member.any():
            return none, none
        ends = np.cumsum(self.counts[positions])
        begins = ends - self.counts[positions]
        spans = pd.DataFrame({"g": group[member], "lo": begins[member], "hi": ends[member]})
        spans = spans.groupby("g", sort=False).agg(lo=("lo", "min"), hi=("hi", "max"))
        spans = spans.sort_values("lo")
        return spans["lo"].to_numpy(dtype=np.int64), spans["hi"].to_numpy(dtype=np.int64)

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


@dataclass(frozen=True)
class Cuts:
    """A run's partition bounds, `len(cuts) - 1` partitions, partition k from cuts[k] to
    cuts[k + 1]: every `rows`th of `total` scenarios, moved out of the groups spanning
    [lo, hi). Worked out one at a time: a plan of 2^53 scenarios has no array of them."""

    total: int
    rows: int
    lo: np.ndarray
    hi: np.ndarray

    def __len__(self) -> int:
        return max(1, math.ceil(self.total / self.rows)) + 1  # no scenario: one, empty

    def __getitem__(self, k: int) -> int:
        if k >= len(self) - 1:
            return self.total
        return int(_snap(np.array([k * self.rows], dtype=np.int64), self.lo, self.hi)[0])


def _snap(bounds: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """`bounds` with each one strictly inside a span [lo, hi) moved to its hi."""
    if not len(lo):
        return bounds
    at = np.maximum(np.searchsorted(lo, bounds, "right") - 1, 0)
    inside = (bounds > lo[at]) & (bounds < hi[at])
    return np.where(inside, hi[at], bounds)


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
