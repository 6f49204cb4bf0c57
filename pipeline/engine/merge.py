"""The client's side of a Dask run: each partition's aggregates (engine.partition) merged as
they arrive, never its rows: counts per hardware, op and bound, one line per series (its
time range, rows per bound, critical batch range, rows not fitting), the slowest scenarios,
the rows refused, the findings, the derated rows and the chart grids."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from pipeline.errors import RowProblem
from pipeline.model.roofline import BOUNDS
from pipeline.model.series import merge_lines
from pipeline.render.charts.grid import Grids

SLOWEST = 10


@dataclass
class Merged:
    """The merged aggregates of the partitions received so far."""

    rows: int = 0
    partitions: dict[int, dict] = field(default_factory=dict)  # number -> rows, files
    counts: pd.DataFrame | None = None
    lines: dict[int, pd.DataFrame] = field(default_factory=dict)  # partition -> its lines
    critical: dict[int, pd.DataFrame] = field(default_factory=dict)  # -> critical_batches()
    slowest: list[dict] = field(default_factory=list)
    refused: list[tuple] = field(default_factory=list)
    findings: dict[int, dict] = field(default_factory=dict)  # -> partition_findings()
    derated: list[pd.DataFrame] = field(default_factory=list)  # each one's derated_table()
    grids: Grids | None = None  # every partition's chart grids added up (charts.grid)
    idle: list[pd.DataFrame] = field(default_factory=list)  # each partition's idle_chips()

    def partition_list(self) -> list[dict]:
        """The partitions in order: number, rows, each file's SHA-256."""
        return [{"number": k, **self.partitions[k]} for k in sorted(self.partitions)]

    def refused_problems(self, source: str) -> list[RowProblem]:
        """Rows the model refused on the workers (numbers past float64), as problems."""
        return [RowProblem(source, line, name, col, why) for line, name, col, why in self.refused]

    def series_lines(self) -> pd.DataFrame:
        """One line per series, in file order: the partitions' lines merged (the local
        engine's Summary.lines, model.series.merge_lines)."""
        return merge_lines([self.lines[k] for k in sorted(self.lines)])

    def critical_batches(self) -> pd.DataFrame:
        """The local Summary.critical_batches: per series, chip and dtypes, the lowest and
        highest critical batch over every partition, in file order."""
        tables = [self.critical[k] for k in sorted(self.critical) if len(self.critical[k])]
        if not tables:
            return pd.DataFrame(columns=["hardware", "op", "dtypes", "low", "high"])
        both = pd.concat(tables).astype({"hardware": str, "op": str, "dtypes": str})
        keys = [both.index.rename("series"), "hardware", "op", "dtypes"]
        grouped = both.groupby(keys, sort=False)
        out = pd.DataFrame({"low": grouped["low"].min(), "high": grouped["high"].max()})
        return out.reset_index(level=[1, 2, 3])

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
            ],  # the columns of Summary.lines (docs/api.md)
            "critical_batches": [
                {"series": str(s), **{k: _plain(v) for k, v in row.items()}}
                for s, row in self.critical_batches().iterrows()
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
        .groupby(["hardware", "op", "bound", "fits"], as_index=False)[["scenarios", "own"]]
        .sum()
    )
    merged.lines[k] = got["lines"]
    merged.critical[k] = got["critical"]
    rows = sorted([*merged.slowest, *got["slowest"]], key=lambda r: -r["t_lower"])
    merged.slowest = rows[:SLOWEST]
    merged.refused.extend(got["refused"])
    merged.findings[k] = got["findings"]
    if len(got["derated"]):
        merged.derated.append(got["derated"])
    merged.grids = got["grids"] if merged.grids is None else merged.grids + got["grids"]
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
    """A value for JSON: text as text, ints as ints, NaN as None."""
    if isinstance(value, str):
        return value
    if pd.isna(value):
        return None
    if float(value).is_integer():
        return int(value)
    return float(value)
