"""The workbook's Models sheet, right after Answer and only when the run has transformer steps:
one line per step, the slowest first with every fleet point's best among them
(render.text.steps_table, as the report's Models table), its
numbers as numbers: times in seconds shown in words by their format, bytes with the size
format, shares as percentages; the names the user wrote as text cells
(docs/outputs.md#the-workbook)."""

from __future__ import annotations

from pipeline.i18n import _
from pipeline.model.step_totals import NO_LIMIT
from pipeline.record import Record
from pipeline.render.format import EXCEL, count
from pipeline.render.text.answer import bound_word
from pipeline.render.text.steps_table import models_table
from pipeline.render.workbook.cells import FittedSheet, text_width, wrapped_width, yes_no
from pipeline.render.workbook.styles import Styles

SHEET = "Models"
HEADER_ROW = 4
# (column, the record's key, its kind, width in characters); its header is `header(column)`,
# in the run's language
COLUMNS = (
    ("step", "name", "text", 32),
    ("best", "best", "best", 7),  # its fleet point's best (summary.steps)
    ("model", "model", "text", 16),
    ("hardware", "hardware", "text", 12),
    ("dtype", "dtype", "text", 12),
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
    ("most time", "top_op", "words", 16),  # words: set off from the number before them
    ("its share", "top_share", "percent", 9),
)

# when some step stands for n > 1 steps (`count`): n after S, and the time said as the n's
STEPS = ("steps", "count", "count", 7)
COUNTED_TIME = ("time of the steps", "t_step", "seconds", 14)


def columns(counted: bool) -> tuple:
    """The sheet's columns: COLUMNS, with the steps a line stands for and their time in place
    of the time per step when some step has `count` n > 1 (`counted`)."""
    if not counted:
        return COLUMNS
    at = [c for c, *_rest in COLUMNS].index("time per step")
    return (*COLUMNS[:at], STEPS, COUNTED_TIME, *COLUMNS[at + 1 :])


def header(column: str) -> str:
    """A column of the sheet as its header says it, in the run's language."""
    return {
        "step": _("step"), "best": _("best"), "model": _("model"), "hardware": _("hardware"),
        "dtype": "dtype", "chips": _("chips"),
        "B": "B", "T": "T", "S": "S", "time per step": _("time per step"),
        "time per token": _("time per token"), "tokens/s": _("tokens/s"), "bound": _("bound"),
        "bound share": _("bound share"), "weights": _("weights"), "KV cache": _("KV cache"),
        "fits in HBM": _("fits in HBM"), "footprint per chip": _("footprint per chip"),
        "HBM per chip": _("HBM per chip"), "max batch": _("max batch"),
        "most time": _("most time"), "its share": _("its share"), "steps": _("steps"),
        "time of the steps": _("time of the steps"),
    }[column]  # fmt: skip


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
    """`table` (render.text.steps_table) as the sheet: a title, what the columns mean, what the
    cap or the sample leaves out, the header and a line per step; printed landscape."""
    shown = columns(table.get("counted", False))
    widths = [wrapped_width(width, header(column)) for column, *_rest, width in shown]
    for col, width in enumerate(widths):
        sheet.set_column_width(col, width)
    sheet.write(0, 0, _("Models: per step, how long, what bounds it, does it fit"), styles.title)
    sheet.write(
        1,
        0,
        _(
            "One line per step of a model (a transformer row, or a point of its sweep) or group "
            "total, the slowest first; best: the most tokens/s of a fleet point's steps that fit "
            "in HBM (a swept row at one model, chip, dtype and chip count), listed whatever its "
            "time. Its ops follow on the Results sheet, named step/q_proj ... step/lm_head (a "
            "group's rows: after its total)."
        ),
        styles.text,
    )
    said = _(
        "time per step: the sum of its ops' t_lower (the cells hold seconds); time per "
        "token: that / T; tokens/s: B·T / the step's time; bound: the bound of the ops "
        "taking the largest share of the time, and that share; weights: every weight once; "
        "KV cache: the whole batch's; fits in HBM: weights + KV cache + the largest "
        "activation on a chip (footprint) within its HBM; max batch: the largest B that "
        "fits; most time: the op taking the largest share."
    )
    if table.get("counted"):
        said += " " + _(
            "steps: the line's count, n steps one after another; time of the steps: all n "
            "steps' (n × the sum of one step's ops' t_lower), time per token that / (n·T), "
            "tokens/s n·B·T / it."
        )
    sheet.write(2, 0, said, styles.text)
    if table["more"]:
        said = _(
            "This sheet shows the {shown} slowest of {total} steps, with each fleet point's "
            "best; {rows_in} has every step (op transformer or group), and --models-rows lists "
            "more.",
            shown=count(len(table["rows"])),
            total=count(table["total"]),
            rows_in=rows_in,
        )
        sheet.write(3, 0, said, styles.notice)
    headers = {"text": "header", "bound": "header_words", "fits": "header_words",
               "words": "header_words", "best": "header_words"}  # fmt: skip
    wraps = False
    for col, (column, _key, kind, _width) in enumerate(shown):
        said, style = header(column), headers.get(kind, "header_right")
        if not said.isascii() and text_width(said) + 2 > widths[col]:  # Korean: two lines
            wraps = True
            sheet.write(HEADER_ROW, col, said, styles.header_wrapped[style])
        else:
            sheet.write(HEADER_ROW, col, said, getattr(styles, style))
    if wraps:
        sheet.set_row_height(HEADER_ROW, 15 * 2)
    formats = {
        "count": styles.integer,
        "percent": styles.column(EXCEL["percent"], text=False),
        "size": styles.column(EXCEL["size"], text=False),
    }
    for row, step in enumerate(table["rows"], start=HEADER_ROW + 1):
        for col, (_column, key, kind, _width) in enumerate(shown):
            value = step[key]
            if kind == "best":  # said only where it is: the others left blank
                if value:
                    sheet.write(row, col, _("best"), styles.words)
            elif kind == "fits":
                cell = styles.words if value else styles.not_fitting_words
                sheet.write(row, col, yes_no(value), cell)
            elif kind == "bound":
                tint = styles.bound_words.get(value, styles.words)
                sheet.write(row, col, bound_word(value), tint)
            elif kind == "text":
                sheet.write(row, col, value, styles.text)
            elif kind == "words":
                sheet.write(row, col, value, styles.words)
            elif value is None:  # not known (a sample without the step's ops): left blank
                continue
            elif key == "max_batch" and value >= NO_LIMIT:  # every B fits: said in words
                sheet.write(row, col, step["max_batch_text"], styles.words)
            elif kind == "seconds":
                sheet.write(row, col, value, styles.time(value))
            else:
                sheet.write(row, col, value, formats[kind])
    sheet.freeze_panes(HEADER_ROW + 1, 1)
    sheet.set_landscape()
    sheet.set_print_fit_to_pages(1, 0)
    sheet.set_print_gridlines(False)
