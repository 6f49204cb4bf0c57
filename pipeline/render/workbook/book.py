"""workbook.xlsx, for planners who filter it, paste from it and mail it on
(docs/outputs.md#the-workbook). Written with rvgsrust-xlsxwriter (rust_xlsxwriter under a
Python API), or XlsxWriter where it is not installed (render.workbook.xlsx_backend): the big sheets
stream Arrow columns straight into constant-memory worksheets.

Sheets, in order: Answer (render.workbook.answer), Serving (with serve rows:
render.workbook.serving), Training (with train rows: render.workbook.training), Models (with
transformer steps: render.workbook.steps), Fleet (with fleet series: render.workbook.fleet),
Changes (with a baseline: render.workbook.changes), Summary, Results (the columns that answer
first), Hardware, Inputs, Errors (only when rows were rejected), Charts
(only when charts were drawn). Results and Errors hold the first `max_rows` rows, Inputs the
first `max_input_rows`; the Summary says what the caps left out.

Numbers stay numbers: every cell holds the SI value of results.csv, and a number format
(render.format.EXCEL) does the human part. Text from the input is always a text cell (this
writer never turns a string into a formula, number or link) and carries Excel's quote prefix,
so it stays text when someone edits the cell. Text past Excel's 32,767 characters per cell (a
cell, a column header, a name on the Answer sheet) is cut there, and the Summary says so
(render.workbook.cells).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.catalogs.hardware import COLUMNS as HARDWARE_COLUMNS
from pipeline.errors import OutputError, quoted
from pipeline.i18n import _
from pipeline.limits import DEFAULT_WORKBOOK_INPUT_ROWS, DEFAULT_WORKBOOK_ROWS
from pipeline.record import Record
from pipeline.render.charts import Chart
from pipeline.render.format import EXCEL, count, efficiencies, plural
from pipeline.render.workbook.answer import print_results, results_columns, write_answer
from pipeline.render.workbook.cells import CELL_CHARS, FittedSheet, fit_column, fit_headers
from pipeline.render.workbook.changes import write_changes
from pipeline.render.workbook.fleet import write_fleet_sheet
from pipeline.render.workbook.serving import write_serving_sheet
from pipeline.render.workbook.steps import write_models_sheet
from pipeline.render.workbook.styles import (
    FORMATS,
    Styles,
    column_letter,
    show_times,
    tint_bounds,
)
from pipeline.render.workbook.summary import write_charts, write_summary
from pipeline.render.workbook.training import write_training_sheet
from pipeline.render.workbook.xlsx_backend import language_keywords, panic_reason, rx, spooling_in
from pipeline.scenarios.xlsx.sheet import CAPPED_NOTE

EXCEL_MAX_ROWS = 1_048_576  # Excel's row limit, header included
WRAP_WIDTH = 100  # characters, for long text that wraps (hardware sources)
ROW_HEIGHT_PT = 15

HARDWARE_FORMATS = {c: FORMATS[c] for c in HARDWARE_COLUMNS if c in FORMATS}
LINE = {"line": FORMATS["line"]}  # Inputs and Errors: the file's cells as read, its lines
WIDTHS = {
    "seconds": 14, "flop_rate": 17, "flops": 16, "size": 13, "bandwidth": 14, "intensity": 15,
    "percent": 9, "ratio": 9, "count": 9, "line": 7, "watts": 9, "energy": 14, "usd": 12,
    "usd_rate": 11, "tokens_per_joule": 14, "days": 11,
}  # fmt: skip


def cap_notices(
    rows_cap: int, input_cap: int, results: int, inputs: int, errors: int, rows_in="results.csv"
) -> list[str]:
    """What the workbook's row caps leave out, said plainly (`rows_in`: where every row is)."""
    cap = min(rows_cap, EXCEL_MAX_ROWS - 1)
    input_cap = min(input_cap, cap)
    notices = []
    if results > cap:
        notices.append(
            _(
                "Results sheet holds the first {cap} of {total} rows; {rows_in} has them all.",
                cap=count(cap),
                total=count(results),
                rows_in=rows_in,
            )
        )
    if inputs > input_cap:
        notices.append(
            _(
                "Inputs sheet holds the first {cap} of {total} input rows; the scenario file has "
                "them all.",
                cap=count(input_cap),
                total=count(inputs),
            )
        )
    if errors > cap:
        notices.append(
            _(
                "Errors sheet holds the first {cap} of {total} problems; errors.csv has them all.",
                cap=count(cap),
                total=count(errors),
            )
        )
    return notices


