"""XlsxWriter behind rvgsrust-xlsxwriter's API: exactly the calls render.workbook's modules make,
by the same names and call shapes, writing the same workbook
(tests/render/workbook/test_xlsx_backend.py compares them); render.workbook.xlsx_backend picks
it where the Rust writer is not installed. Where XlsxWriter differs, it does as the Rust writer:
a cell without a format takes its column's; text is never a formula or a link; inf and NaN are
text ("INF", "-INF", "NAN" unless set); a note starts with its author's name; numbers are
written in full (XlsxWriter keeps 16 digits); a sheet is constant-memory on its own
(XlsxWriter's option is the workbook's: it is switched on while such a sheet is added)."""

from __future__ import annotations

import contextlib
import math
import numbers
import os
import weakref

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import xlsxwriter
from xlsxwriter.exceptions import XlsxWriterException
from xlsxwriter.utility import xl_range
from xlsxwriter.worksheet import Worksheet as _XlsxSheet

MAX_ROW, MAX_COL = 1_048_575, 16_383  # Excel's last row and column, 0-based
BATCH_ROWS = 10_000  # rows turned into Python objects at a time by write_dataframe
_HORIZONTAL = {"left", "center", "right", "fill", "justify", "center_across", "distributed"}
_VERTICAL = {"center": "vcenter", "justify": "vjustify", "distributed": "vdistributed"}
_BORDERS = ("thin", "medium", "dashed", "dotted", "thick", "double", "hair", "medium_dashed",
            "dash_dot", "medium_dash_dot", "dash_dot_dot", "medium_dash_dot_dot",
            "slant_dash_dot")  # fmt: skip
# ProtectionOptions' names that XlsxWriter's protect() spells otherwise
_RENAMED = {"insert_links": "insert_hyperlinks", "use_autofilter": "autofilter",
            "use_pivot_tables": "pivot_tables", "edit_scenarios": "scenarios",
            "edit_objects": "objects", "contents": "content"}  # fmt: skip


def _out_of_range(row: int, col: int) -> ValueError:
    return ValueError(f"Row or column exceeds Excel's allowed limits: row {row}, column {col}.")


def _values(column: pa.ChunkedArray) -> list:
    """A column's cells as Python objects, None where a cell stays empty: a null, or an
    empty text (the Rust writer writes neither)."""
    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
        column = pc.if_else(pc.fill_null(pc.equal(column, ""), False), None, column)
    elif pa.types.is_integer(column.type):  # a cell holds a double: 2**53 + 1 is 2**53
        column = pc.cast(column, pa.float64(), safe=False)
    return column.to_pylist()


def _flag(key: str):
    """A setter of an on/off property: `set_bold()`."""

    def setter(self):
        self.options[key] = True
        return self

    return setter


def _option(key: str, convert=None):
    """A setter of a valued property: `set_num_format("0")`, the value converted if need be."""

    def setter(self, value):
        self.options[key] = value if convert is None else convert(value)
        return self

    return setter


def _calling(name: str):
    """A worksheet call passed on to XlsxWriter's `name`, its arguments as they are."""

    def call(self, *args) -> None:
        getattr(self._sheet, name)(*args)

    return call


class Format:
    """A cell format: XlsxWriter's format properties, made into a format of each workbook that
    uses it (render.workbook.styles makes its formats before any workbook)."""

    def __init__(self) -> None:
        self.options: dict[str, object] = {}

    def key(self) -> tuple:
        return tuple(sorted(self.options.items()))

    set_quote_prefix = _flag("quote_prefix")
    set_bold = _flag("bold")
    set_text_wrap = _flag("text_wrap")
    set_font_size = _option("font_size")
    set_font_color = _option("font_color")
    set_background_color = _option("bg_color")  # filled solid, as the Rust writer does
    set_num_format = _option("num_format")
    set_indent = _option("indent")
    # the Rust writer takes horizontal names only, any other (even "top") as "left"
    set_align = _option("align", lambda name: name if name in _HORIZONTAL else "left")
    set_vertical_align = _option("valign", lambda name: _VERTICAL.get(name, name))
    set_border_bottom = _option("bottom", lambda style: _BORDERS.index(style) + 1)


