"""Reading a scenario sheet of an .xlsx workbook into the table the CSV reader makes: every
cell as the text a CSV would hold, each row with its spreadsheet row number, so a sheet goes
through exactly the checks a CSV goes through (docs/input.md#a-workbook).

Read with python-calamine: 7 x faster than openpyxl's read-only mode on 100,000 rows
(benchmarks/bench_xlsx_input.py), formula cells by their saved values, and a sheet's extent
from its cells with values (a formatted empty cell on row 1,000,000 costs nothing).
"""

from __future__ import annotations

import datetime as dt
import io
import math
import zipfile
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from pipeline.errors import ScenarioFileError, printable, quoted
from pipeline.model.catalog import EFFICIENCY_COLUMNS
from pipeline.model.ops import DIM
from pipeline.scenarios.header import OVERRIDES, REQUIRED
from pipeline.scenarios.problems import BOOLEAN, DATE, FORMULA, Found
from pipeline.scenarios.xlsx import open_package, sheet_part, uncached_formulas

PREFERRED = ("Scenarios", "Inputs")  # the template's sheet, then the one `pipeline run` writes
NUMBER_COLUMNS = frozenset(
    ("chips", "flops", "bytes", *OVERRIDES, *EFFICIENCY_COLUMNS, "measured_seconds")
)
# the Inputs sheet's last row when --workbook-input-rows left rows out (render.workbook)
CAPPED_NOTE = "Not every input row is on this sheet"
EXACT = 2**53  # a float up to this is written as the whole number it is


@dataclass(frozen=True)
class Sheet:
    """A sheet read as text cells, the cells that were not text, and what to warn about."""

    label: str  # FILE[SHEET], the file named in every message
    table: pa.Table
    lines: np.ndarray  # each row's spreadsheet row number
    odd: list[tuple[int, int, str, str]] = field(default_factory=list)  # pos, col, kind, text
    warnings: list[str] = field(default_factory=list)


def read_sheet(path, data: bytes, sheet: str | None = None) -> Sheet:
    """The scenario sheet of workbook `path` (`sheet`, else Scenarios, else Inputs, else the
    first); ScenarioFileError when the workbook or the sheet cannot be used."""
    import python_calamine  # here: the CLI's start-up does not pay for it

    package = open_package(path, data)
    try:
        book = python_calamine.CalamineWorkbook.from_filelike(io.BytesIO(data))
        names = list(book.sheet_names)
        name = _choose(path, names, sheet)
        cells = book.get_sheet_by_name(name)  # parses the sheet: once
        rows = cells.to_python(skip_empty_area=False)
        merged = cells.merged_cell_ranges or []
        formulas = uncached_formulas(package, sheet_part(package, name))
    except python_calamine.PasswordError as exc:
        raise ScenarioFileError(
            f"{printable(path)}: the workbook is password-protected (encrypted), so its cells "
            "cannot be read; save a copy without the password and give that"
        ) from exc
    except (python_calamine.CalamineError, zipfile.BadZipFile, OSError, ValueError) as exc:
        raise ScenarioFileError(f"{printable(path)}: cannot read the workbook: {exc}") from exc
    label = f"{path}[{name}]"
    return _table(label, name, rows, merged, formulas)


def _choose(path, names: list[str], sheet: str | None) -> str:
    if sheet is not None:
        if sheet in names:
            return sheet
        raise ScenarioFileError(
            f"{printable(path)}: no sheet {quoted(sheet)}; the workbook has "
            + ", ".join(quoted(n) for n in names)
        )
    for preferred in PREFERRED:
        if preferred in names:
            return preferred
    if not names:
        raise ScenarioFileError(f"{printable(path)}: the workbook has no sheet")
    return names[0]


def _table(label: str, name: str, rows: list[list], merged, formulas) -> Sheet:
    where = printable(label)
    texts, odd = _texts(rows, formulas)
    filled = np.zeros(len(rows), dtype=bool)
    for col in texts:
        filled |= col != ""
    used = np.flatnonzero(filled)
    if len(used) == 0:
        raise ScenarioFileError(f"{where}: no header and no scenario rows (the sheet is empty)")
    head = int(used[0])
    header = [col[head].strip() for col in texts]
    _check_header_row(where, header, [[col[r] for col in texts] for r in used[1:20].tolist()], used)
    for (r0, c0), (r1, c1) in merged:
        if r1 >= head and r0 <= used[-1]:  # a merged title above the table, or below, is fine
            raise ScenarioFileError(
                f"{where}:{r0 + 1}: cells {_ref(r0, c0)}:{_ref(r1, c1)} are merged; a scenario "
                "table needs one value per cell: unmerge them"
            )
    keep = [c for c, h in enumerate(header) if h or (texts[c][used] != "").any()]
    warnings: list[str] = []
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
    odd = [(position[r], slot[c], k, t) for r, c, k, t in odd if r in position and c in slot]
    return Sheet(where, table, body.astype(np.int64) + 1, odd, warnings)


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


def _ref(row: int, col: int) -> str:
    letters = ""
    col += 1
    while col:
        col, rem = divmod(col - 1, 26)
        letters = chr(65 + rem) + letters
    return f"{letters}{row + 1}"


def _texts(rows: list[list], formulas) -> tuple[list[np.ndarray], list[tuple[int, int, str, str]]]:
    """The cells column by column as CSV text (object arrays of str), and the cells that were
    a date, a boolean or a formula with no saved value: (row, column, kind, text)."""
    width = max((len(r) for r in rows), default=0)
    if any(len(r) != width for r in rows):
        rows = [r + [""] * (width - len(r)) for r in rows]
    grid = np.empty((len(rows), width), dtype=object)
    grid[:] = rows  # one C pass (a column at a time costs 3 x more)
    columns = [grid[:, c] for c in range(width)]
    odd: list[tuple[int, int, str, str]] = []
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
                odd.append((r, c, "boolean", col[r]))
            elif isinstance(v, dt.date | dt.time | dt.timedelta):
                col[r] = str(v) if isinstance(v, dt.timedelta) else v.isoformat()
                odd.append((r, c, "date", col[r]))
            elif type(v) is not str:
                col[r] = str(v)
    for (r, c), text in formulas.items():
        if r < len(rows) and c < width:
            columns[c][r] = text
            odd.append((r, c, "formula", text))
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
    a formula with no value saved in any column. `columns`: the normalized header."""
    found: Found = []
    for pos, c, kind, text in odd:
        column = columns[c]
        number = column in NUMBER_COLUMNS or DIM.match(column) is not None
        if kind == "formula":
            found.append(
                (
                    pos,
                    column,
                    f"{FORMULA} {quoted(text)} has no value saved: open "
                    "the workbook in Excel or LibreOffice and save it, or type the value",
                )
            )
        elif number and kind == "date":
            found.append(
                (
                    pos,
                    column,
                    f"{DATE} ({text}), not a number: Excel took the value for "
                    "a date; type the number and format the cell as Number or Text",
                )
            )
        elif number:
            found.append((pos, column, f"{BOOLEAN} ({text}), not a number"))
    return found