def write_workbook(
    analysis: Record,
    path: Path,
    run_name: str,
    charts: Sequence[tuple[Chart, Path]] | Callable[[], Sequence[tuple[Chart, Path]]] = (),
    notices: Sequence[str] = (),
    *,
    max_rows: int = DEFAULT_WORKBOOK_ROWS,
    max_input_rows: int = DEFAULT_WORKBOOK_INPUT_ROWS,
    spool: Path | None = None,
    baseline=None,
) -> list[str]:
    """Write workbook.xlsx at `path`; returns the notices only it can know (cells cut to
    Excel's limit). The Summary shows them after `notices`, the run's notices about the
    workbook (what its row caps leave out: `cap_notices`, computed once by the caller).
    `charts` are (Chart, PNG file) pairs, embedded on the Charts sheet; or a function giving
    them, called once the data sheets are written (so the charts can be drawn meanwhile).
    `spool`: the folder for the writer's temporary files (default: the system's, TMPDIR).
    The caps were checked by write()'s arguments. `baseline` (run.baseline.Baseline) adds the
    Changes sheet after Answer and Fleet (render.workbook.changes)."""
    cap = min(max_rows, EXCEL_MAX_ROWS - 1)
    input_cap = min(max_input_rows, cap)
    results, problems, inputs = analysis.results, analysis.problems, analysis.inputs
    own: list[str] = []
    with spooling_in(spool):
        try:
            book = rx.Workbook(str(path))
            styles = Styles()
            answer = FittedSheet(book.add_worksheet("Answer"))
            own += write_serving_sheet(book, styles, analysis.summary.serving, analysis.rows_in)
            own += write_training_sheet(book, styles, analysis.summary.training, analysis.rows_in)
            own += write_models_sheet(book, styles, analysis)
            own += write_fleet_sheet(book, styles, analysis.summary.fleet, analysis.rows_in)
            if baseline is not None:
                changes = FittedSheet(book.add_worksheet("Changes"))
                own += write_changes(changes, styles, baseline, cap)
                own += changes.notices("changes.csv")
            summary = FittedSheet(book.add_worksheet("Summary"))
            sheet = book.add_worksheet("Results", constant_memory=True)
            shown = results.iloc[:cap][results_columns(results.columns)]
            own += _table(sheet, styles, shown, FORMATS, 1, analysis.rows_in)
            tint_bounds(sheet, styles, list(shown.columns), len(shown))
            print_results(sheet, len(shown), len(results))
            hardware, formats = _hardware_frame(
                analysis.hardware, analysis.summary.derated, analysis.summary.chips
            )
            sheet = book.add_worksheet("Hardware")
            own += _table(
                sheet, styles, hardware, formats, 1, _("the hardware catalog"), wrap="source"
            )
            sheet = book.add_worksheet("Inputs", constant_memory=True)
            own += _table(sheet, styles, inputs.iloc[:input_cap], LINE, 2, _("the scenario file"))
            # the reader (scenarios.xlsx.sheet) warns on this line, found by its English start: the
            # Inputs sheet is a scenario file, in English whatever the run's language
            if len(inputs) > input_cap:
                sheet.write(
                    input_cap + 2,
                    0,
                    f"{CAPPED_NOTE}: the first {count(input_cap)} of {count(len(inputs))} are, "
                    "so this sheet cannot be run again whole; the scenario file has them all.",
                )
            if len(problems):
                sheet = book.add_worksheet("Errors")
                errors = problems.iloc[:cap]
                own += _table(sheet, styles, errors, LINE, 0, "errors.csv")
            if callable(charts):
                charts = charts()
            if charts:
                sheet = FittedSheet(book.add_worksheet("Charts"))
                write_charts(sheet, styles, charts)
                own += sheet.notices(analysis.rows_in)
            # the Summary and Answer sheets' own cuts (a long name), counted by a dry run
            for name, write in (
                ("Summary", lambda s: write_summary(s, styles, analysis, run_name, ())),
                ("Answer", lambda s: write_answer(s, styles, analysis, run_name, 0)),
            ):
                dry = FittedSheet(None, name)
                write(dry)
                own += dry.notices(analysis.rows_in)
            write_summary(summary, styles, analysis, run_name, [*notices, *own])
            write_answer(answer, styles, analysis, run_name, len(notices) + len(own))
            # the title in English: `pipeline run` finds a run's own workbook by it
            # (scenarios.xlsx); the keywords say the language of the words for people
            book.set_properties(
                title=f"Roofline run {run_name}",
                comments=analysis.source,
                keywords=language_keywords(),
            )
            book.close()
        except OSError as exc:
            raise OutputError(f"writing {path.name} failed: {exc.strerror or exc}") from exc
        except (ValueError, RuntimeError) as exc:
            raise OutputError(f"writing {path.name} failed: {exc}") from exc
        except BaseException as exc:
            # rust_xlsxwriter panics on a failed write (a full disk); pyo3 raises that as a
            # BaseException, which would pass every `except Exception` up the stack
            if type(exc).__name__ != "PanicException":
                raise
            raise OutputError(f"writing {path.name} failed: {panic_reason(exc)}") from None
    return own


