"""Reading a scenario sheet of an .xlsx workbook into the table the CSV reader makes: every
cell as the text a CSV would hold, each row with its spreadsheet row number, so a sheet goes
through exactly the checks a CSV goes through (docs/input.md#a-workbook).

Read with python-calamine: 7 x faster than openpyxl's read-only mode on 100,000 rows
(benchmarks/bench_xlsx_input.py), formula cells by their saved values, and a sheet's extent
from its cells with values (a formatted empty cell on row 1,000,000 costs nothing). Before
python-calamine is asked for the sheet, `budget` checks its XML against the budgets (a far
cell, shared strings used many times) and finds the cells python-calamine reads as empty that
are not: formulas with no value saved, error values (`#N/A`), each a row problem.
"""

from __future__ import annotations

import datetime as dt
import io
import math
import zipfile
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from pipeline.catalogs.hardware import EFFICIENCY_COLUMNS
from pipeline.errors import ScenarioFileError, printable, quoted
from pipeline.i18n import _
from pipeline.model.ops import DIM
from pipeline.scenarios.header import (
    MEASURED_UNITS,
    OVERRIDES,
    REQUIRED,
    normal_name,
    nul_message,
)
from pipeline.scenarios.problems import BOOLEAN, DATE, ERROR, FORMULA, Found
from pipeline.scenarios.xlsx.budget import Scan, ref, scan_sheet
from pipeline.scenarios.xlsx.package import DAMAGED, SheetEntry, open_package

PREFERRED = ("Scenarios", "Inputs")  # the template's sheet, then the one `pipeline run` writes
NUMBER_COLUMNS = frozenset(
    ("chips", "flops", "bytes", *OVERRIDES, *EFFICIENCY_COLUMNS, *MEASURED_UNITS)
)
# the Inputs sheet's last row when --workbook-input-rows left rows out (render.workbook.book)
CAPPED_NOTE = "Not every input row is on this sheet"
EXACT = 2**53  # a float up to this is written as the whole number it is
Odd = tuple[int, int, str, str, str]  # row, column, kind, text, the cell's name (B7)


@dataclass(frozen=True)
class Sheet:
    """A sheet read as text cells, the cells that were not text, and what to warn about."""

    label: str  # FILE[SHEET], the file named in every message
    table: pa.Table
    lines: np.ndarray  # each row's spreadsheet row number
    odd: list[Odd] = field(default_factory=list)  # position, column, kind, text, cell
    warnings: list[str] = field(default_factory=list)
    header: int = 1  # the header's spreadsheet row


def read_sheet(path, data: bytes, sheet: str | None = None) -> Sheet:
    """The scenario sheet of workbook `path` (`sheet`, else Scenarios, else Inputs, else the
    first); ScenarioFileError when the workbook or the sheet cannot be used. The sheet's XML
    is checked against the budgets (`budget`) before python-calamine is asked for it."""
    import python_calamine  # here: the CLI's start-up does not pay for it

    package = open_package(path, data)
    xl = package.xl_folder()
    entries = package.sheets(xl)
    entry = _choose(path, entries, sheet)
    where = printable(f"{path}[{entry.name}]")
    part = None if entry.part is None else package.member(entry.part)
    if part is None:
        raise ScenarioFileError(
            f"{where}: the workbook has no part holding this sheet "
            f"({quoted(entry.part or 'no relationship')}); {DAMAGED}"
        )
    package.check_unpacked([*package.opening_parts(xl), part])
    scan = scan_sheet(package, part, xl, where)
    try:
        book = python_calamine.CalamineWorkbook.from_filelike(io.BytesIO(data))
        if list(book.sheet_names) != [e.name for e in entries]:
            raise ScenarioFileError(
                f"{where}: the workbook's list of sheets reads two ways; {DAMAGED}"
            )
        cells = book.get_sheet_by_name(entry.name)  # parses the sheet: once
        _agree(where, cells.end, scan)
        rows = cells.to_python(skip_empty_area=False)
        merged = cells.merged_cell_ranges or []
    except python_calamine.PasswordError as exc:
        raise ScenarioFileError(
            f"{printable(path)}: the workbook is password-protected (encrypted), so its cells "
            "cannot be read; save a copy without the password and give that"
        ) from exc
    except (python_calamine.CalamineError, zipfile.BadZipFile, OSError, ValueError) as exc:
        raise ScenarioFileError(f"{printable(path)}: cannot read the workbook: {exc}") from exc
    for (r, c), (kind, text) in scan.marks.items():
        if r < len(rows) and c < len(rows[r]) and rows[r][c] != "":
            raise ScenarioFileError(
                f"{where}: cell {ref(r, c)} reads as a value, but its XML holds "
                f"{_what(kind, text)}; {DAMAGED}"
            )
    warnings = _hidden(where, entry, entries) if sheet is None else []
    by_default = len(entries) > 1 and sheet is None and entry.name not in PREFERRED
    names = [e.name for e in entries] if by_default else None
    return _table(where, entry.name, rows, merged, scan.marks, warnings, names)


