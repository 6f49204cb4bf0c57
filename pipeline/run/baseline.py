"""A run compared with a baseline (DESIGN.md §9, `pipeline run --baseline`): the results of
an earlier run's output folder read back (its results.parquet, else its results.csv) and the
changes between them and this run's, computed once before anything is written, then handed
to the outputs through the write's context (run.stages.Context)."""

from __future__ import annotations

import csv
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from pipeline.changes.compare import (
    DEFAULT_THRESHOLD,
    RESULTS,
    Changes,
    compare_results,
    compared_columns,
    listed,
    repeated_columns,
    repeated_names,
    typed_results,
)
from pipeline.errors import InvalidResults, described, printable, quoted
from pipeline.i18n import _
from pipeline.render.format import count
from pipeline.run.earlier import LATEST, newest_run, pair_runs, runs_in
from pipeline.run.tables import unquoted

RESULTS_FILES = ("results.parquet", "results.csv")
PARTS = "part-*.parquet"  # a Dask run's results, in results/
NO_RESULTS = "has no results.parquet, results.csv or a Dask run's results/"  # of a folder
NEEDED = ("name", *RESULTS)  # a results file without one of them cannot be compared


class BaselineError(InvalidResults):
    """A baseline folder is missing, or holds no results this tool can read."""


@dataclass(frozen=True)
class Baseline:
    """What the outputs show of a comparison: the baseline folder (as given) and the changes."""

    path: str
    changes: Changes

    def counts(self) -> dict:
        """manifest.json's "changes" object: the baseline, the counts per kind, and more."""
        c = self.changes
        return {
            "baseline": self.path,
            "compared": int(c.compared),
            "counts": {k: int(n) for k, n in c.counts.items()},
            "total": int(sum(c.counts.values())),
            "skipped_columns": list(c.skipped),
        }


def check_baseline_dir(folder) -> Path:
    """`folder` as a Path when it is a folder this process can list; BaselineError otherwise
    (checked before a run writes anything)."""
    if not isinstance(folder, str | os.PathLike) or isinstance(folder, bytes):
        raise TypeError(f"baseline must be a folder path (str or Path), not {described(folder)}")
    path = Path(folder)
    if not path.is_dir():
        why = "does not exist" if not os.path.lexists(path) else "is not a folder"
        raise BaselineError(
            f"baseline {printable(path)} {why}; give an earlier run's output folder"
        )
    try:
        with os.scandir(path) as entries:
            next(entries, None)
    except OSError as exc:
        raise BaselineError(f"baseline {printable(path)} cannot be read: {exc.strerror}") from None
    return path


def results_in(folder: Path) -> Path | None:
    """Where an output folder keeps its results: results.parquet, else results.csv (a local
    run), else results/ (a Dask run's part-NNNNN.parquet files); None when it has none."""
    for name in RESULTS_FILES:
        if (folder / name).is_file():
            return folder / name
    parts = folder / "results"
    return parts if parts.is_dir() and any(parts.glob(PARTS)) else None


def read_baseline(folder) -> pd.DataFrame:
    """The results of an earlier run's output folder (results_in); BaselineError when the
    folder holds none or they cannot be read."""
    path = check_baseline_dir(folder)
    found = results_in(path)
    if found is None:
        raise BaselineError(
            f"baseline {printable(path)} {NO_RESULTS}; give an earlier run's output folder"
        )
    return read_results_file(found, "baseline", BaselineError)


def read_results_file(path: Path, role: str, error: type[InvalidResults] = InvalidResults):
    """A results.parquet or results.csv read back for a comparison: only the columns one
    reads, a CSV's text cells as they were before the CSV-injection quote (run.tables),
    names always text, `t_lower` and `critical_batch` numbers, `fits` True/False; `error`
    (naming the `role`, the file, and the line and column where it can) when the file cannot
    be read, lacks a column a comparison needs, repeats one, or holds text where a number
    belongs."""
    label = printable(path)
    kind = ".parquet" if path.is_dir() else path.suffix.lower()  # a folder: a Dask run's parts
    if path.is_dir():
        parts = sorted(path.glob(PARTS))
        if not parts:
            raise error(f"the {role} {label} is a folder without {PARTS} files")
    if kind not in (".parquet", ".csv"):
        raise error(f"the {role} {label} is neither a results.parquet nor a results.csv file")
    try:
        schema_of = parts[0] if path.is_dir() else path
        header = pq.read_schema(schema_of).names if kind == ".parquet" else _csv_header(path)
        _check_header(header, f"the {role} {label}", error)
        columns = compared_columns(header)
        if kind == ".parquet":
            source = parts if path.is_dir() else path  # the parts in order: file order
            frame = pq.read_table(source, columns=columns).to_pandas()
        else:
            # names stay text ('NA', '007'); an empty number cell is missing, as written
            types = pacsv.ConvertOptions(
                column_types={"name": pa.string()}, include_columns=columns
            )
            frame = _unquoted(pacsv.read_csv(path, convert_options=types))
    except (OSError, ValueError, pa.ArrowException) as exc:
        raise error(f"cannot read the {role} {label}: {printable(exc)}") from None
    names = repeated_names(frame["name"])
    if names:
        raise error(
            f"the {role} {label} names {names}; scenarios are matched by name, so each must "
            "be unique"
        )

    def where(row: int) -> str:
        line = _csv_line(path, row) if kind == ".csv" else None
        if line is not None:
            return f"the {role} {label}:{line}"
        return f"the {role} {label}, row {count(row + 1)} (name {quoted(frame['name'].iloc[row])})"

    try:
        return typed_results(frame, where)
    except InvalidResults as exc:
        raise error(str(exc)) from None


