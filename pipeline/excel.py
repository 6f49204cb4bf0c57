"""The workbook planners pass around (DESIGN §7): XlsxWriter in constant-memory mode.

Sheets, in order: Summary, Results, Hardware, Inputs, Errors (only when rows were rejected),
Charts (only when plots were made). Rows are streamed one at a time, so memory stays flat
however many rows; the Results and Inputs sheets hold at most `max_rows` rows and the Summary
says what was left out.

Numbers stay numbers: every cell holds the SI value of results.csv and a number format does
the human part. Excel formats can divide by 1,000 (a trailing comma) but never multiply, so:
- FLOP/s, FLOPs and bytes are scaled down by trailing commas: TFLOP/s (GFLOP/s, MFLOP/s below
  one tera), TFLOP, GB / MB (whole bytes below a megabyte), bandwidths in GB/s;
- seconds are shown in engineering notation, whose exponents are the SI prefixes
  (`1.011E-3 s` = 1.011 ms, `240.000E-6 s` = 240 µs); a format cannot turn 0.001 into "1 ms".

Text from the input (names, notes, extra columns) is never a formula: the workbook is written
with strings_to_formulas/numbers/urls off, and cells that start with = + - @ tab or CR get a
quote-prefix format so Excel keeps them text even when someone edits the cell.
"""

from __future__ import annotations

import math
import os
import re
import tempfile
from collections.abc import Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd
import xlsxwriter
from xlsxwriter.exceptions import XlsxWriterException
from xlsxwriter.format import Format
from xlsxwriter.image import Image
from xlsxwriter.utility import xl_rowcol_to_cell
from xlsxwriter.worksheet import Worksheet

from pipeline.errors import OutputError
from pipeline.hardware import COLUMNS as HARDWARE_COLUMNS
from pipeline.limits import DEFAULT_WORKBOOK_ROWS
from pipeline.meta import Chart, RunMeta

EXCEL_MAX_ROWS = 1_048_576  # Excel's row limit, header included
BOUNDS = ("compute", "memory", "network")
CRITICAL_BATCH_LINES = 50  # series listed on the Summary sheet
CHART_WIDTH_PX = 900  # charts wider than this are scaled down to it
ROW_HEIGHT_PX = 20  # Excel's default row height (15 pt)
ROW_HEIGHT_PT = 15
CHUNK_ROWS = 10_000  # rows converted to Python values at a time
WRAP_WIDTH = 100  # characters, for long text that wraps (hardware sources)
CELL_CHARS = 32_767  # Excel's limit of characters in one cell

WORKBOOK_OPTIONS = {
    "constant_memory": True,
    "strings_to_formulas": False,  # untrusted text stays text (OWASP formula injection)
    "strings_to_numbers": False,
    "strings_to_urls": False,
    "nan_inf_to_errors": False,  # NaN never reaches a cell: it is written as a blank
}

# Number formats (see the module docstring). Conditions use plain digits: Excel and
# LibreOffice both read them.
SECONDS = '[=0]0" s";##0.000E+0" s"'
FLOP_RATE = (
    '[>=1000000000000]#,##0.00,,,," TFLOP/s";'
    '[>=1000000000]#,##0.00,,," GFLOP/s";#,##0.00,," MFLOP/s"'
)
FLOP_COUNT = (
    '[>=1000000000000]#,##0.00,,,," TFLOP";[>=1000000000]#,##0.00,,," GFLOP";#,##0.00,," MFLOP"'
)
BYTES = '[>=1000000000]#,##0.00,,," GB";[>=1000000]#,##0.00,," MB";#,##0" B"'
BANDWIDTH = '#,##0.0,,," GB/s"'
INTENSITY = '#,##0.0" FLOP/B"'
FRACTION = "0.0%"
RATIO = '0.00"×"'
INTEGER = "#,##0"
PLAIN_INTEGER = "0"