class Note:
    """A cell note: its text and its size in pixels."""

    def __init__(self, text: str) -> None:
        self.text, self.options = text, {}

    set_width = _option("width")
    set_height = _option("height")


class _Rule:
    """A conditional format or a data validation: XlsxWriter's options, set a call at a time."""

    def __init__(self, **options) -> None:
        self.options = options

    set_format = _option("format")
    set_multi_range = _option("multi_range")
    set_stop_if_true = _option("stop_if_true")


class ConditionalFormatFormula(_Rule):
    def __init__(self) -> None:
        super().__init__(type="formula")

    set_rule = _option("criteria")


class ConditionalFormatCell(_Rule):
    def __init__(self) -> None:
        super().__init__(type="cell")

    def set_rule_greater_than(self, value: float) -> _Rule:
        return self._rule(">", value)

    def set_rule_greater_than_or_equal_to(self, value: float) -> _Rule:
        return self._rule(">=", value)

    def _rule(self, criteria: str, value: float) -> _Rule:
        # the number as the Rust writer puts it: shortest digits, no exponent (0.0000009995)
        text = np.format_float_positional(float(value), trim="-")
        self.options.update(criteria=criteria, value=text)
        return self


class DataValidation(_Rule):
    def allow_list_formula(self, formula: str) -> None:
        self.options.update(validate="list", source="=" + formula.removeprefix("="))

    set_error_style = _option("error_type")
    set_input_title = _option("input_title")
    set_input_message = _option("input_message")
    set_error_title = _option("error_title")
    set_error_message = _option("error_message")


class ProtectionOptions:
    """What a protected sheet still allows (the Rust writer's names and defaults)."""

    def __init__(self, **allowed: bool) -> None:
        self.options = {_RENAMED.get(k, k): v for k, v in allowed.items()}


class _FullNumbers(_XlsxSheet):
    """XlsxWriter's worksheet writing each number in full (repr: the shortest text that reads
    back the same double), as the Rust writer does, not in 16 significant digits."""

    def _xml_number_element(self, number, attributes=()) -> None:
        attr = ""
        for key, value in attributes:  # a cell reference, a style index: nothing to escape
            attr += f' {key}="{value}"'
        self.fh.write(f"<c{attr}><v>{number!r}</v></c>")


def _remove_spool(handle, filename: str) -> None:
    handle.close()
    with contextlib.suppress(FileNotFoundError):
        os.unlink(filename)


class Workbook:
    """A workbook written at `path` on close()."""

    def __init__(self, path: str) -> None:
        # the spool folder as TMPDIR says now (render.workbook.book sets it for the write)
        spool = os.environ.get("TMPDIR")
        self._book = xlsxwriter.Workbook(
            path,
            {
                "strings_to_formulas": False,
                "strings_to_urls": False,
                "tmpdir": spool if spool and os.path.isdir(spool) else None,
            },
        )
        self._formats: dict[tuple, object] = {}

    def _format(self, cell_format: Format | None):
        """The XlsxWriter format of `cell_format`, made once per workbook."""
        if cell_format is None:
            return None
        key = cell_format.key()
        made = self._formats.get(key)
        if made is None:
            made = self._formats[key] = self._book.add_format(dict(cell_format.options))
        return made

    def add_worksheet(self, name: str | None = None, constant_memory: bool = False) -> Worksheet:
        self._book.constant_memory = constant_memory  # read as the sheet is added
        try:
            sheet = self._book.add_worksheet(name, worksheet_class=_FullNumbers)
        finally:
            self._book.constant_memory = False
        # the printer resolution Excel and the Rust writer put in a sheet's page setup
        sheet.horizontal_dpi = sheet.vertical_dpi = 200
        if constant_memory:  # its rows' spool file, removed by close(), or here if never closed
            weakref.finalize(self, _remove_spool, sheet.row_data_fh, sheet.row_data_filename)
        return Worksheet(sheet, self)

    def set_properties(self, **properties: str | None) -> None:
        self._book.set_properties({k: v for k, v in properties.items() if v is not None})

    def close(self) -> None:
        try:
            self._book.close()
        except XlsxWriterException as exc:  # FileCreateError wraps the OSError
            cause = exc.args[0] if exc.args else None
            if isinstance(cause, OSError):
                raise cause from exc
            raise RuntimeError(str(exc)) from exc


