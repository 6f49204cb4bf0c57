"""What a planner reads first in the workbook: the Answer sheet (the bottom line, one line per
series with its time, bound, critical batch and fit, what the bounds mean; one printed page)
and the Results sheet's layout (the columns that answer first, a short print area). The words
come from render.text.answer, the same as the report's (docs/outputs.md#the-workbook)."""

from __future__ import annotations

import pandas as pd

from pipeline.i18n import _
from pipeline.model.roofline import BOUNDS
from pipeline.record import Record
from pipeline.render.format import count
from pipeline.render.text.answer import (
    DEFAULTS,
    SERIES_ROWS,
    bottom_line,
    bound_word,
    calibration_sentence,
    critical_batch_term,
    differing,
    meaning,
    series_rows,
)
from pipeline.render.text.fleet import first_sentences
from pipeline.render.text.serving import serving_sentences
from pipeline.render.text.training import training_sentences
from pipeline.render.workbook.cells import header_width, text_width
from pipeline.render.workbook.styles import Styles
from pipeline.summary.turns import MIXED

# the Results sheet's first columns, then the others in results.csv's order
RESULTS_FIRST = ("name", "hardware", "op", "t_lower", "bound", "fits", "critical_batch")
PRINT_ROWS = 500  # Results rows in the print area (16 landscape pages)
# the series table: (column, width in characters; None: as wide as its text, up to the cap;
# its header is `header(column)`, in the run's language); dtype and chips only when a series
# differs from the default: answer.differing
COLUMNS = (
    ("series", None), ("hardware", 10), ("op", 15), ("shape", None), ("dtype", None),
    ("chips", None), ("scenarios", 10), ("time min", 11), ("time max", 11),
    ("estimate min", 12), ("estimate max", 12), ("bound", None), ("critical batch", 14),
    ("fits", 12),
)  # fmt: skip
ESTIMATES = {"estimate min": "e_min", "estimate max": "e_max"}  # a calibrated run's only
RIGHT = ("chips", "scenarios", "time min", "time max", *ESTIMATES, "critical batch")  # numbers
MAX_WIDTH = 44
TITLE_LINES = 3  # rows the bottom line may wrap to


def header(column: str) -> str:
    """A column of the series table as its header says it, in the run's language (op in
    Korean is 연산 종류, the kind of operation: 연산 alone is compute, which the bound column
    shows beside it)."""
    return {
        "series": _("series"), "hardware": _("hardware"), "op": _("op"), "shape": _("shape"),
        "dtype": _("dtype"), "chips": _("chips"), "scenarios": _("scenarios"),
        "time min": _("time min"), "time max": _("time max"),
        "estimate min": _("estimate min"), "estimate max": _("estimate max"),
        "bound": _("bound"), "critical batch": _("critical batch"), "fits": _("fits"),
    }[column]  # fmt: skip


def fleet_pointer() -> str:
    """The line under the fleet answers: where their tables are."""
    return _(
        "See the Fleet sheet: each fleet point's time, ratio to the fastest and bound at the "
        "first point of its series' sweep, its critical batch and its last."
    )


def results_columns(columns) -> list[str]:
    """Results' column order: RESULTS_FIRST (those present), then the rest as they come."""
    first = [c for c in RESULTS_FIRST if c in columns]
    return first + [c for c in columns if c not in first]


def print_results(sheet, rows: int, total: int) -> None:
    """Results printed: the RESULTS_FIRST columns of the first PRINT_ROWS rows, one page wide,
    landscape, the header on every page; the footer says what the print leaves out."""
    shown = min(rows, PRINT_ROWS)
    sheet.set_print_area(0, 0, shown, len(RESULTS_FIRST) - 1)
    sheet.set_print_fit_to_pages(1, 0)
    columns = f"A-{chr(ord('A') + len(RESULTS_FIRST) - 1)}"
    if shown < total:
        footer = _(
            "&LResults: columns {columns}, the first {shown} of {total} rows (clear the print "
            "area to print more)&RPage &P of &N",
            columns=columns,
            shown=count(shown),
            total=count(total),
        )
    else:
        footer = _(
            "&LResults: columns {columns}, every row (clear the print area to print more)&RPage "
            "&P of &N",
            columns=columns,
        )
    sheet.set_footer(footer)