RESULT_FORMATS = {
    "chips": INTEGER,
    "flops": FLOP_COUNT,
    "flops_per_chip": FLOP_COUNT,
    "bytes_read": BYTES,
    "bytes_written": BYTES,
    "hbm_bytes": BYTES,
    "network_bytes": BYTES,
    "peak_flops": FLOP_RATE,
    "hbm_bandwidth": BANDWIDTH,
    "link_bandwidth": BANDWIDTH,
    "intensity": INTENSITY,
    "critical_intensity": INTENSITY,
    "t_math": SECONDS,
    "t_hbm": SECONDS,
    "t_network": SECONDS,
    "t_lower": SECONDS,
    "t_upper": SECONDS,
    "attainable_flops": FLOP_RATE,
    "peak_fraction": FRACTION,
    "critical_batch": INTEGER,
    "memory_footprint": BYTES,
    "hbm_capacity": BYTES,
    "measured_seconds": SECONDS,
    "measured_over_predicted": RATIO,
}
WIDTHS = {
    SECONDS: 14,
    FLOP_RATE: 17,
    FLOP_COUNT: 16,
    BYTES: 13,
    BANDWIDTH: 14,
    INTENSITY: 15,
    FRACTION: 9,
    RATIO: 9,
    INTEGER: 9,
    PLAIN_INTEGER: 7,
}
# fill, font: Excel's "good", "neutral" and a blue for network; "bad" for fits = FALSE
BOUND_COLOURS = {  # light tints of the charts' Okabe-Ito colours (plots.BOUND_COLORS)
    "compute": ("#CCE3F0", "#003E61"),
    "memory": ("#FBE5B3", "#6B4A00"),
    "network": ("#F3DDE9", "#6E2A52"),
}
NOT_FITTING_COLOURS = ("#FFC7CE", "#9C0006")
BOOK_SHEETS = ("Summary", "Results", "Hardware", "Inputs")  # then Errors, Charts if any
FORMULA_STARTS = "=+-@\t\r"  # first characters a spreadsheet may read as a formula (OWASP)
_HOSTILE = "[" + re.escape(FORMULA_STARTS) + "]"


def write_workbook(
    path: Path,
    meta: RunMeta,
    results: pd.DataFrame,
    inputs: pd.DataFrame,
    errors: pd.DataFrame,
    hardware: list[dict],
    charts: Sequence[Chart],
    run_dir: Path,
    *,
    max_rows: int = DEFAULT_WORKBOOK_ROWS,
    max_input_rows: int | None = None,
    chart_notices: Sequence[str] = (),
) -> list[str]:
    """Write workbook.xlsx at `path` in one go; returns notices, plain sentences for the run's
    summary (what the row caps left out, which chart PNGs were missing). The Summary sheet shows
    them together with meta.notices and `chart_notices` (the chart stage's own). The file
    appears at `path` only once it is whole. `max_input_rows` caps the Inputs sheet on its own
    (default: `max_rows`)."""
    writer = WorkbookWriter(path, max_rows=max_rows, max_input_rows=max_input_rows)
    writer.write_rows(results, inputs)
    counts = summary_counts(results)
    return writer.finish(
        meta, counts, len(inputs), errors, len(errors), hardware, charts, chart_notices, run_dir
    )


