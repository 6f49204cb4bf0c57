"""The workbook's Training sheet, after Serving and only when the run has train rows: one line
per train row (render.text.training, as the report's Training table), the planner's columns
first (configuration, days, step time, MFU, bound, fits in HBM or why not); numbers as numbers
(days, seconds, a fraction for MFU, bytes, dollars, each shown by its format), units in the
headers, the user's names as text cells (docs/outputs.md#training)."""

from __future__ import annotations

import pandas as pd

from pipeline.i18n import _
from pipeline.limits import DEFAULT_WORKBOOK_ROWS
from pipeline.render.format import EXCEL, count
from pipeline.render.text.training import training_tables
from pipeline.render.workbook.cells import FittedSheet, text_width
from pipeline.render.workbook.styles import Styles
from pipeline.render.workbook.table_sheet import HEADER_ROW, finish_table, start_table, write_line

SHEET = "Training"
# (column, the record's key, its kind, width in characters); its header is `header(column)`
COLUMNS = (
    ("configuration", "config", "text", 22),
    ("days", "days", "days", 8),
    ("step time (s)", "step_time", "seconds", 11),
    ("MFU", "mfu", "percent", 7),
    ("bound", "bound_text", "bound", 16),
    ("fits in HBM / why not", "fit_text", "verdict", 22),
    ("rank", "rank", "count", 6),
    ("tokens a chip", "tokens_per_chip", "count", 9),
    ("compute-bound batch (tokens a chip)", "critical", "count", 12),
    ("memory a chip (bytes)", "memory", "size", 11),
    ("series", "series", "text", 14),
    ("model", "model", "text", 12),
    ("hardware", "hardware", "text", 10),
    ("dtype", "dtype", "text", 7),
    ("chips", "chips", "count", 7),
    ("parallelism", "parallel", "text", 16),
    ("tokens a step", "tokens", "count", 12),
    ("train tokens", "train_tokens", "count", 18),
    ("time basis", "time_basis", "text", 10),
    ("name", "name", "text", 24),
)
COST_COLUMNS = (  # with prices (issue 44)
    ("cost (USD)", "train_cost", "usd", 14),
    ("cost rank", "cost_rank", "count", 7),
)
DAYS = "#,##0.0"
USD = '"$"#,##0'


def header(column: str) -> str:
    """A column of the sheet as its header says it, in the run's language."""
    return {
        "configuration": _("configuration"), "days": _("days"), "step time (s)": _("step time (s)"),
        "MFU": "MFU", "bound": _("bound"), "fits in HBM / why not": _("fits in HBM / why not"),
        "rank": _("rank"), "tokens a chip": _("tokens a chip"),
        "compute-bound batch (tokens a chip)": _("compute-bound batch (tokens a chip)"),
        "memory a chip (bytes)": _("memory a chip (bytes)"), "series": _("series"),
        "model": _("model"), "hardware": _("hardware"), "dtype": "dtype", "chips": _("chips"),
        "parallelism": _("parallelism"), "tokens a step": _("tokens a step"),
        "train tokens": _("train tokens"), "time basis": _("time basis"), "name": _("name"),
        "cost (USD)": _("cost (USD)"), "cost rank": _("cost rank"),
    }[column]  # fmt: skip


def write_training_sheet(book, styles: Styles, training: pd.DataFrame, whole: str) -> list[str]:
    """The Training sheet added to `book` when `training` (Summary.training) has rows; the
    notices of its cells cut to Excel's limit (`whole`: where the texts are whole)."""
    if training is None or training.empty:
        return []
    sheet = FittedSheet(book.add_worksheet(SHEET))
    write_training(sheet, styles, training)
    return sheet.notices(whole)


def write_training(sheet, styles: Styles, training: pd.DataFrame) -> None:
    """Every line of Summary.training: a title, what the lines and columns mean, the header and
    a line per train row, filterable; printed landscape, one page wide."""
    shown = training.head(DEFAULT_WORKBOOK_ROWS)  # a million train rows: the first lines
    tables = training_tables(shown, limit=len(shown), rows=len(shown))
    columns = COLUMNS + (COST_COLUMNS if tables["cost"] else ())
    longest = max(text_width(r["config"]) for s in tables["series"] for r in s["rows"])
    start_table(sheet, styles, columns, header, min(longest + 2, 48), _(
        "Training: how many chips and days, and which parallelism keeps the step "
        "compute-bound"), (_(
        "One line per train row (model, chip, dtype, chip count, parallelism), per train series "
        "the fewest days first (rank 1) among those that fit in HBM, then those that do not, "
        "and why."), _(
        "days: train tokens / tokens a step × step time; MFU: 6 · params · tokens / (chips · "
        "peak · step time); compute-bound batch: the tokens a chip a step needs for its "
        "communication to hide behind compute; time basis: estimate (a calibration covers the "
        "step) or floor (t_lower). The time cells hold seconds.")))  # fmt: skip
    if len(shown) < len(training):
        sheet.write(3, 0, _("The first {shown} of {total} lines; summary.json (training) and the "
                            "results hold every train row.", shown=count(len(shown)),
                            total=count(len(training))), styles.notice)  # fmt: skip
    formats = {
        "count": styles.integer,
        "days": styles.column(DAYS, text=False),
        "percent": styles.column(EXCEL["percent"], text=False),
        "size": styles.column(EXCEL["size"], text=False),
        "usd": styles.column(USD, text=False),
    }
    row = HEADER_ROW
    for table in tables["series"]:
        for line in table["rows"]:
            row += 1
            record = {**line, "series": table["series"]}
            write_line(sheet, styles, row, columns, record, line["fits"], formats)
    finish_table(sheet, row, len(columns))
