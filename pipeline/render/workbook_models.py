"""The workbook's Models sheet, right after Answer and only when the run has transformer steps:
one line per step in file order (render.models_table, as the report's Models table), its
numbers as numbers: times in seconds shown in words by their format, bytes with the size
format, shares as percentages; the names the user wrote as text cells
(docs/outputs.md#the-workbook)."""

from __future__ import annotations

from pipeline.record import Record
from pipeline.render.format import EXCEL, count
from pipeline.render.models_table import models_table
from pipeline.render.workbook_cells import FittedSheet
from pipeline.render.workbook_styles import Styles

SHEET = "Models"
TITLE = "Models: per step, how long, what bounds it, does it fit"
INTRO = (
    "One line per step of a model (a transformer row, or a point of its sweep) or group total, "
    "in file order; its ops follow on the Results sheet, named step/q_proj ... step/lm_head "
    "(a group's rows: after its total)."
)
READING = (
    "time per step: the sum of its ops' t_lower (the cells hold seconds); time per token: that "
    "/ T; tokens/s: B·T / the step's time; bound: the bound of the ops taking the largest share "
    "of the time, and that share; weights: every weight once; KV cache: the whole batch's; "
    "fits in HBM: weights + KV cache + the largest activation on a chip (footprint) within its "
    "HBM; max batch: the largest B that fits; most time: the op taking the largest share."
)
HEADER_ROW = 4
# (header, the record's key, its kind, width in characters)
COLUMNS = (
    ("step", "name", "text", 32),
    ("model", "model", "text", 16),
    ("hardware", "hardware", "text", 12),
    ("chips", "chips", "count", 7),
    ("B", "B", "count", 7),
    ("T", "T", "count", 7),
    ("S", "S", "count", 8),
    ("time per step", "t_step", "seconds", 14),
    ("time per token", "t_token", "seconds", 14),
    ("tokens/s", "tokens_per_second", "count", 11),
    ("bound", "bound", "bound", 10),
    ("bound share", "bound_share", "percent", 9),
    ("weights", "weight_bytes", "size", 12),
    ("KV cache", "kv_cache_bytes", "size", 12),
    ("fits in HBM", "fits", "fits", 11),
    ("footprint per chip", "footprint", "size", 12),
    ("HBM per chip", "capacity", "size", 12),
    ("max batch", "max_batch", "count", 9),
    ("most time", "top_op", "text", 16),
    ("its share", "top_share", "percent", 9),
)


def write_models_sheet(book, styles: Styles, analysis: Record) -> list[str]:
    """The Models sheet added to `book` when the analysis has steps; the notices of its cells
    cut to Excel's limit."""
    table = models_table(analysis)
    if not table["rows"]:
        return []
    sheet = FittedSheet(book.add_worksheet(SHEET))
    write_models(sheet, styles, table, analysis.rows_in)
    return sheet.notices(analysis.rows_in)


def write_models(sheet, styles: Styles, table: dict, rows_in: str = "results.csv") -> None:
    """`table` (render.models_table) as the sheet: a title, what the columns mean, what the
    cap or the sample leaves out, the header and a line per step; printed landscape."""
    for col, (*_, width) in enumerate(COLUMNS):
        sheet.set_column_width(col, width)
    sheet.write(0, 0, TITLE, styles.title)
    sheet.write(1, 0, INTRO, styles.text)
    sheet.write(2, 0, READING, styles.text)
    if table["sampled"] or table["more"]:
        shown = (
            "the steps of the run's sample"
            if table["sampled"]
            else f"the first {count(len(table['rows']))} of {count(table['total'])} steps"
        )
        said = f"This sheet shows {shown}; {rows_in} has every step (op transformer or group)."
        sheet.write(3, 0, said, styles.notice)
    headers = {"text": styles.header, "bound": styles.header_words, "fits": styles.header_words}
    for col, (header, _, kind, _) in enumerate(COLUMNS):
        sheet.write(HEADER_ROW, col, header, headers.get(kind, styles.header_right))
    formats = {
        "count": styles.integer,
        "percent": styles.column(EXCEL["percent"], text=False),
        "size": styles.column(EXCEL["size"], text=False),
    }
    for row, step in enumerate(table["rows"], start=HEADER_ROW + 1):
        for col, (_, key, kind, _) in enumerate(COLUMNS):
            value = step[key]
            if kind == "fits":
                cell = styles.words if value else styles.not_fitting_words
                sheet.write(row, col, "yes" if value else "no", cell)
            elif kind == "bound":
                sheet.write(row, col, value, styles.bound_words.get(value, styles.words))
            elif kind == "text":
                sheet.write(row, col, value, styles.text)
            elif value is None:  # not known (a sample without the step's ops): left blank
                continue
            elif kind == "seconds":
                sheet.write(row, col, value, styles.time(value))
            else:
                sheet.write(row, col, value, formats[kind])
    sheet.freeze_panes(HEADER_ROW + 1, 1)
    sheet.set_landscape()
    sheet.set_print_fit_to_pages(1, 0)
    sheet.set_print_gridlines(False)