class Worksheet:
    """One sheet: cells, formats and page setup by the Rust writer's calls."""

    def __init__(self, sheet: _XlsxSheet, book: Workbook) -> None:
        self._sheet, self._book = sheet, book
        self._column_formats: dict[int, Format] = {}
        self._widths: dict[int, float] = {}
        self._texts = {"inf": "INF", "-inf": "-INF", "nan": "NAN"}
        self._ignored: dict[str, list[str]] = {}

    @property
    def name(self) -> str:
        return self._sheet.name

    def _cell_format(self, col: int, cell_format: Format | None):
        """A cell's format: its own, else its column's."""
        return self._book._format(cell_format or self._column_formats.get(col))

    def _number_text(self, value: float) -> str | None:
        """The text written for inf or NaN, None for a finite number."""
        if math.isfinite(value):
            return None
        return self._texts["nan" if math.isnan(value) else "inf" if value > 0 else "-inf"]

    def write(self, row: int, col: int, value, cell_format: Format | None = None) -> None:
        fmt = self._cell_format(col, cell_format)
        sheet = self._sheet
        if value == "" or value is None:  # a blank cell, only when given a format of its own
            done = sheet.write_blank(row, col, None, fmt) if cell_format is not None else 0
        elif isinstance(value, str):
            done = sheet.write_string(row, col, value, fmt)
        elif isinstance(value, bool | np.bool_):
            done = sheet.write_boolean(row, col, bool(value), fmt)
        elif isinstance(value, numbers.Real):
            text = self._number_text(float(value))
            if text is None:  # a cell holds a double, whatever the number was
                done = sheet.write_number(row, col, float(value), fmt)
            else:
                done = sheet.write_string(row, col, text, fmt)
        else:
            raise TypeError(f"cannot write a {type(value).__name__} to a cell")
        if done == -1:
            raise _out_of_range(row, col)

    def merge_range(self, first_row, first_col, last_row, last_col, value, cell_format=None):
        fmt = self._cell_format(first_col, cell_format)
        if self._sheet.merge_range(first_row, first_col, last_row, last_col, value, fmt) == -1:
            raise _out_of_range(last_row, last_col)

    def write_dataframe(
        self, start_row, start_col, data, header_format=None, write_header=True,
        column_formats=None,
    ) -> None:  # fmt: skip
        """A table's rows under its header, a row at a time (a constant-memory sheet keeps only
        the row being written), nulls and empty texts left empty; `column_formats` by column
        name replace the columns' formats."""
        table = data if isinstance(data, pa.Table) else pa.table(data)
        names = table.column_names
        column_formats = column_formats or {}
        unknown = set(column_formats) - set(names)
        if unknown:
            raise ValueError(f"column_formats names no column of the data: {sorted(unknown)}")
        first = start_row + bool(write_header)
        last_row, last_col = first + table.num_rows - 1, start_col + len(names) - 1
        if max(first, last_row) > MAX_ROW or last_col > MAX_COL:
            raise _out_of_range(last_row, last_col)
        if write_header:
            for i, name in enumerate(names):
                col = start_col + i
                self._sheet.write_string(
                    start_row, col, name, self._cell_format(col, header_format)
                )
        writers = [
            (start_col + i, self._writer(table.column(i)), self._cell_format(start_col + i, f))
            for i, f in enumerate(column_formats.get(name) for name in names)
        ]
        # Python objects a batch at a time (memory stays flat), then XlsxWriter's one call per
        # cell; the undecorated writers skip its A1-notation check (checked above, at once)
        for offset in range(0, table.num_rows, BATCH_ROWS):
            batch = table.slice(offset, BATCH_ROWS)
            values = [_values(batch.column(i)) for i in range(len(names))]
            for row, cells in enumerate(zip(*values, strict=True), first + offset):
                for (col, put, fmt), value in zip(writers, cells, strict=True):
                    if value is not None:
                        put(row, col, value, fmt)

    def _writer(self, column: pa.ChunkedArray):
        """The XlsxWriter call that writes the column's cells."""
        kind, sheet = column.type, self._sheet
        if pa.types.is_string(kind) or pa.types.is_large_string(kind):
            return sheet._write_string
        if pa.types.is_boolean(kind):
            return sheet._write_boolean
        if pa.types.is_integer(kind):
            return sheet._write_number
        if pa.types.is_floating(kind):
            finite = pc.all(pc.is_finite(column)).as_py() is not False
            return sheet._write_number if finite else self._put  # inf, NaN: as text
        raise TypeError(f"a column of type {kind}: the XlsxWriter writer takes text, numbers "
                        "and booleans")  # fmt: skip

    def _put(self, row: int, col: int, value: float, fmt) -> None:
        text = self._number_text(value)
        if text is None:
            self._sheet._write_number(row, col, value, fmt)
        else:
            self._sheet._write_string(row, col, text, fmt)

    def insert_note(self, row: int, col: int, note: Note) -> None:
        author = self._sheet.comments_author  # its name first, as Excel and the Rust writer
        text = f"{author}:\n{note.text}" if author else note.text
        self._sheet.write_comment(row, col, text, dict(note.options))

    def add_conditional_format(self, first_row, first_col, last_row, last_col, rule) -> None:
        options = dict(rule.options)
        if "format" in options:
            options["format"] = self._book._format(options["format"])
        self._sheet.conditional_format(first_row, first_col, last_row, last_col, options)

    def add_data_validation(self, first_row, first_col, last_row, last_col, rule) -> None:
        self._sheet.data_validation(first_row, first_col, last_row, last_col, dict(rule.options))

    def set_column_width(self, col: int, width: float) -> None:
        self._widths[col] = width
        self._set_column(col)

    def set_column_format(self, col: int, cell_format: Format) -> None:
        self._column_formats[col] = cell_format
        self._set_column(col)

    def _set_column(self, col: int) -> None:
        fmt = self._book._format(self._column_formats.get(col))
        self._sheet.set_column(col, col, self._widths.get(col), fmt)

    def ignore_error_range(self, first_row, first_col, last_row, last_col, error: str) -> None:
        cells = xl_range(first_row, first_col, last_row, last_col)
        self._ignored.setdefault(error, []).append(cells)
        self._sheet.ignore_errors({k: " ".join(v) for k, v in self._ignored.items()})

    def set_infinity_value(self, text: str) -> None:
        self._texts["inf"] = text

    def set_neg_infinity_value(self, text: str) -> None:
        self._texts["-inf"] = text

    # the calls XlsxWriter takes as they are, some under another name
    insert_image = _calling("insert_image")
    set_default_note_author = _calling("set_comments_author")
    set_row_height = _calling("set_row")
    freeze_panes = _calling("freeze_panes")
    autofilter = _calling("autofilter")
    set_landscape = _calling("set_landscape")
    set_repeat_rows = _calling("repeat_rows")
    set_print_area = _calling("print_area")
    set_print_fit_to_pages = _calling("fit_to_pages")
    set_footer = _calling("set_footer")

    def set_print_gridlines(self, enable: bool) -> None:
        self._sheet.hide_gridlines(0 if enable else 1)  # 1: printed gridlines off, on screen

    def protect_with_options(self, options: ProtectionOptions, password: str | None = None):
        self._sheet.protect(password or "", dict(options.options))