class WorkbookWriter:
    """workbook.xlsx in two steps, so its slow part can start before the run is complete.

    `write_rows` writes the Results and Inputs sheets from the first rows of the run (those
    under the caps are all it needs); `finish` then writes what needs the whole run (Summary,
    Hardware, Errors, Charts), closes the book and moves it into place. Sheets may be written
    in any order in constant-memory mode: each has its own temp file, beside the target (not
    in a RAM-backed /tmp). `discard` drops a book that will not be finished.
    """

    def __init__(self, path: Path, *, max_rows: int = DEFAULT_WORKBOOK_ROWS, max_input_rows=None):
        if max_rows < 0:
            raise ValueError(f"max_rows must be 0 or more, not {max_rows}")
        self.path = Path(path)
        self.cap = min(max_rows, EXCEL_MAX_ROWS - 1)
        self.input_cap = (
            self.cap if max_input_rows is None else min(max(max_input_rows, 0), self.cap)
        )
        with _output_errors(self.path):
            self.tmp = tempfile.TemporaryDirectory(
                dir=self.path.parent, prefix=f".{self.path.name}.", ignore_cleanup_errors=True
            )
            self.staged = Path(self.tmp.name) / self.path.name
            self.book = xlsxwriter.Workbook(
                str(self.staged), {**WORKBOOK_OPTIONS, "tmpdir": self.tmp.name}
            )
            self.styles = _Styles(self.book)
            self.sheets = {n: self.book.add_worksheet(n) for n in BOOK_SHEETS}
        self.cut_notices: list[str] = []

    def write_rows(self, results: pd.DataFrame, inputs: pd.DataFrame) -> None:
        """The Results and Inputs sheets: the first rows under each cap (give at least those)."""
        head = results.iloc[: self.cap]
        with _output_errors(self.path):
            cut = _write_table(self.sheets["Results"], self.styles, head, RESULT_FORMATS, 1)
            self.cut_notices += _cut_notices("Results", cut, "results.csv")
            _colour_results(self.sheets["Results"], self.styles, head.columns, len(head))
            inputs_formats = {"line": PLAIN_INTEGER}
            cut = _write_table(
                self.sheets["Inputs"], self.styles, inputs.iloc[: self.input_cap], inputs_formats, 2
            )
            self.cut_notices += _cut_notices("Inputs", cut, "the scenario file")

    def finish(
        self,
        meta: RunMeta,
        counts: SummaryCounts,
        inputs_total: int,
        errors: pd.DataFrame,
        errors_total: int,
        hardware: list[dict],
        charts: Sequence[Chart],
        chart_notices: Sequence[str],
        run_dir: Path,
    ) -> list[str]:
        """The sheets that speak of the whole run, then close; returns the notices.

        `counts` are summary_counts() of every row of the run; `errors` holds at least the
        first rejected rows under the cap; the totals count every input row and problem."""
        notices = _cap_notices(
            self.cap, counts.scenarios, inputs_total, errors_total, self.input_cap
        )
        present = [c for c in charts if (Path(run_dir) / c.path).is_file()]
        notices += [
            f"Chart '{c.title}' was not embedded: {c.path} is missing."
            for c in charts
            if c not in present
        ]
        with _output_errors(self.path):
            _set_properties(self.book, meta)
            hw = _hardware_frame(hardware)
            cut = _write_table(
                self.sheets["Hardware"], self.styles, hw, HW_FORMATS, 1, wrap=("source",)
            )
            notices += self.cut_notices + _cut_notices("Hardware", cut, "the hardware file")
            if len(errors):
                sheet = self.book.add_worksheet("Errors")
                errors_formats = {"line": PLAIN_INTEGER}
                cut = _write_table(sheet, self.styles, errors.iloc[: self.cap], errors_formats, 0)
                notices += _cut_notices("Errors", cut, "errors.csv")
            summary_notices = list(dict.fromkeys([*chart_notices, *notices]))
            _write_summary(self.sheets["Summary"], self.styles, meta, counts, summary_notices)
            if present:
                _write_charts(self.book.add_worksheet("Charts"), self.styles, present, run_dir)
            self.book.close()
            os.replace(self.staged, self.path)
            self.tmp.cleanup()
        return notices

    def discard(self) -> None:
        """Drop the book unwritten, with its temp files."""
        self.tmp.cleanup()


@contextmanager
def _output_errors(path: Path):
    """A failed write is the run's OutputError, naming the workbook."""
    try:
        yield
    except (OSError, XlsxWriterException) as exc:
        raise OutputError(f"writing {path} failed: {exc}") from exc


def workbook_cap_notices(
    max_rows: int, max_input_rows: int | None, results: int, inputs: int, errors: int
) -> list[str]:
    """What the workbook's row caps will leave out, before it is written."""
    cap = min(max_rows, EXCEL_MAX_ROWS - 1)
    input_cap = cap if max_input_rows is None else min(max(max_input_rows, 0), cap)
    return _cap_notices(cap, results, inputs, errors, input_cap)


