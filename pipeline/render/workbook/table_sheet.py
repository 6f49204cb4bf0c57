"""The frame of a sheet that is one table (Serving, Training): its columns' widths (a header
wider than its column wraps at a space), a title and notes over it, the header row two lines
high, a line's cells by their kind, and the table filterable, its header and first column
frozen, printed landscape one page wide."""

from __future__ import annotations

from collections.abc import Callable

from pipeline.render.workbook.cells import text_width
from pipeline.render.workbook.styles import Styles

HEADER_ROW = 4
WORDS = ("text", "verdict", "bound")  # the kinds of cells in words: set off as such


def two_lines(width: float, said: str) -> float:
    """A column's width: `width`, or wider so that its header fits on two lines, split at the
    space where they are most even."""
    words = said.split(" ")
    lines = [
        max(text_width(" ".join(words[:i])), text_width(" ".join(words[i:])))
        for i in range(1, len(words))
    ]
    return max(width, min(lines, default=text_width(said)) + 2)


def start_table(sheet, styles: Styles, columns: tuple, header: Callable[[str], str],
                first_width: float, title: str, notes: tuple[str, ...]) -> None:  # fmt: skip
    """The widths (the first column at least `first_width`), the title and notes from the top,
    and the header row; `columns`: (column, the record's key, its kind, width) each."""
    widths = [two_lines(width, header(column)) for column, _key, _kind, width in columns]
    widths[0] = max(widths[0], first_width)
    for col, width in enumerate(widths):
        sheet.set_column_width(col, width)
    sheet.write(0, 0, title, styles.title)
    for row, note in enumerate(notes, start=1):
        sheet.write(row, 0, note, styles.text)
    for col, (column, _key, kind, _width) in enumerate(columns):
        style = "header" if col == 0 else "header_words" if kind in WORDS else "header_right"
        sheet.write(HEADER_ROW, col, header(column), styles.header_wrapped[style])
    sheet.set_row_height(HEADER_ROW, 15 * 2)


def write_line(
    sheet, styles: Styles, row: int, columns: tuple, record: dict, ok: bool, formats: dict
) -> None:
    """One line's cells: its verdict plain when `ok` (meets, fits), marked when not; its bound
    in the bound's colour; words set off from a number before them; a number by its kind's
    format (`formats`; seconds by their size), none left blank."""
    for col, (_column, key, kind, _width) in enumerate(columns):
        value = record.get(key)
        if kind == "verdict":
            cell = styles.words if ok else styles.not_fitting_words
        elif kind == "bound":
            cell = styles.bound_words.get(record["bound"], styles.words)
        elif kind == "text":
            cell = styles.text if col == 0 else styles.words
        elif value is None:  # no target, no rank, no price: left blank
            continue
        elif kind == "seconds":
            cell = styles.time(value)
        else:
            cell = formats[kind]
        sheet.write(row, col, value, cell)


def finish_table(sheet, last_row: int, columns: int) -> None:
    """The table filterable down to `last_row`, its header and first column frozen; printed
    landscape, one page wide, the header on every page."""
    sheet.autofilter(HEADER_ROW, 0, last_row, columns - 1)
    sheet.freeze_panes(HEADER_ROW + 1, 1)
    sheet.set_landscape()
    sheet.set_repeat_rows(HEADER_ROW, HEADER_ROW)
    sheet.set_print_fit_to_pages(1, 0)
    sheet.set_print_gridlines(False)