def _choose(path, entries: list[SheetEntry], sheet: str | None) -> SheetEntry:
    named = {e.name: e for e in reversed(entries)}
    if sheet is not None:
        if sheet in named:
            return named[sheet]
        raise ScenarioFileError(
            f"{printable(path)}: no sheet {quoted(sheet)}; the workbook has "
            + ", ".join(quoted(e.name) for e in entries)
        )
    for preferred in PREFERRED:
        if preferred in named:
            return named[preferred]
    if not entries:
        raise ScenarioFileError(f"{printable(path)}: the workbook has no sheet")
    return entries[0]


def _hidden(where: str, entry: SheetEntry, entries: list[SheetEntry]) -> list[str]:
    """A warning when the sheet read (none named) is hidden in the workbook."""
    if entry.state == "visible":
        return []
    shown = [quoted(e.name) for e in entries if e.state == "visible"]
    return [
        f"{where}: the sheet read, {quoted(entry.name)}, is hidden in the workbook (a sheet "
        "named 'Scenarios' is read first, then 'Inputs', then the first sheet); "
        + (f"the visible ones are {', '.join(shown)}: " if shown else "")
        + "give --sheet NAME to read another"
    ]


def _agree(where: str, end, scan: Scan) -> None:
    """python-calamine's farthest cell lies within the scan's: else the two read the XML
    differently, and the scan's formula and error cells cannot be trusted (fail closed)."""
    if end is not None and (end[0] > scan.last[0] or end[1] > scan.last[1]):
        raise ScenarioFileError(
            f"{where}: the sheet's XML reads two ways (python-calamine finds a value at "
            f"{ref(*end)}, past the cells the check of the XML found); {DAMAGED}"
        )