def _cap_notices(
    cap: int, results: int, inputs: int, errors: int, input_cap: int | None = None
) -> list[str]:
    notices = []
    input_cap = cap if input_cap is None else input_cap
    if results > cap:
        notices.append(
            f"Results sheet holds the first {cap:,} of {results:,} rows; results.csv has them all."
        )
    if inputs > input_cap:
        notices.append(
            f"Inputs sheet holds the first {input_cap:,} of {inputs:,} input rows; "
            "the scenario file has them all."
        )
    if errors > cap:
        notices.append(
            f"Errors sheet holds the first {cap:,} of {errors:,} problems; errors.csv has them all."
        )
    return notices


def _set_properties(book: xlsxwriter.Workbook, meta: RunMeta) -> None:
    """Title and a creation date from the run, so the same run gives the same file."""
    props = {"title": f"Roofline run {meta.run_name}", "comments": meta.input_path}
    try:
        props["created"] = datetime.fromisoformat(meta.started)
    except ValueError:
        pass
    book.set_properties(props)


class _Styles:
    """The workbook's cell formats, made once (XlsxWriter formats belong to one workbook)."""

    def __init__(self, book: xlsxwriter.Workbook):
        self.book = book
        header = {"bold": True, "bg_color": "#D9E1F2", "bottom": 1, "quote_prefix": True}
        self.header = book.add_format(header)
        self.header_right = book.add_format({**header, "align": "right"})  # over counts
        # every format that carries text has the quote prefix: a title or label made of the
        # user's text (a chip name from a TOML file, a chart title) stays text when edited
        text = {"quote_prefix": True}
        self.title = book.add_format({**text, "bold": True, "font_size": 14})
        self.section = book.add_format({**text, "bold": True, "font_size": 12})
        self.label = book.add_format({**text, "bold": True})
        self.text = book.add_format(text)
        self.notice = book.add_format({**text, "bold": True, "font_color": "#9C0006"})
        self.count = book.add_format({"num_format": INTEGER, "align": "left"})
        self.bound = {
            b: book.add_format({**text, "bg_color": fill, "font_color": font})
            for b, (fill, font) in BOUND_COLOURS.items()
        }
        self.bound_header = {
            b: book.add_format(
                {
                    **text,
                    "bold": True,
                    "bottom": 1,
                    "bg_color": fill,
                    "font_color": font,
                    "align": "right",
                }
            )  # fmt: skip
            for b, (fill, font) in BOUND_COLOURS.items()
        }
        fill, font = NOT_FITTING_COLOURS
        self.not_fitting = book.add_format({**text, "bg_color": fill, "font_color": font})
        self._numbers: dict[tuple, Format | None] = {}

    def cell_format(self, num_format: str | None, *, top: bool = False, wrap: bool = False):
        """A cell format with this number format (None: General), made once per combination."""
        key = (num_format, top, wrap)
        if key not in self._numbers:
            props = {"num_format": num_format} if num_format else {}
            props |= {"valign": "top"} if top else {}
            props |= {"text_wrap": True} if wrap else {}
            self._numbers[key] = self.book.add_format(props) if props else None
        return self._numbers[key]


# ---------------------------------------------------------------- tables


class _Column(NamedTuple):
    """One column (or a block of it) ready for XlsxWriter."""

    cells: list  # Python values; None = blank
    is_text: bool
    hostile: np.ndarray  # row positions whose text begins like a formula
    cut: int = 0  # text cells cut to Excel's limit of CELL_CHARS characters


_NO_ROWS = np.empty(0, dtype=np.int64)


