"""Scenarios in: read (a CSV or Parquet file, a workbook's sheet, a DataFrame or a list of
dicts), check every row, report every problem, and hand on the valid rows typed and expanded
(docs/input.md).

`load_scenarios` (a file: CSV, workbook or Parquet) and `load_records` (rows in memory)
return a `Loaded` (`loaded`). The reading is in `read` (CSV), `sheet` and `xlsx` (workbooks),
`parquet` and `records`, the header in `header`, the row checks in `checks` (with `links`,
`dims` and `sweeps`; their problems in `problems`), the sweep expansion in `expand`.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from pipeline.catalogs.hardware import Catalog
from pipeline.errors import ScenarioFileError
from pipeline.limits import DEFAULT_MAX_ROWS
from pipeline.model.ops import DIM
from pipeline.scenarios.checks import Checker
from pipeline.scenarios.header import (
    INPUTS,
    check_columns,
    normalize_headers,
    nul_cells,
    rename_reserved,
)
from pipeline.scenarios.lists import expand_fleet
from pipeline.scenarios.loaded import Loaded
from pipeline.scenarios.parquet import is_parquet, read_parquet
from pipeline.scenarios.plan import FLEET_LIMIT, FLEET_LIMIT_NAME
from pipeline.scenarios.plan import plan as plan_rows
from pipeline.scenarios.reach import reach_warnings
from pipeline.scenarios.read import read_table
from pipeline.scenarios.records import records_table
from pipeline.scenarios.xlsx.package import is_workbook
from pipeline.scenarios.xlsx.sheet import read_sheet, sheet_problems
from pipeline.textfile import decode_as, decode_utf8, read_bytes


def load_scenarios(
    path: Path,
    catalog: Catalog,
    max_rows: int = DEFAULT_MAX_ROWS,
    *,
    sheet: str | None = None,
    encoding: str | None = None,
    planned: bool = False,
    keep_columns: Iterable[str] = (),
    models=None,
) -> Loaded:
    """Read and check one scenario file, a CSV (in UTF-8, else `encoding`) or a workbook's
    sheet (`sheet`, else the one `sheet.read_sheet` picks); ScenarioFileError when the file
    cannot be used. `planned`: check the rows but leave their sweeps unexpanded, in
    `Loaded.planned` (the Dask engine expands them by partition; max_rows does not apply).
    `keep_columns`: the user's own columns, carried even when close to a known one's name.
    `models`: the model catalog transformer rows read (a ModelCatalog; None: the built-in)."""
    path = Path(path)
    data = read_bytes(path, ScenarioFileError, "scenario file")
    if is_workbook(path.name, data):
        got = read_sheet(path, data, sheet)
        return _check(got.label, got.table, got.lines, None, catalog, max_rows, got.warnings,
                      data, got.odd, planned, (got.header, keep_columns), models)  # fmt: skip
    if is_parquet(path.name, data):  # rows numbered as its CSV's lines (scenarios.parquet)
        table, lines = read_parquet(path, data)
        return _check(str(path), table, lines, None, catalog, max_rows, [], data,
                      planned=planned, header=(1, keep_columns), models=models)  # fmt: skip
    if encoding is None:  # checked first, so a failure can say --encoding
        decode_utf8(path, data, ScenarioFileError, "--encoding")
        text = data
    else:
        text = decode_as(path, data, encoding, ScenarioFileError).encode("utf-8")
    warnings: list[str] = []
    table, lines, fields, head = read_table(path, text, warnings)
    return _check(
        str(path), table, lines, fields, catalog, max_rows, warnings, data, planned=planned,
        header=(head, keep_columns), models=models,
    )  # fmt: skip


def load_records(
    rows: pd.DataFrame | list[dict],
    catalog: Catalog,
    max_rows: int = DEFAULT_MAX_ROWS,
    source: str = "<rows>",
    keep_columns: Iterable[str] = (),
    models=None,
) -> Loaded:
    """Check scenarios given in memory (a DataFrame or a list of dicts, the columns of a
    scenario file); a row's line is its position + 2, as if read from a CSV with a header."""
    table, lines = records_table(rows, source)
    return _check(source, table, lines, None, catalog, max_rows, [], None,
                  header=(1, keep_columns), models=models)  # fmt: skip


def _check(
    source,
    table,
    lines,
    fields,
    catalog,
    max_rows,
    warnings,
    data,
    odd=(),
    planned=False,
    header=(1, ()),
    models=None,
) -> Loaded:
    """`header`: the header's line, and the columns the user keeps as their own."""
    path = Path(source)
    line, keep = header
    given = table.column_names  # as written: check_columns splits words at case changes
    columns = normalize_headers(given, path, line)
    columns, renamed = rename_reserved(columns, path, line)
    table = table.rename_columns(columns)
    dims = sorted(c for c in columns if DIM.match(c))
    extras = [c for c in columns if c not in INPUTS and c not in dims]
    check_columns(columns, extras, path, line, keep, given)
    warnings = [*warnings, *renamed]
    table, nul_problems = nul_cells(table)
    found = [*sheet_problems(odd, columns), *nul_problems]  # a workbook's non-text cells
    limit = (FLEET_LIMIT, FLEET_LIMIT_NAME) if planned else (max_rows, "--max-rows")
    fleet = expand_fleet(table, lines, fields, found, catalog, *limit, models)
    made = fleet if fleet.labels is not None else None  # rows that fleet lists made
    checker = Checker(
        fleet.table, fleet.lines, fleet.fields, source, catalog, fleet.found, made, models
    )
    plan = None
    if planned:  # checked, not expanded: chips and links are never swept dims
        frame, valid, sweeps, arrays = checker.checked(dims)
        plan, over = plan_rows(frame, valid, sweeps, arrays)
        checker.found += over
        frame = frame[plan.valid].reset_index(drop=True)
        warnings += reach_warnings(frame, catalog, path, plan.counts[plan.valid])
    else:
        frame = checker.run(dims, max_rows)
        warnings += reach_warnings(frame, catalog, path)
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
        planned=plan,
    )