def _table(where: str, name: str, rows: list[list], merged, marks, warnings, sheets) -> Sheet:
    """The sheet's cells as the CSV reader's table. `sheets`: every sheet's name when the
    sheet was read for being the first (none named Scenarios or Inputs), else None."""
    texts, odd = _texts(rows, marks)
    filled = np.zeros(len(texts[0]) if texts else 0, dtype=bool)
    for col in texts:
        filled |= col != ""
    used = np.flatnonzero(filled)
    if len(used) == 0:
        raise ScenarioFileError(f"{where}: no header and no scenario rows (the sheet is empty)")
    head = int(used[0])
    header = [col[head].strip() for col in texts]
    if sheets is not None and sum(normal_name(h) in REQUIRED for h in header) < 2:
        raise ScenarioFileError(
            f"{where}: no sheet is named 'Scenarios' or 'Inputs', so the first sheet, "
            f"{quoted(name)}, was read, and its first row is not a scenario header "
            f"({', '.join(REQUIRED)}, ...); the workbook has "
            f"{', '.join(quoted(s) for s in sheets)}: give the scenario sheet with --sheet NAME"
        )
    _check_header_row(where, header, [[col[r] for col in texts] for r in used[1:20].tolist()], used)
    for r, _c, kind, text, cell in odd:
        if r == head:
            raise ScenarioFileError(
                _("{file}:{line}: cell {cell} of the header is {what}; type the column's name",
                  file=where, line=r + 1, cell=cell, what=_what(kind, text))
            )  # fmt: skip
    for (r0, c0), (r1, c1) in merged:
        if r1 >= head and r0 <= used[-1]:  # a merged title above the table, or below, is fine
            raise ScenarioFileError(
                f"{where}:{r0 + 1}: cells {ref(r0, c0)}:{ref(r1, c1)} are merged; a scenario "
                "table needs one value per cell: unmerge them"
            )
    keep = [c for c, h in enumerate(header) if h or (texts[c][used] != "").any()]
    if name == "Inputs" and keep and header[keep[0]].lower() == "line":
        line_col, keep = keep[0], keep[1:]  # the tool's own Inputs sheet: its line is ours
        last = int(used[-1])
        if texts[line_col][last].startswith(CAPPED_NOTE):
            used = used[:-1]
            warnings.append(
                f"{where}:{last + 1}: this Inputs sheet holds only part of its run's input rows "
                "(--workbook-input-rows), so it cannot be run again whole; the rows it holds "
                "are read"
            )
    _check_header_cells(where, head, header, keep, texts, used)
    body = used[1:]
    if not len(body):
        raise ScenarioFileError(f"{where}: a header but no scenario rows: nothing to compute")
    # no empty row between: a slice, not a copy
    rows_at = body if body[-1] - body[0] + 1 != len(body) else slice(body[0], body[-1] + 1)
    columns = {
        f"c{i}": pa.array(texts[c][rows_at].tolist(), pa.string()) for i, c in enumerate(keep)
    }
    table = pa.table(columns).rename_columns([header[c] for c in keep])
    position = {int(r): p for p, r in enumerate(body.tolist())} if odd else {}
    slot = {c: i for i, c in enumerate(keep)}
    odd = [(position[r], slot[c], *rest) for r, c, *rest in odd if r in position and c in slot]
    return Sheet(where, table, body.astype(np.int64) + 1, odd, warnings, head + 1)


def _check_header_cells(where: str, head: int, header, keep, texts, used) -> None:
    """The header's cells as a CSV's header is checked, each problem at its cell (B1): a
    value in a column with no header, a name twice, a NUL byte."""
    seen: dict[str, int] = {}
    for c in keep:
        cell = ref(head, c)
        if not header[c]:
            r = int(used[np.flatnonzero(texts[c][used] != "")[0]])
            raise ScenarioFileError(
                _("{file}:{line}: cell {cell} holds {value}, but its column has no header "
                  "({header} is empty): name the column in {header}, or clear the cell",
                  file=where, line=r + 1, cell=ref(r, c), value=quoted(texts[c][r]),
                  header=cell)
            )  # fmt: skip
        if "\x00" in header[c]:
            raise ScenarioFileError(f"{where}:{head + 1}: cell {cell}: {nul_message(header[c])}")
        name = normal_name(header[c])
        if name in seen:
            raise ScenarioFileError(
                _("{file}:{line}: column names appear twice: {names}", file=where,
                  line=head + 1, names=_("{name} (cells {first} and {second})",
                  name=quoted(name), first=ref(head, seen[name]), second=cell))
            )  # fmt: skip
        seen[name] = c


def _what(kind: str, text: str) -> str:
    if kind == "formula":
        return f"a formula with no value saved ({quoted(text)})"
    return f"an error value ({quoted(text)})" if kind == "error" else f"a {kind} ({text})"


def _check_header_row(where: str, header: list[str], below: list[list[str]], used) -> None:
    """The header is the first non-empty row: a title above it is refused, naming both."""
    if sum(h.lower() in REQUIRED for h in header) >= 2:
        return
    for k, cells in enumerate(below):
        if sum(c.strip().lower() in REQUIRED for c in cells) >= 2:
            row, first = int(used[k + 1]) + 1, int(used[0]) + 1
            raise ScenarioFileError(
                f"{where}:{row}: the header ({', '.join(REQUIRED)}, ...) is on row {row}, but "
                f"row {first} is the first non-empty row: the header must be the first; "
                f"delete rows {first} to {row - 1}"
            )


