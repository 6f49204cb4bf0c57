"""The workbook's Fleet sheet, right after Answer and only when some series lists several chips,
dtypes or chip counts (a fleet series): per fleet series, its name, its sentence and a table of
its fleet points fastest first, with each one's time, ratio to the fastest and bound at every
chosen point of its sweep. The words and the order come from render.text.fleet, the same as the
report's (docs/outputs.md#the-fleet-answer)."""

from __future__ import annotations

import pandas as pd

from pipeline.i18n import _
from pipeline.render.format import EXCEL, count
from pipeline.render.text.answer import bound_word
from pipeline.render.text.fleet import FLEET_POINTS, FLEET_SERIES, fits_reading, fleet_answers
from pipeline.render.workbook.cells import FittedSheet, header_width, text_width
from pipeline.render.workbook.styles import Styles

SHEET = "Fleet"
# a fleet point's columns, then per chosen point three, then where over its sweep it fits in
# HBM (fleet_text.fits_text):
# (column, width in characters; None: as wide as its text, up to MAX_WIDTH); its header is
# `header(column)`, in the run's language
POINT_COLUMNS = (("hardware", None), ("dtype", 8), ("chips", 7))
CHOSEN_COLUMNS = (("time", 12), ("× fastest", 10), ("bound", 10))
FITS_COLUMN = ("fits in HBM", 12)  # at least: as wide as its longest text
MAX_WIDTH = 44


def header(column: str) -> str:
    """A column of a fleet block as its header says it, in the run's language."""
    return {
        "hardware": _("hardware"), "dtype": "dtype", "chips": _("chips"), "time": _("time"),
        "× fastest": _("× fastest"), "bound": _("bound"), "fits in HBM": _("fits in HBM"),
    }[column]  # fmt: skip


def intro() -> str:
    """What the sheet shows, under its title."""
    return _(
        "Per fleet series (a scenario row listing several chips, dtypes or chip counts): how "
        "long each of its fleet points (chip, dtype, chip count) takes at the first point of its "
        "sweep, at its critical batch and at its last (or at its one point), fastest first where "
        "its sentence says."
    )


def reading() -> str:
    """How to read a block's columns."""
    return _(
        "time: t_lower, the roofline's lower bound (the cells hold seconds); × fastest: the time "
        "over the fastest fleet point's at that point; bound: what limits it there."
    )


def fits_line() -> str:
    """What a block's last column counts."""
    return f"{header('fits in HBM')}: {fits_reading()}."


def write_fleet_sheet(book, styles: Styles, fleet: pd.DataFrame, whole: str) -> list[str]:
    """The Fleet sheet added to `book` when `fleet` (Summary.fleet) has rows; the notices of
    its cells cut to Excel's limit (`whole`: where the texts are whole)."""
    if fleet.empty:
        return []
    sheet = FittedSheet(book.add_worksheet(SHEET))
    write_fleet(sheet, styles, fleet)
    return sheet.notices(whole)


def write_fleet(sheet, styles: Styles, fleet: pd.DataFrame, limit: int = FLEET_SERIES) -> None:
    """The first `limit` fleet series, a block each: name, sentence, a two-row header (the
    chosen point over its time, ratio and bound) and a row per fleet point (the first
    FLEET_POINTS, the rest counted); printed landscape, one page wide."""
    answers = fleet_answers(fleet, limit)
    widest = max(len(a["columns"]) for a in answers)
    for col, width in enumerate(_widths(answers, widest)):
        sheet.set_column_width(col, width)
    title = _("Fleet answer: which chip, precision and chip count is fastest")
    sheet.write(0, 0, title, styles.title)
    sheet.write(1, 0, intro(), styles.text)
    sheet.write(2, 0, reading(), styles.text)
    sheet.write(3, 0, fits_line(), styles.text)
    row = 4
    total = fleet["series"].nunique()
    if total > len(answers):
        row += 1
        sheet.write(
            row,
            0,
            _(
                "This sheet shows the first {shown} of {total} fleet series; summary.json lists "
                "the rankings of the rest (fleet).",
                shown=count(len(answers)),
                total=count(total),
            ),
            styles.notice,
        )
    for answer in answers:  # at most `limit`: a few blocks, not the results
        row = _block(sheet, styles, answer, row + 2)
    sheet.set_landscape()
    sheet.set_print_fit_to_pages(1, 0)
    sheet.set_print_gridlines(False)