def _cells(series: pd.Series) -> _Column:
    """One column as Python values XlsxWriter writes directly, converted in one pass."""
    dtype = series.dtype
    if isinstance(dtype, pd.BooleanDtype) or dtype.kind == "b":
        return _Column(series.to_numpy(dtype=object, na_value=None).tolist(), False, _NO_ROWS)
    if dtype.kind in "iu":
        if isinstance(dtype, np.dtype):
            return _Column(series.to_numpy().tolist(), False, _NO_ROWS)
        cells = series.to_numpy(dtype=object, na_value=None).tolist()  # Int64 with NA
        return _Column(cells, False, _NO_ROWS)
    if dtype.kind == "f":
        values = series.to_numpy(dtype=float, na_value=np.nan)
        cells = values.astype(object)  # Python floats
        cells[np.isnan(values)] = None
        infinite = np.isinf(values)
        if infinite.any():  # Excel has no infinity; results.csv says "inf" too
            cells[infinite] = np.where(values[infinite] > 0, "inf", "-inf")
        return _Column(cells.tolist(), False, _NO_ROWS)
    hostile = np.flatnonzero(series.str.match(_HOSTILE, na=False).to_numpy(dtype=bool))
    cells = series.to_numpy(dtype=object, na_value=None, copy=True)
    cells[cells == ""] = None  # blank either way; None is XlsxWriter's shortest path
    if isinstance(dtype, np.dtype):  # plain object column: may hold non-strings
        cells = np.array(
            [c if c is None or isinstance(c, str) else str(c) for c in cells.tolist()] or [],
            dtype=object,
        )
    long = np.flatnonzero(series.str.len().fillna(0).to_numpy() > CELL_CHARS)
    for i in long.tolist():  # Excel holds at most CELL_CHARS characters in a cell
        cells[i] = cells[i][: CELL_CHARS - 1] + "…"
    return _Column(cells.tolist(), True, hostile, len(long))


def _hostile_rows(columns: list[_Column]) -> dict[int, list[tuple[int, str]]]:
    """Text cells that begin like a formula, by row: {row: [(col, text), ...]}."""
    found: dict[int, list[tuple[int, str]]] = {}
    for col, column in enumerate(columns):
        for row in column.hostile.tolist():
            found.setdefault(row, []).append((col, column.cells[row]))
    return found


def _width(name: str, cells: list, is_text: bool, num_format: str | None) -> int:
    """Column width in characters: the header plus the filter arrow, or the widest early cell."""
    width = len(str(name)) + 3
    if num_format is not None:
        return max(width, WIDTHS.get(num_format, 12))
    if is_text:
        sample = [len(c) for c in cells[:1000] if c is not None]
        return min(max([width, *sample]) + 1, 60)
    return max(width, 10)


def _write_table(
    sheet: Worksheet,
    styles: _Styles,
    frame: pd.DataFrame,
    formats: dict[str, str],
    freeze_cols: int,
    wrap: tuple[str, ...] = (),
) -> dict[str, int]:
    """Header row, then one row per frame row; header frozen, autofilter, widths, formats.

    Columns named in `wrap` wrap their text (and every cell is then top-aligned). Returns
    the number of cells cut to Excel's CELL_CHARS limit, per column that had any.
    """
    cut: dict[str, int] = {}
    names = list(frame.columns)
    first = [_cells(frame[c].iloc[:CHUNK_ROWS]) for c in names]
    # Column formats must exist before the first row: constant-memory rows are written out
    # as soon as the next row starts, and a cell without its own format takes the column's.
    for col, (name, column) in enumerate(zip(names, first, strict=True)):
        num_format = formats.get(name)
        fmt = styles.cell_format(num_format, top=bool(wrap), wrap=name in wrap)
        width = (
            WRAP_WIDTH if name in wrap else _width(name, column.cells, column.is_text, num_format)
        )
        sheet.set_column(col, col, width, fmt)
    for col, name in enumerate(names):
        sheet.write_string(0, col, str(name), styles.header)
    write_row, quoted = sheet.write_row, styles.text
    wrapped = [col for col, name in enumerate(names) if name in wrap]
    # Columns become Python lists a block at a time: vectorized conversion, flat memory.
    for start in range(0, len(frame), CHUNK_ROWS):
        block = (
            first
            if start == 0
            else [_cells(frame[c].iloc[start : start + CHUNK_ROWS]) for c in names]
        )
        hostile = _hostile_rows(block)
        for name, column in zip(names, block, strict=True):
            if column.cut:
                cut[str(name)] = cut.get(str(name), 0) + column.cut
        rows = zip(*(column.cells for column in block), strict=True)
        for row, values in enumerate(rows, start=start + 1):
            write_row(row, 0, values)
            if wrapped:  # constant memory: a row's height is set while it is the current row
                lines = max(math.ceil(len(values[c] or "") / (1.2 * WRAP_WIDTH)) for c in wrapped)
                if lines > 1:
                    sheet.set_row(row, ROW_HEIGHT_PT * lines)
            if row - start - 1 in hostile:
                for col, text in hostile[row - start - 1]:
                    sheet.write_string(row, col, text, quoted)
    sheet.freeze_panes(1, min(freeze_cols, max(len(names) - 1, 0)))
    sheet.set_landscape()  # printed: landscape, the header on every page
    sheet.repeat_rows(0)
    if names:
        sheet.autofilter(0, 0, len(frame), len(names) - 1)
        text_cols = [i for i, column in enumerate(first) if column.is_text]
        if text_cols and len(frame):
            # inputs are text as read ("4096"): no green "number stored as text" triangles
            ranges = " ".join(
                f"{xl_rowcol_to_cell(1, c)}:{xl_rowcol_to_cell(len(frame), c)}" for c in text_cols
            )
            sheet.ignore_errors({"number_stored_as_text": ranges})
    return cut


