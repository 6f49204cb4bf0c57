"""The client's side of a Dask run: each partition's aggregates (engine.partition) merged as
they arrive, never its rows: counts per hardware, op and bound, one line per series (its
time range, rows per bound, critical batch range, rows not fitting), the slowest scenarios,
the rows refused, and the first rows."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from pipeline.errors import RowProblem
from pipeline.model.roofline import BOUNDS

SUMS = ("scenarios", *BOUNDS, "not_fitting")
SLOWEST = 10


@dataclass
class Merged:
    """The merged aggregates of the partitions received so far."""

    rows: int = 0
    partitions: dict[int, dict] = field(default_factory=dict)  # number -> rows, files
    counts: pd.DataFrame | None = None
    series: pd.DataFrame | None = None
    order: dict[str, tuple[int, int]] = field(default_factory=dict)  # series -> first seen
    slowest: list[dict] = field(default_factory=list)
    refused: list[tuple] = field(default_factory=list)
    first: pd.DataFrame | None = None
    idle: list[pd.DataFrame] = field(default_factory=list)  # each partition's idle_chips()

    def partition_list(self) -> list[dict]:
        """The partitions in order: number, rows, each file's SHA-256."""
        return [{"number": k, **self.partitions[k]} for k in sorted(self.partitions)]

    def refused_problems(self, source: str) -> list[RowProblem]:
        """Rows the model refused on the workers (numbers past float64), as problems."""
        return [RowProblem(source, line, name, col, why) for line, name, col, why in self.refused]

    def series_lines(self) -> pd.DataFrame:
        """One line per series, in file order (the order partitions first saw them)."""
        if self.series is None:
            return pd.DataFrame(columns=["scenarios", "t_min", "t_max", *BOUNDS])
        order = sorted(self.series.index, key=self.order.__getitem__)
        return self.series.loc[order]

    def summary(self, planned: int, partitions: int) -> dict:
        """summary.json: what the run's scenarios add up to."""
        counts = (
            self.counts
            if self.counts is not None
            else pd.DataFrame(columns=["hardware", "op", "bound", "scenarios"])
        )
        by_bound = counts.groupby("bound")["scenarios"].sum()
        lines = self.series_lines()
        return {
            "scenarios": self.rows,
            "planned_scenarios": planned,
            "partitions": partitions,
            "bounds": {b: int(by_bound.get(b, 0)) for b in BOUNDS},
            "per_hardware": _table(counts, "hardware"),
            "per_op": _table(counts, "op"),
            "series": [
                {"series": str(s), **{k: _plain(v) for k, v in row.items()}}
                for s, row in lines.iterrows()
            ],
            "slowest": self.slowest,
        }


def merge_partition(merged: Merged, got: dict) -> None:
    """Add one partition's aggregates."""
    k = got["number"]
    merged.rows += got["rows"]
    merged.partitions[k] = {"rows": got["rows"], "files": got["files"]}
    counts = got["counts"]
    merged.counts = (
        counts
        if merged.counts is None
        else pd.concat([merged.counts, counts])
        .groupby(["hardware", "op", "bound"], as_index=False)["scenarios"]
        .sum()
    )
    series = got["series"]
    for i, name in enumerate(series.index):
        merged.order.setdefault(str(name), (k, i))
        merged.order[str(name)] = min(merged.order[str(name)], (k, i))
    if merged.series is None:
        merged.series = series
    else:
        both = pd.concat([merged.series, series])
        grouped = both.groupby(level=0, sort=False)
        merged.series = pd.DataFrame(
            {
                **{c: grouped[c].sum() for c in SUMS},
                "t_min": grouped["t_min"].min(),
                "t_max": grouped["t_max"].max(),
                "critical_min": grouped["critical_min"].min(),
                "critical_max": grouped["critical_max"].max(),
            }
        )[list(series.columns)]
    rows = sorted([*merged.slowest, *got["slowest"]], key=lambda r: -r["t_lower"])
    merged.slowest = rows[:SLOWEST]
    merged.refused.extend(got["refused"])
    if got["first"] is not None:
        merged.first = got["first"]
    if len(got["idle"]):
        merged.idle.append(got["idle"])


def _table(counts: pd.DataFrame, by: str) -> dict:
    """Scenarios per `by` and bound: {value: {bound: count, ..., total: count}}."""
    out: dict = {}
    for (key, bound), n in counts.groupby([by, "bound"])["scenarios"].sum().items():
        out.setdefault(str(key), {b: 0 for b in BOUNDS})[str(bound)] = int(n)
    for row in out.values():
        row["total"] = sum(row[b] for b in BOUNDS)
    return out


def _plain(value):
    """A number for JSON: ints as ints, NaN as None."""
    if pd.isna(value):
        return None
    if float(value).is_integer():
        return int(value)
    return float(value)
