"""summary.json: a run's Summary (summary.finish) as JSON, one schema and one writer for both
engines (docs/outputs.md#summaryjson). Counts are complete; the per-series tables list the
first LISTED series in file order and say how many there are (results hold every row); the
fleet answer, the first LISTED fleet series' ranking rows (summary.fleet); the serving
answer, the first LISTED serve series' configurations, ranked (summary.serving); the training
answer, the first LISTED train series' rows, the fewest days first (summary.training)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.model.roofline import BOUNDS
from pipeline.record import Record

LISTED = 1_000  # series (and critical batches) listed; their totals are given
SCHEMA = 1  # summary.json's "schema": raised when a field changes meaning


def summary_document(record: Record) -> dict:
    """What summary.json holds (see the module)."""
    s = record.summary
    lines, critical = s.lines, s.critical_batches
    found = s.findings
    return {
        "schema": SCHEMA,
        "scenarios": s.scenarios,
        "source_rows": s.source_rows,
        "rejected_rows": s.rejected_rows,
        "problems": s.problems,
        "bounds": {b: int(s.bounds[b]) for b in BOUNDS},
        "not_fitting": s.not_fitting,
        "per_hardware": _counts(s.per_hardware),
        "per_op": _counts(s.per_op),
        "overrides": {str(k): int(v) for k, v in s.overrides.items()},
        "series_total": len(lines),
        "series": _records(lines.head(LISTED), "series"),
        "critical_batches_total": len(critical),
        "critical_batches": _records(critical.head(LISTED), "series"),
        "fleet_series_total": int(s.fleet["series"].nunique()),
        "fleet": _records(_first_series(s.fleet, LISTED), None),
        "serving_series_total": int(s.serving["series"].nunique()),
        "serving": _by_series(_first_series(s.serving, LISTED)),
        "training_series_total": int(s.training["series"].nunique()),
        "training": _by_series(_first_series(s.training, LISTED)),
        "derated": _records(s.derated, None),
        "slowest": _records(found["slowest"], None),
        "findings": {k: _plain(v) for k, v in found.items() if not isinstance(v, pd.DataFrame)},
        "bottom_line": {k: _plain(v) for k, v in s.bottom.items()},
        **({"calibration": s.calibration} if s.calibration is not None else {}),
    }


def write_summary(folder: Path, record: Record) -> Path:
    """Write folder/summary.json (a run's temporary folder, swapped in whole); its path."""
    path = folder / "summary.json"
    text = json.dumps(summary_document(record), indent=1, ensure_ascii=False) + "\n"
    path.write_text(text, encoding="utf-8")
    return path


def _first_series(ranking: pd.DataFrame, n: int) -> pd.DataFrame:
    """The rows of the fleet ranking's first `n` series (summary.fleet: every row of each)."""
    names = pd.unique(ranking["series"])[:n]
    return ranking[ranking["series"].isin(names)]


def _by_series(table: pd.DataFrame) -> dict[str, list[dict]]:
    """A table's rows as JSON objects, listed per series in its order (the serving answer:
    per serve series its configurations ranked, the first the best: summary.serving)."""
    rows = _records(table, None)
    out: dict[str, list[dict]] = {}
    for row in rows:
        out.setdefault(str(row["series"]), []).append(row)
    return out


def _counts(table: pd.DataFrame) -> dict:
    """A per-hardware or per-op count table as {name: {column: count}}."""
    return {str(k): {c: int(v) for c, v in row.items()} for k, row in table.iterrows()}


def _records(table: pd.DataFrame, index: str | None) -> list[dict]:
    """A table's rows as JSON objects (its index first, named `index`, when given)."""
    frame = table.reset_index() if index else table.reset_index(drop=True)
    if index:
        frame = frame.rename(columns={frame.columns[0]: index})
    return [{str(k): _plain(v) for k, v in row.items()} for row in frame.to_dict("records")]


def _plain(value):
    """A value for JSON: text as text, whole numbers as ints, NaN and NA as None."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if value is None or isinstance(value, str | bool):
        return value
    if isinstance(value, np.bool_):
        return bool(value)
    if pd.isna(value):
        return None
    if isinstance(value, int | np.integer):
        return int(value)
    number = float(value)
    return int(number) if number.is_integer() and abs(number) < 2**53 else number