def _arrow(frame: pd.DataFrame) -> tuple[pa.Table, dict[str, int]]:
    """The frame as Arrow columns the writer streams: categories and text as strings (each
    cut to CELL_CHARS, counted per column), NaN as blank."""
    columns, cut = {}, {}
    for name in frame.columns:
        series = frame[name]
        if isinstance(series.dtype, pd.CategoricalDtype):
            arr = pc.cast(pa.array(series, from_pandas=True), pa.string())
        elif series.dtype == object or pd.api.types.is_string_dtype(series.dtype):
            arr = pa.array(series.astype(object).where(series.notna(), None), type=pa.string())
        elif isinstance(series.dtype, pd.BooleanDtype) or series.dtype.kind == "b":
            arr = pa.array(series.astype("boolean"), type=pa.bool_(), from_pandas=True)
        else:
            arr = pa.array(series, from_pandas=True)
        if pa.types.is_string(arr.type):
            arr, n = fit_column(arr)
            if n:
                cut[str(name)] = n
        columns[str(name)] = arr
    return pa.table(columns), cut


def _table(
    sheet,
    styles: Styles,
    frame: pd.DataFrame,
    formats: dict[str, str],
    freeze: int,
    whole: str,
    wrap: str | None = None,
    top: int = 0,
) -> list[str]:
    """A header row (row `top`, 0-based), then the frame's rows: formats per column, text
    quote-prefixed, widths, header frozen, autofilter, printed landscape with the header on
    every page. Returns the notices of cells and headers cut to Excel's limit (`whole` says
    where they are whole)."""
    headers, long = fit_headers([str(c) for c in frame.columns])
    if long:
        frame = frame.set_axis(headers, axis=1)
    table, cut = _arrow(frame)
    names = table.column_names
    rows = table.num_rows
    for col, name in enumerate(names):
        quantity = formats.get(name)
        text = pa.types.is_string(table.schema.field(name).type)
        # A column's format is the format of every cell written in it without one of its
        # own (the writer applies it as it writes: 2.4 x faster than a format per cell).
        sheet.set_column_format(
            col, styles.column(EXCEL[quantity] if quantity else None, text, wrap=name == wrap)
        )
        sheet.set_column_width(col, _width(name, table.column(name), quantity, wrap == name))
        if text and rows:  # text as read ("4096"): no "number stored as text" triangles
            sheet.ignore_error_range(top + 1, col, top + rows, col, "number_stored_as_text")
    sheet.set_infinity_value("inf")
    sheet.set_neg_infinity_value("-inf")
    if wrap in names and rows:
        lengths = pc.fill_null(pc.utf8_length(table.column(wrap)), 0).to_numpy()
        for row in np.flatnonzero(lengths > 1.2 * WRAP_WIDTH).tolist():
            lines = int(np.ceil(lengths[row] / (1.2 * WRAP_WIDTH)))
            sheet.set_row_height(top + row + 1, ROW_HEIGHT_PT * lines)
    if rows:
        # a boolean cell gets its format per cell (the writer leaves it without the column's)
        flags = {
            n: styles.boolean for n in names if pa.types.is_boolean(table.schema.field(n).type)
        }
        sheet.write_dataframe(top, 0, table, header_format=styles.header, column_formats=flags)
    else:  # the writer writes nothing for no rows, not even the header
        for col, name in enumerate(names):
            sheet.write(top, col, name, styles.header)
    sheet.freeze_panes(top + 1, min(freeze, max(len(names) - 1, 0)))
    sheet.set_landscape()
    sheet.set_repeat_rows(top, top)
    if names:
        sheet.autofilter(top, 0, top + rows, len(names) - 1)
    times = [c for c, n in enumerate(names) if formats.get(n) == "seconds"]
    show_times(sheet, styles, times, rows, top)
    said = [
        _(
            "{n} cell(s) of column {column} on the {sheet} sheet held more than Excel's {limit} "
            "characters and are cut there; {whole} has them whole.",
            n=count(n),
            column=column if len(column) <= 120 else quoted(column),
            sheet=sheet.name,
            limit=count(CELL_CHARS),
            whole=whole,
        )
        for column, n in cut.items()
    ]
    if long:
        said.append(
            _(
                "the header of column {letters} on the {sheet} sheet held more than Excel's "
                "{limit} characters and is cut there; {whole} has it whole.",
                letters=", ".join(column_letter(i) for i in long),
                sheet=sheet.name,
                limit=count(CELL_CHARS),
                whole=whole,
            )
        )
    return said


