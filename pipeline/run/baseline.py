"""A run compared with a baseline (DESIGN.md §9, `pipeline run --baseline`): the results of
an earlier run's output folder read back (its results.parquet, else its results.csv) and the
changes between them and this run's, computed once before anything is written, then handed
to the outputs through the write's context (run.stages.Context)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from pipeline.errors import InvalidResults, described, printable
from pipeline.model.changes import Changes, compare_results, compared_columns

RESULTS_FILES = ("results.parquet", "results.csv")


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
        next(os.scandir(path), None)
    except OSError as exc:
        raise BaselineError(f"baseline {printable(path)} cannot be read: {exc.strerror}") from None
    return path


def read_baseline(folder) -> pd.DataFrame:
    """The results of an earlier run's output folder: results.parquet, else results.csv;
    BaselineError when the folder holds neither or the file cannot be read."""
    path = check_baseline_dir(folder)
    for name in RESULTS_FILES:
        if (path / name).is_file():
            return read_results_file(path / name, "baseline", BaselineError)
    raise BaselineError(
        f"baseline {printable(path)} holds neither results.parquet nor results.csv; "
        "give an earlier run's output folder"
    )


def read_results_file(path: Path, role: str, error: type[InvalidResults] = InvalidResults):
    """A results.parquet or results.csv read back for a comparison: only the columns one
    reads, a CSV's text cells as they were before the CSV-injection quote (render.tables),
    names always text; `error` (naming the file and the `role`) when it cannot be read."""
    label = printable(path)
    try:
        if path.suffix.lower() == ".parquet":
            columns = compared_columns(pq.read_schema(path).names)
            frame = pq.read_table(path, columns=columns).to_pandas()
        elif path.suffix.lower() == ".csv":
            # names stay text ('NA', '007'); an empty number cell is missing, as written
            header = pacsv.open_csv(path).schema.names
            types = pacsv.ConvertOptions(
                column_types={"name": pa.string()}, include_columns=compared_columns(header)
            )
            frame = _unquoted(pacsv.read_csv(path, convert_options=types).to_pandas())
        else:
            raise error(f"the {role} {label} is neither a results.parquet nor a results.csv file")
    except (OSError, ValueError, pa.ArrowException) as exc:
        raise error(f"cannot read the {role} {label}: {printable(exc)}") from None
    if "name" not in frame.columns:
        raise error(f"the {role} {label} has no 'name' column")
    return frame


def _unquoted(frame: pd.DataFrame) -> pd.DataFrame:
    """results.csv's text cells as written before the CSV-injection quote (render.tables)."""
    for column in frame.columns:
        if pd.api.types.is_string_dtype(frame[column].dtype):
            text = frame[column]
            quoted = text.str.match(r"^'[=+\-@\t\r]", na=False)
            if quoted.any():
                frame[column] = text.where(~quoted, text.str.slice(1))
    return frame


def compare_with(folder, results: pd.DataFrame, threshold: float = 0.05) -> Baseline:
    """This run's `results` compared with the baseline folder's (see the module)."""
    old = read_baseline(folder)
    return Baseline(os.fspath(folder), compare_results(old, results, threshold))
