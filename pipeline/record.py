"""The frozen record of an analysis: what was read, what was computed and every statistic,
as plain data. It sits below the renderers and the writer (render/, run/), which import it and
only read it, and above what builds it (scenarios/, summary/, model/); `Analysis`
(api/analyze.py) is the facade over it, adding write() (STYLE: the great-tables pattern,
GTData low and GT high)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import FrozenInstanceError, dataclass, field
from pathlib import Path

import pandas as pd

from pipeline.calibration.estimate import unused_warnings
from pipeline.catalogs.hardware import catalog_records
from pipeline.errors import RowProblem
from pipeline.model.ops import is_dim
from pipeline.scenarios import Loaded
from pipeline.scenarios.expand import idle_chip_words
from pipeline.summary.finish import Summary, finish
from pipeline.summary.partial import Partial, chips_counted
from pipeline.textfile import sha256_of
from pipeline.version import __version__


class ReadOnlyDict(dict):
    """A dict that refuses changes: the records and counts an Analysis hands out. `dict(d)` is
    a plain copy to change; it pickles, and serializes to JSON, as a dict."""

    def _refuse(self, *args, **kwargs):
        raise TypeError("an Analysis is read-only: change a copy, dict(...), instead")

    __setitem__ = __delitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse

    def __reduce__(self):
        return type(self), (dict(self),)


class ReadOnlySummary:
    """An Analysis's Summary as handed out: the same attributes, each table a copy of its own
    and each mapping read-only, while the Summary behind it keeps its cached statistics."""

    __slots__ = ("_summary",)

    def __init__(self, summary: Summary) -> None:
        object.__setattr__(self, "_summary", summary)

    def __getattr__(self, name: str):
        if name == "_summary":  # not set yet: no recursion
            raise AttributeError(name)
        return _handed_out(getattr(self._summary, name))

    def __setattr__(self, name: str, value) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __reduce__(self):
        return type(self), (self._summary,)

    def __dir__(self) -> list[str]:
        return sorted({*dir(type(self)), *dir(self._summary)})

    def __repr__(self) -> str:
        return repr(self._summary)


def record_of(cls, merged: Partial, loaded: Loaded, catalog, calibration, warnings, **fields):
    """A `cls` (Record, Analysis) of `merged`, the merged Partial of `loaded`'s rows, as both
    engines build it: what was read and by which tool, the catalog records of the chips it
    uses, its Summary and, after `warnings`, the rows' idle chips and a calibration that fits
    none of them; `fields`: the rest (started, timings, the frames)."""
    records = tuple(catalog_records(catalog, chips_counted(merged)))
    summary = finish(merged, list(records), loaded.source_rows, loaded.rejected_lines,
                     len(loaded.problems), calibration)  # fmt: skip
    found = idle_chip_words(summary.idle, Path(loaded.source))
    found += unused_warnings(summary.calibration)
    data = loaded.data
    return cls(
        source=loaded.source,
        source_sha256=sha256_of(data) if data is not None else None,  # None: rows in memory
        tool_version=__version__,
        catalog_version=catalog.version,
        hardware=records,
        summary=summary,
        warnings=(*warnings, *found),
        _loaded=loaded,
        **fields,
    )


def _handed_out(value):
    """A value as an Analysis hands it out: a frame as a copy (copy-on-write: no data is
    copied until it is changed), a mapping read-only."""
    if isinstance(value, pd.DataFrame | pd.Series):
        return value.copy(deep=False)
    if isinstance(value, Mapping):
        return ReadOnlyDict({k: _handed_out(v) for k, v in value.items()})
    return value


@dataclass(frozen=True, eq=False)
class Record:
    """What an analysis found, frozen: the one record every renderer and writer reads. It hands
    out frames of its own (`results`, `problems`, `inputs` and the summary's tables, copies on
    write), so changing them leaves it as it was; the hardware records, counts and timings
    refuse changes."""

    source: str  # the file's path, or a label for rows given in memory
    source_sha256: str | None  # of the file's bytes; None for rows in memory
    started: str  # when the analysis started (ISO 8601, UTC)
    tool_version: str
    catalog_version: str
    hardware: tuple[Mapping, ...]  # the catalog records of the chips the scenarios use
    summary: Summary  # held as a ReadOnlySummary
    warnings: tuple[str, ...]  # about the input: rows were computed, but look at these
    timings: Mapping[str, float] = field(repr=False)  # seconds: load, compute
    _loaded: Loaded = field(repr=False)
    _results: pd.DataFrame = field(repr=False)
    # every file the analysis read (scenarios, hardware), absolute as when read: write()
    # never replaces a folder holding one, whatever the working folder is by then
    _read: tuple[Path, ...] = field(default=(), repr=False)
    # row for row beside _results: the facts renderers read (model.roofline.FACTS)
    _facts: pd.DataFrame | None = field(default=None, repr=False)
    # where every scenario is written, as the outputs name it; and whether `results` holds a
    # sample of them only (the Dask engine's, engines.dask.sample) rather than every one
    rows_in: str = field(default="results.csv", repr=False)
    sampled: bool = field(default=False, repr=False)
    # the price file read (--prices: its path, "<prices>" for a DataFrame, and SHA-256), if any
    prices: tuple[str, str] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        # what the attributes reach is read-only too: a record or a count changed in a
        # notebook would otherwise change what write() writes
        object.__setattr__(self, "hardware", tuple(ReadOnlyDict(r) for r in self.hardware))
        object.__setattr__(self, "timings", ReadOnlyDict(self.timings))
        if not isinstance(self.summary, ReadOnlySummary):
            object.__setattr__(self, "summary", ReadOnlySummary(self.summary))

    @property
    def results(self) -> pd.DataFrame:
        """Every scenario: the results.csv columns in order, typed as results.parquet."""
        return self._results.copy(deep=False)

    @property
    def facts(self) -> pd.DataFrame:
        """Row for row beside `results`, what the model knows of each row and the renderers
        read instead of working it out again: the op's kind, whether it is a sweep point and
        which dims its series sweeps, the derated rates it was timed at, its network
        intensity, its link's hop latency and its latency floor (docs/api.md#facts; not
        columns of results.csv)."""
        if self._facts is None:
            raise AttributeError("this record was built without facts")
        return self._facts.copy(deep=False)

    @property
    def dims(self) -> tuple[str, ...]:
        """The dim columns of the results (A-Z), in order."""
        return tuple(c for c in self._results.columns if is_dim(c))

    @property
    def problems(self) -> pd.DataFrame:
        """Every problem found: line, name, column, reason (empty when there are none)."""
        return pd.DataFrame(
            [(p.line, p.name, p.column, p.reason) for p in self._loaded.problems],
            columns=["line", "name", "column", "reason"],
        ).astype({"line": "int64"})

    @property
    def problem_list(self) -> tuple[RowProblem, ...]:
        """The problems as messages (`FILE:LINE: column COL: reason`)."""
        return self._loaded.problems

    @property
    def inputs(self) -> pd.DataFrame:
        """The rows as read (every cell as text), with their line numbers first."""
        return self._loaded.inputs.copy(deep=False)