def write_answer(
    sheet, styles: Styles, analysis: Record, run_name: str, notices: int, limit: int = SERIES_ROWS
) -> None:
    """The bottom line, the series table (the first `limit` series), what each bound means and
    how to read the times; printed landscape on one page. `notices`: how many the Summary
    sheet shows."""
    rows = series_rows(analysis, limit)
    lines = analysis.summary.lines
    columns = answer_columns(rows)
    widths = _widths(rows, columns)
    last = len(columns) - 1
    for col, width in enumerate(widths):
        sheet.set_column_width(col, width)
    title = _("Roofline run {run}: how long, and bound by what", run=run_name)
    sheet.write(0, 0, title, styles.title)
    sheet.merge_range(1, 0, 1, last, bottom_line(analysis.summary.bottom), styles.wrapped)
    sheet.set_row_height(1, 15 * TITLE_LINES)
    said = calibration_sentence(analysis.summary.calibration)
    if said:  # which calibration the estimates are, and how far off
        sheet.merge_range(2, 0, 2, last, said, styles.wrapped)
        sheet.set_row_height(2, 15 * 2)
    row = 4 if said else 3
    said_first = serving_sentences(analysis.summary.serving)  # the serving answer first
    said_first += training_sentences(analysis.summary.training)  # then the training answer
    for sentence in said_first:
        sheet.write(row - 1, 0, sentence, styles.text)
        row += 1
    if rows:
        row = _table(sheet, styles, rows, lines, columns, row)
    if len(lines) > len(rows):
        row += 1
        more = count(len(lines) - len(rows))
        if analysis.sampled:
            text = _(
                "... and {more} more series: summary.json lists every series, {rows_in} holds "
                "every scenario.",
                more=more,
                rows_in=analysis.rows_in,
            )
        else:
            text = _(
                "... and {more} more series: every scenario is on the Results sheet (filter its "
                "series column).",
                more=more,
            )
        sheet.write(row, 0, text, styles.text)
    row = _fleet(sheet, styles, analysis.summary.fleet, row)
    if rows:
        fleet_bounds = [{"bound": b} for b in set(analysis.summary.fleet["bound"])]
        row = _meanings(sheet, styles, rows + fleet_bounds, row + 2)
    row = _reading(sheet, styles, notices, row + 1, analysis.rows_in if analysis.sampled else "")
    sheet.set_landscape()
    sheet.set_print_fit_to_pages(1, 1)
    sheet.set_print_area(0, 0, row - 1, last)
    sheet.set_print_gridlines(False)


def answer_columns(rows: list[dict]) -> list[tuple[str, int | None]]:
    """The series table's COLUMNS for these series: dtype and chips only when some series
    differs from the default (bf16, one chip)."""
    shown = set(differing(rows))
    if any(r.get("estimate") for r in rows):  # calibrated: the estimate beside the floor
        shown |= set(ESTIMATES)
    return [(c, w) for c, w in COLUMNS if (c not in DEFAULTS and c not in ESTIMATES) or c in shown]


def _table(
    sheet, styles: Styles, rows: list[dict], lines: pd.DataFrame, columns: list, row: int
) -> int:
    """The series table from `row` (its header) down; its last row."""
    for col, (column, _width) in enumerate(columns):
        indent = column in ("bound", "fits")
        cell = (styles.header_right if column in RIGHT
                else styles.header_words if indent else styles.header)  # fmt: skip
        sheet.write(row, col, header(column), cell)
    for line in rows:  # at most `limit` series: a table, not the results
        row += 1
        fact = lines.loc[line["series"]]
        for col, (column, _width) in enumerate(columns):
            _cell(sheet, styles, row, col, column, line, fact)
    return row


