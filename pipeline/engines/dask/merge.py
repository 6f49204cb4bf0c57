"""The client's side of a Dask run: what each partition sent (engines.dask.partition) kept as it
arrives, never its rows: its files' SHA-256 and its Partial, merged in file order by the
model's own merge (summary.partial) once every partition is in, whatever the arrival order."""

from __future__ import annotations

from dataclasses import dataclass, field

from pipeline.summary.partial import Partial, merge


@dataclass
class Merged:
    """The partitions received so far."""

    partitions: dict[int, dict] = field(default_factory=dict)  # number -> rows, files
    partials: dict[int, Partial] = field(default_factory=dict)  # number -> its Partial

    @property
    def rows(self) -> int:
        """Scenarios computed so far."""
        return sum(p["rows"] for p in self.partitions.values())

    def partition_list(self) -> list[dict]:
        """The partitions in order: number, rows, each file's SHA-256."""
        return [{"number": k, **self.partitions[k]} for k in sorted(self.partitions)]

    def partial(self, empty: Partial) -> Partial:
        """Every partition's Partial merged in file order (`empty` when there is none)."""
        return merge([self.partials[k] for k in sorted(self.partials)] or [empty])


def merge_partition(merged: Merged, got: dict) -> None:
    """Keep one partition's files and Partial."""
    k, part = got["number"], got["partial"]
    merged.partitions[k] = {"rows": part.scenarios, "files": got["files"]}
    merged.partials[k] = part