def _cut_notices(sheet: str, cut: dict[str, int], whole: str) -> list[str]:
    """Say which cells were cut to Excel's limit, and where the whole text is."""
    return [
        f"{n:,} cell(s) of column {column} on the {sheet} sheet held more than Excel's "
        f"{CELL_CHARS:,} characters and are cut there; {whole} has them whole."
        for column, n in cut.items()
    ]


def _colour_results(sheet: Worksheet, styles: _Styles, names, rows: int) -> None:
    """bound cells coloured by their value; fits = FALSE in red."""
    if rows == 0:
        return
    names = list(names)
    if "bound" in names:
        col = names.index("bound")
        for bound in BOUNDS:
            sheet.conditional_format(
                1,
                col,
                rows,
                col,
                {
                    "type": "cell",
                    "criteria": "==",
                    "value": f'"{bound}"',
                    "format": styles.bound[bound],
                },
            )
    if "fits" in names:
        col = names.index("fits")
        sheet.conditional_format(
            1,
            col,
            rows,
            col,
            {"type": "cell", "criteria": "==", "value": "FALSE", "format": styles.not_fitting},
        )


# ---------------------------------------------------------------- hardware

HW_FORMATS = {
    **{c: FLOP_RATE for c in HARDWARE_COLUMNS if c.startswith("peak_")},
    "hbm_capacity": BYTES,
    **{c: BANDWIDTH for c in HARDWARE_COLUMNS if c.endswith("_bandwidth")},
    **{c: SECONDS for c in HARDWARE_COLUMNS if c.endswith("_latency")},
}


def _hardware_frame(hardware: list[dict]) -> pd.DataFrame:
    """Catalog rows as a frame, numbers as floats; `source` last (it is long and wraps)."""
    keys = list(HARDWARE_COLUMNS)
    for record in hardware:
        keys += [k for k in record if k not in keys]
    keys = [k for k in keys if k != "source"] + ["source"]
    data = {}
    for key in keys:
        values = [record.get(key) for record in hardware]
        if key in HW_FORMATS:
            data[key] = pd.Series([np.nan if v in (None, "") else v for v in values], dtype=float)
        else:
            data[key] = pd.Series(
                [None if v in (None, "") else str(v) for v in values], dtype=object
            )
    return pd.DataFrame(data, columns=keys)


# ---------------------------------------------------------------- summary