def _cell(sheet, styles: Styles, row: int, col: int, header: str, line: dict, fact) -> None:
    """One cell of a series line: text, counts and times as numbers, words tinted."""
    if header in ("series", "hardware", "op", "shape", "dtype"):
        sheet.write(row, col, line[header], styles.text)
    elif header == "chips":  # one count a number; a fleet series' counts text (1|2|4|8)
        chips = line["chips"]
        sheet.write(row, col, *((int(chips), styles.integer) if chips.isdigit()
                                else (chips, styles.text)))  # fmt: skip
    elif header == "scenarios":
        sheet.write(row, col, line["scenarios"], styles.integer)
    elif header in ("time min", "time max", *ESTIMATES):
        key = {"time min": "t_min", "time max": "t_max"}.get(header) or ESTIMATES[header]
        value = line[key] if key in line else fact[key]
        if pd.notna(value):
            sheet.write(row, col, value, styles.time(value))
    elif header == "bound":
        tint = styles.bound_words.get(line["bound"], styles.words)
        sheet.write(row, col, line["bound_text"], tint)
    elif header == "critical batch":
        low, high = fact["critical_min"], fact["critical_max"]
        if pd.notna(low) and low == high:
            sheet.write(row, col, int(low), styles.integer)
        elif line["critical"]:
            sheet.write(row, col, line["critical"], styles.text)
    else:  # fits
        unfit = styles.not_fitting_words if line["not_fitting"] else styles.words
        sheet.write(row, col, line["fits"], unfit)


def _widths(rows: list[dict], columns: list) -> list[float]:
    """Each column as wide as its header and its widest value (text columns up to MAX_WIDTH)."""
    keys = {"series": "series", "shape": "shape", "bound": "bound_text", "dtype": "dtype",
            "chips": "chips"}  # fmt: skip
    widths = []
    for column, width in columns:
        if width is None:
            longest = max((text_width(str(r[keys[column]])) for r in rows), default=0)
            width = min(max(text_width(header(column)), longest) + 2, MAX_WIDTH)
        widths.append(header_width(width, header(column)))
    return widths


def _fleet(sheet, styles: Styles, fleet: pd.DataFrame, row: int) -> int:
    """Under the series table, each fleet series' answer in one line and where its table is
    (the Fleet sheet); the last row written."""
    answers = first_sentences(fleet)
    if not answers:
        return row
    row += 1
    for series, sentence in answers:
        row += 1
        sheet.write(row, 0, _("Fleet {series}: {sentence}", series=series, sentence=sentence),
                    styles.text)  # fmt: skip
    total = fleet["series"].nunique()
    if total > len(answers):
        row += 1
        text = _(
            "... and {more} more fleet series: summary.json lists their rankings (fleet).",
            more=count(total - len(answers)),
        )
        sheet.write(row, 0, text, styles.text)
    row += 1
    sheet.write(row, 0, fleet_pointer(), styles.text)
    return row


def _meanings(sheet, styles: Styles, rows: list[dict], row: int) -> int:
    """What each bound in the table (and the fleet lines) means to someone deciding what to
    change; the next row."""
    sheet.write(row, 0, _("What the bound means"), styles.section)
    present = {r["bound"] for r in rows}
    meanings = meaning()
    for bound in (*BOUNDS, MIXED):
        if bound not in present:
            continue
        row += 1
        sheet.write(row, 0, bound_word(bound), styles.bound.get(bound, styles.label))
        sheet.write(row, 1, meanings[bound], styles.text)
    return row + 1


def _reading(sheet, styles: Styles, notices: int, row: int, sample_of: str = "") -> int:
    """How to read the times and where the rest is (`sample_of`: where every scenario is,
    when Results holds a sample of them, as a Dask run's does); the next row."""
    sheet.write(row, 0, _("Reading this workbook"), styles.section)
    units = "1.01E-3 s = 1.01 ms, 4.88E-6 s = 4.88 µs"
    texts = [
        _(
            "time min / max: the fastest and the slowest scenario of the series (t_lower, the "
            "roofline's lower bound); the cells hold seconds."
        ),
        _("critical batch: {meaning}.", meaning=critical_batch_term()),
        _(
            "Results: a sample of the scenarios (all are in {sample_of}), time in t_lower (below "
            "a second in engineering notation: {units}). Summary: the run and counts per chip "
            "and op.",
            sample_of=sample_of,
            units=units,
        )
        if sample_of
        else _(
            "Results: every scenario, time in t_lower (below a second in engineering notation: "
            "{units}). Summary: the run and counts per chip and op.",
            units=units,
        ),
    ]
    for text in texts:
        row += 1
        sheet.write(row, 0, text, styles.text)
    if notices:
        row += 1
        text = (
            _("See the Summary sheet: 1 notice about this run.")
            if notices == 1
            else _("See the Summary sheet: {n} notices about this run.", n=count(notices))
        )
        sheet.write(row, 0, text, styles.notice)
    return row + 1