def point_header(column: dict) -> str:
    """A chosen point as its header names it: 'B = 256 (critical batch)'; 'its only point'
    for a series that sweeps nothing but its fleet axes."""
    if not column["at"]:
        return _("its only point")
    words = {"first": _("first"), "critical batch": _("critical batch"), "last": _("last")}
    return f"{column['at']} ({words.get(column['point'], column['point'])})"


def _block(sheet, styles: Styles, answer: dict, row: int) -> int:
    """One fleet series from `row` down; its last row."""
    columns = answer["columns"]
    last = len(POINT_COLUMNS) + len(CHOSEN_COLUMNS) * len(columns)  # the fits column
    sheet.write(row, 0, answer["series"], styles.section)
    sheet.write(row + 1, 0, answer["sentence"], styles.text)
    row += 2
    sheet.merge_range(row, 0, row, len(POINT_COLUMNS) - 1, _("fleet point"), styles.header)
    for k, column in enumerate(columns):
        first = len(POINT_COLUMNS) + len(CHOSEN_COLUMNS) * k
        sheet.merge_range(row, first, row, first + 2, point_header(column), styles.header)
    sheet.write(row, last, "", styles.header)
    row += 1
    names = [c for c, _w in POINT_COLUMNS] + [c for c, _w in CHOSEN_COLUMNS] * len(columns)
    for col, column in enumerate([*names, FITS_COLUMN[0]]):
        cell = (styles.header_right if column in ("chips", "time", "× fastest")
                else styles.header_words if column in ("bound", FITS_COLUMN[0])
                else styles.header)  # fmt: skip
        sheet.write(row, col, header(column), cell)
    ratio = styles.column(EXCEL["ratio"], text=False)
    for point in answer["rows"]:
        row += 1
        sheet.write(row, 0, point["hardware"], styles.text)
        sheet.write(row, 1, point["dtype"], styles.text)
        sheet.write(row, 2, point["chips"], styles.integer)
        for k, cell in enumerate(point["cells"]):
            if cell is None:  # not computed at this point: left blank
                continue
            col = len(POINT_COLUMNS) + len(CHOSEN_COLUMNS) * k
            sheet.write(row, col, cell["t_lower"], styles.time(cell["t_lower"]))
            sheet.write(row, col + 1, cell["ratio"], ratio)
            tint = styles.bound_words.get(cell["bound"], styles.words)
            sheet.write(row, col + 2, bound_word(cell["bound"]), tint)
        fits = styles.words if point["fits"] else styles.not_fitting_words
        sheet.write(row, last, point["fits_text"], fits)
    if answer["more"]:
        row += 1
        at = point_header(columns[answer["lead"]])
        sheet.write(
            row,
            0,
            _(
                "... and {more} more fleet points, slower at {at} than the {shown} above: "
                "summary.json lists them all (fleet).",
                more=count(answer["more"]),
                at=at,
                shown=count(FLEET_POINTS),
            ),
            styles.text,
        )
    return row


def _widths(answers: list[dict], chosen: int) -> list[float]:
    """The sheet's column widths: hardware as wide as its longest name and the fits column as
    its longest text (up to MAX_WIDTH), the others fixed, for the block with the most chosen
    points."""
    names = [p["hardware"] for a in answers for p in a["rows"]]
    longest = max(text_width(header("hardware")), *(text_width(n) for n in names)) + 2
    fixed = [(c, w) for c, w in POINT_COLUMNS[1:]] + [*CHOSEN_COLUMNS] * chosen
    said = max(text_width(p["fits_text"]) + 2 for a in answers for p in a["rows"])
    fits = max(header_width(FITS_COLUMN[1], header(FITS_COLUMN[0])), said)
    return [
        min(longest, MAX_WIDTH),
        *(header_width(w, header(c)) for c, w in fixed),
        min(fits, MAX_WIDTH),
    ]