class _Lines:
    """Writes the Summary sheet top to bottom (constant memory: rows only move forward)."""

    def __init__(self, sheet: Worksheet, styles: _Styles):
        self.sheet, self.styles, self.row = sheet, styles, 0

    def put(self, *cells) -> None:
        """One row: each cell a value or (value, format); None leaves the cell empty."""
        for col, cell in enumerate(cells):
            value, cell_fmt = cell if isinstance(cell, tuple) else (cell, None)
            if value is None:
                continue
            if isinstance(value, str):
                if cell_fmt is None and value[:1] and value[0] in FORMULA_STARTS:
                    cell_fmt = self.styles.text
                self.sheet.write_string(self.row, col, value, cell_fmt)
            else:
                self.sheet.write_number(self.row, col, value, cell_fmt)
        self.row += 1

    def skip(self, rows: int = 1) -> None:
        self.row += rows


def _write_summary(
    sheet: Worksheet, styles: _Styles, meta: RunMeta, counts: SummaryCounts, notices: list[str]
) -> None:
    """Run metadata, notices, bound counts per hardware and op, critical batches, a legend."""
    for col, width in enumerate((34, 14, 14, 16, 20, 14)):
        sheet.set_column(col, col, width)
    sheet.fit_to_pages(1, 0)  # printed: one page wide
    integer = styles.cell_format(INTEGER)
    out = _Lines(sheet, styles)
    out.put((f"Roofline run: {meta.run_name}", styles.title))
    out.skip()
    out.put(("Run", styles.section))
    rejected = "see the Errors sheet and errors.csv" if meta.rejected_rows else None
    for label, value, extra in (
        ("Input file", meta.input_path, None),
        ("Input SHA-256", meta.input_sha256, None),
        ("Started", meta.started, None),
        ("Tool version", meta.tool_version, None),
        ("Hardware catalog version", meta.catalog_version, None),
        ("Source rows", meta.source_rows, None),
        ("Scenarios computed", counts.scenarios, None),
        ("Rejected rows", meta.rejected_rows, rejected),
    ):
        value_cell = (value, styles.count) if isinstance(value, int) else value
        out.put((label, styles.label), value_cell, extra)
    all_notices = list(dict.fromkeys([*meta.notices, *notices]))
    for title, texts in (("Warnings about the input", meta.warnings), ("Notices", all_notices)):
        if texts:
            out.skip()
            out.put((title, styles.section))
            for text in texts:
                out.put((text, styles.notice))
    for key, rows in (("hardware", counts.per_hardware), ("op", counts.per_op)):
        out.skip()
        out.put((f"Bound per {key} (all {counts.scenarios:,} scenarios)", styles.section))
        out.put(
            (key, styles.header),
            *((b, styles.bound_header[b]) for b in BOUNDS),
            ("not fitting", styles.header_right),
            ("total", styles.header_right),
        )
        for name, numbers in rows:
            out.put(name, *((n, integer) for n in numbers))
        if len(rows) > 1:
            totals = [sum(column) for column in zip(*(n for _, n in rows), strict=True)]
            out.put(("all", styles.label), *((n, integer) for n in totals))
    out.skip()
    out.put(("Critical batch sizes", styles.section))
    out.put("The smallest batch at which a series becomes compute-bound, every other input fixed.")
    lines, more = counts.critical_batches, counts.more_series
    if lines:
        out.put(
            *((h, styles.header) for h in ("series", "hardware", "op", "dtypes")),
            ("batch", styles.header_right),
        )
        for series, hw, op, dtypes, batch in lines:
            out.put(series, hw, op, dtypes, (batch, integer) if isinstance(batch, int) else batch)
        if more:
            out.put(f"... and {more:,} more series; filter critical_batch on the Results sheet.")
    else:
        out.put("No scenario in this run becomes compute-bound by growing its batch.")
    out.skip()
    out.put(("How to read the Results sheet", styles.section))
    for text in (
        "Cells hold the SI values of results.csv; the number format only changes the display.",
        "Times: seconds in engineering notation: 1.011E-3 s = 1.011 ms, 240.000E-6 s = 240 µs.",
        "FLOP/s in TFLOP/s (GFLOP/s, MFLOP/s when smaller); FLOPs in TFLOP / GFLOP / MFLOP.",
        "Bytes in GB / MB (1 GB = 1e9 bytes), whole bytes below 1 MB; bandwidth in GB/s.",
        "flops is the op's total; every other count is per chip.",
    ):
        out.put(text)
    out.put(
        ("bound:", styles.label),
        *((b, styles.bound[b]) for b in BOUNDS),
        ("fits = FALSE", styles.not_fitting),
    )