def _csv_header(path: Path) -> list[str]:
    return pacsv.open_csv(path).schema.names


def _check_header(header: list[str], file: str, error: type[InvalidResults]) -> None:
    """`error` when the header lacks a column a comparison needs or repeats one it reads."""
    missing = [c for c in NEEDED if c not in header]
    needed = f"{', '.join(NEEDED[:-1])} and {NEEDED[-1]}"
    if len(missing) == len(NEEDED):
        raise error(
            f"{file} has none of the columns a comparison reads ({needed}); is it a results "
            "file of `pipeline run`?"
        )
    if missing:
        raise error(
            f"{file} has no {listed(missing)} column{'s' if len(missing) > 1 else ''}; a "
            f"comparison reads {needed}, which every results file of `pipeline run` has"
        )
    twice = repeated_columns(header)
    if twice:
        raise error(f"{file} has {twice}; a results file names each column once")


def _csv_line(path: Path, row: int) -> int | None:
    """The line of a CSV's data row `row` (0: the first after the header), counting the
    line breaks inside quoted cells; None when the file cannot be walked (an error's path
    only: a message's place, never a compute step)."""
    try:
        with open(path, encoding="utf-8-sig", errors="replace", newline="") as f:
            reader = csv.reader(f)
            start, seen = 1, -1
            for cells in reader:
                if cells:  # Arrow skips empty lines
                    if seen == row:
                        return start
                    seen += 1
                start = reader.line_num + 1
    except (OSError, csv.Error):
        pass
    return None


def _unquoted(table: pa.Table) -> pd.DataFrame:
    """results.csv's text columns as written before the CSV-injection quote (run.tables)."""
    frame = table.to_pandas()
    for at, field in enumerate(table.schema):
        if pa.types.is_string(field.type) or pa.types.is_large_string(field.type):
            frame.isetitem(at, unquoted(frame.iloc[:, at]))
    return frame


def compare_with(folder, results: pd.DataFrame, threshold: float = DEFAULT_THRESHOLD) -> Baseline:
    """This run's `results` compared with the baseline folder's (see the module)."""
    old = read_baseline(folder)
    return Baseline(os.fspath(folder), compare_results(old, results, threshold))


def chosen_baseline(
    value: str | None, output_dir: Path, warn: Callable[[str], None] | None = None
) -> tuple[Path | None, str | None]:
    """run's --baseline as a folder, and a note to print: `latest` is the newest finished run
    beside OUTPUT_DIR (run.earlier.newest_run; `warn` hears of the runs it skips), named with
    its start time; none there yet (the first night) is a note, not an error. Any other value
    is the folder it names, as given."""
    if value is None:
        return None, None
    if value != LATEST:
        return Path(value), None
    found = newest_run(output_dir, warn)
    if found is not None:
        folder, started = found
        return folder, _("note: baseline latest: {folder} (started {started})",
                         folder=printable(folder), started=printable(started))  # fmt: skip
    under = printable(Path(os.path.abspath(output_dir)).parent)
    return None, _("note: baseline latest: first run under {folder}/: nothing to compare",
                   folder=under)  # fmt: skip


def baseline_folders(folder: Path | None, paths: list[Path], names: list[str]) -> list[Path | None]:
    """Each input's baseline: its own run in `folder`, paired by the input's name as the
    runs' manifests record it (run.earlier.pair_runs; None where there is none, or no
    `folder`); BaselineError when `folder` is missing or unreadable (before any write)."""
    if folder is None:
        return [None] * len(names)
    root = check_baseline_dir(folder)
    wanted = [(str(path), name) for path, name in zip(paths, names, strict=True)]
    return pair_runs(wanted, runs_in(root))


def removed_runs(baseline: Path | None, paired: list[Path | None]) -> list[tuple[Path, str]]:
    """The baseline's runs that no input of this run pairs (their input was dropped): each
    as (its folder, the input file it read)."""
    if baseline is None:
        return []
    taken = {p for p in paired if p is not None}
    return [(run, f) for run, f in runs_in(baseline).items() if f is not None and run not in taken]