def _width(name: str, column: pa.ChunkedArray, quantity: str | None, wrap: bool) -> float:
    """Column width in characters: the header plus the filter arrow, or the widest early cell."""
    width = min(len(str(name)) + 3, 60)  # a long header wraps, never a wall of a column
    if wrap:
        return WRAP_WIDTH
    if quantity is not None:
        return max(width, WIDTHS.get(quantity, 12))
    if pa.types.is_string(column.type):
        sample = pc.utf8_length(column.slice(0, 1000))
        longest = pc.max(sample).as_py() or 0
        return min(max(width, longest) + 1, 60)
    return max(width, 10)


def _hardware_frame(
    hardware: Sequence[dict], derated: pd.DataFrame, chips: pd.DataFrame
) -> tuple[pd.DataFrame, dict[str, str]]:
    """Catalog rows as a frame, numbers as floats; `source` last (it is long and wraps). When
    rows are derated, each rate has a `<rate>_derated` column beside it (e x nominal, with the
    chip's most used efficiencies) and `derated_rows` / `efficiencies` say which. Returns the
    frame and its column formats."""
    keys = list(HARDWARE_COLUMNS)
    for record in hardware:
        keys += [k for k in record if k not in keys]
    keys = [k for k in keys if k != "source"] + ["source"]
    data = {}
    for key in keys:
        values = [record.get(key) for record in hardware]
        if key in HARDWARE_FORMATS:
            data[key] = pd.Series([np.nan if v in (None, "") else v for v in values], dtype=float)
        else:
            data[key] = pd.Series(
                [None if v in (None, "") else str(v) for v in values], dtype=object
            )
    frame = pd.DataFrame(data, columns=keys)
    formats = dict(HARDWARE_FORMATS)
    if derated.empty:
        return frame, formats
    names = frame["name"].astype(str)
    timed_lower = names.map(chips["derated_rows"]).fillna(0).to_numpy() > 0  # blank: nominal
    texts = {
        hw: "; ".join(
            f"{efficiencies(row)} ({plural(int(row['rows']), 'row')})"
            for _, row in group.iterrows()
        )
        for hw, group in derated.groupby("hardware", sort=False)  # a few triples per chip
    }
    out: dict[str, pd.Series] = {}
    for key in frame.columns:
        if key == "source":
            out["derated_rows"] = names.map(chips["derated_rows"]).astype(float)
            out["efficiencies"] = names.map(texts)
            formats["derated_rows"] = "count"
        out[key] = frame[key]
        fmt_key = HARDWARE_FORMATS.get(key)
        if f"{key}_derated" in chips.columns:  # a rate: derated beside it (Summary.chips)
            rates = names.map(chips[f"{key}_derated"]).astype(float)
            out[f"{key}_derated"] = rates.where(timed_lower)
            formats[f"{key}_derated"] = fmt_key
    return pd.DataFrame(out), formats