def _texts(rows: list[list], marks) -> tuple[list[np.ndarray], list[Odd]]:
    """The cells column by column as CSV text (object arrays of str), and the cells that were
    a date, a boolean, a formula with no saved value or an error value: (row, column, kind,
    text, cell). The grid grows to hold a marked cell past python-calamine's range."""
    height = max([len(rows), *(r + 1 for r, _ in marks)])
    width = max([0, *map(len, rows), *(c + 1 for _, c in marks)])
    if height != len(rows) or any(len(r) != width for r in rows):
        rows = [r + [""] * (width - len(r)) for r in rows]
        rows += [[""] * width for _ in range(height - len(rows))]
    grid = np.empty((len(rows), width), dtype=object)
    grid[:] = rows  # one C pass (a column at a time costs 3 x more)
    columns = [grid[:, c] for c in range(width)]
    odd: list[Odd] = []
    for c, col in enumerate(columns):
        types = list(map(type, col.tolist()))
        kinds = set(types)
        if kinds <= {str}:
            continue
        if kinds <= {str, float}:
            _numbers(col, types)
            continue
        for r, v in enumerate(col.tolist()):
            if type(v) is float:
                col[r] = _float_text(v)
            elif isinstance(v, bool):
                col[r] = "TRUE" if v else "FALSE"
                odd.append((r, c, "boolean", col[r], ref(r, c)))
            elif isinstance(v, dt.date | dt.time | dt.timedelta):
                col[r] = str(v) if isinstance(v, dt.timedelta) else v.isoformat()
                odd.append((r, c, "date", col[r], ref(r, c)))
            elif type(v) is not str:
                col[r] = str(v)
    for (r, c), (kind, text) in marks.items():
        columns[c][r] = text
        odd.append((r, c, kind, text, ref(r, c)))
    return columns, odd


def _numbers(col: np.ndarray, types: list[type]) -> None:
    """The floats of a column of floats and text as CSV text, in place, in a few array passes:
    a whole number up to 2^53 as an integer (4096.0 is 4096), any other as repr() writes it."""
    at = np.flatnonzero(np.fromiter((t is float for t in types), bool, len(types)))
    values = col[at].astype(float)
    whole = (values == np.floor(values)) & (np.abs(values) <= EXACT)
    texts = pa.array(values[whole].astype(np.int64)).cast(pa.string())
    col[at[whole]] = texts.to_pylist()
    col[at[~whole]] = [repr(v) for v in values[~whole].tolist()]


def _float_text(v: float) -> str:
    """A float as CSV text: a whole number up to 2^53 as an integer, any other as repr()."""
    return str(int(v)) if math.isfinite(v) and v == int(v) and abs(v) <= EXACT else repr(v)


def sheet_problems(odd, columns: list[str]) -> Found:
    """The problems of the cells that were not text: a date or a boolean in a number column,
    a formula with no value saved or an error value in any column. `columns`: the normalized
    header."""
    found: Found = []
    for pos, c, kind, text, cell in odd:
        column = columns[c]
        number = column in NUMBER_COLUMNS or DIM.match(column) is not None
        if kind == "formula":
            reason = (
                f"{FORMULA} {quoted(text)} has no value saved: open the workbook in Excel or "
                "LibreOffice and save it, or type the value"
            )
        elif kind == "error":
            reason = (
                f"{ERROR} {quoted(text)} (cell {cell}): Excel could not compute it; fix what "
                "its formula refers to, or type the value"
            )
        elif number and kind == "date":
            reason = (
                f"{DATE} ({text}), not a number: Excel took the value for a date; type the "
                "number and format the cell as Number or Text"
            )
        elif number:
            reason = f"{BOOLEAN} ({text}), not a number"
        else:
            continue
        found.append((pos, column, reason))
    return found
