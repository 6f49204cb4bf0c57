"""Scenarios in: read (a CSV file, a DataFrame or a list of dicts), check every row, report
every problem, and hand on the valid rows typed and expanded (docs/input.md).

`load_scenarios` (a file) and `load_records` (rows in memory) return a `Loaded` (`loaded`).
The reading is in `read` and `records`, the header in `header`, the row checks in `checks`
(with `links`, `dims` and `sweeps`; their problems in `problems`), the sweep expansion in
`expand`.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from pipeline.errors import ScenarioFileError
from pipeline.limits import DEFAULT_MAX_ROWS
from pipeline.model.catalog import Catalog
from pipeline.model.ops import DIM
from pipeline.scenarios.checks import Checker
from pipeline.scenarios.expand import idle_chip_warnings
from pipeline.scenarios.header import (
    KNOWN,
    check_columns,
    normalize_headers,
    nul_cells,
    rename_reserved,
)
from pipeline.scenarios.loaded import Loaded
from pipeline.scenarios.read import read_table
from pipeline.scenarios.records import records_table
from pipeline.textfile import read_bytes


def load_scenarios(path: Path, catalog: Catalog, max_rows: int = DEFAULT_MAX_ROWS) -> Loaded:
    """Read and check one scenario CSV; ScenarioFileError when the file cannot be used."""
    path = Path(path)
    data = read_bytes(path, ScenarioFileError, "scenario file")
    warnings: list[str] = []
    table, lines, fields = read_table(path, data, warnings)
    return _check(str(path), table, lines, fields, catalog, max_rows, warnings, data)


def load_records(
    rows: pd.DataFrame | list[dict],
    catalog: Catalog,
    max_rows: int = DEFAULT_MAX_ROWS,
    source: str = "<rows>",
) -> Loaded:
    """Check scenarios given in memory (a DataFrame or a list of dicts, the columns of a
    scenario file); a row's line is its position + 2, as if read from a CSV with a header."""
    table, lines = records_table(rows, source)
    return _check(source, table, lines, None, catalog, max_rows, [], None)


def _check(source, table, lines, fields, catalog, max_rows, warnings, data) -> Loaded:
    path = Path(source)
    columns = normalize_headers(table.column_names, path)
    columns, renamed = rename_reserved(columns, path)
    table = table.rename_columns(columns)
    dims = sorted(c for c in columns if DIM.match(c))
    extras = [c for c in columns if c not in KNOWN and c not in dims]
    warnings = [*warnings, *renamed, *check_columns(columns, extras, path)]
    table, nul_problems = nul_cells(table)
    checker = Checker(table, lines, fields, source, catalog, nul_problems)
    frame = checker.run(dims, max_rows)
    warnings += idle_chip_warnings(frame, path)
    return Loaded(
        source=source,
        frame=frame,
        problems=tuple(checker.sorted_problems()),
        table=table,
        lines=lines,
        dims=tuple(dims),
        extras=tuple(extras),
        warnings=tuple(warnings),
        data=data,
    )