class SummaryCounts(NamedTuple):
    """What the Summary sheet says of every row of a run: small, whatever the run's size."""

    scenarios: int
    per_hardware: list[tuple[str, list[int]]]  # name: compute, memory, network, not fitting, all
    per_op: list[tuple[str, list[int]]]
    critical_batches: list[tuple]  # (series, hardware, op, dtypes, batch) of the first series
    more_series: int  # series with a critical batch that are not listed


def summary_counts(results: pd.DataFrame) -> SummaryCounts:
    """The Summary sheet's counts of every row (vectorized: grouped, never row by row)."""
    lines, more = _critical_batches(results)
    return SummaryCounts(
        len(results), _bound_counts(results, "hardware"), _bound_counts(results, "op"), lines, more
    )


def _bound_counts(results: pd.DataFrame, key: str) -> list[tuple[str, list[int]]]:
    """Per value of `key`: compute, memory, network, not fitting and total row counts."""
    if results.empty:
        return []
    groups = results[key].astype(object).fillna("")
    counts = pd.crosstab(groups, results["bound"])
    not_fitting = results["fits"].eq(False).fillna(False).astype(int).groupby(groups).sum()
    rows = []
    for name in counts.index:
        bounds = [int(counts.at[name, b]) if b in counts.columns else 0 for b in BOUNDS]
        rows.append((str(name), [*bounds, int(not_fitting.get(name, 0)), int(sum(bounds))]))
    return rows


def _critical_batches(results: pd.DataFrame) -> tuple[list[tuple], int]:
    """First series with a critical batch: (series, hardware, op, dtypes, batch); how many more."""
    if "critical_batch" not in results.columns:
        return [], 0
    has = results[results["critical_batch"].notna()]
    if has.empty:
        return [], 0
    grouped = has.groupby("series", sort=False)
    first = grouped[["hardware", "op", "x_dtype", "y_dtype", "compute_dtype"]].first()
    low = grouped["critical_batch"].min()
    high = grouped["critical_batch"].max()
    lines = []
    for series in first.index[:CRITICAL_BATCH_LINES]:
        row = first.loc[series]
        dtypes = f"{row['x_dtype']} × {row['y_dtype']} → {row['compute_dtype']}"
        lo, hi = int(low[series]), int(high[series])
        batch = lo if lo == hi else f"{lo:,} to {hi:,}"
        lines.append((str(series), str(row["hardware"]), str(row["op"]), dtypes, batch))
    return lines, max(len(first) - CRITICAL_BATCH_LINES, 0)


# ---------------------------------------------------------------- charts


def _write_charts(sheet: Worksheet, styles: _Styles, charts: Sequence[Chart], run_dir: Path):
    """Each chart's title and file in cells, its PNG below them, one under another."""
    sheet.fit_to_pages(1, 0)
    row = 0
    for chart in charts:
        image = Image(str(run_dir / chart.path))
        width = image.width * 96.0 / image.x_dpi
        height = image.height * 96.0 / image.y_dpi
        scale = min(1.0, CHART_WIDTH_PX / width) if width else 1.0
        sheet.write_string(row, 0, chart.title, styles.section)
        sheet.write_string(row + 1, 0, chart.path, styles.text)
        sheet.insert_image(
            row + 2,
            0,
            image,
            {"x_scale": scale, "y_scale": scale, "description": chart.title},
        )
        row += 2 + math.ceil(height * scale / ROW_HEIGHT_PX) + 2
