"""The workbook's Summary sheet (the run, its notices, bound counts per hardware and per op,
critical batches, a legend) and its Charts sheet (each PNG under its title)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from PIL import Image

from pipeline.calibration.estimate import unused_warnings
from pipeline.i18n import _
from pipeline.model.roofline import BOUNDS
from pipeline.record import Record
from pipeline.render import format as fmt
from pipeline.render.charts import Chart
from pipeline.render.text.answer import bound_word, critical_batch_term
from pipeline.render.workbook.styles import Styles

CRITICAL_BATCH_LINES = 50  # series listed on the Summary sheet
ROW_HEIGHT_PX = 20  # Excel's default row height (15 pt)


class _Lines:
    """Writes the Summary sheet top to bottom, a row at a time."""

    def __init__(self, sheet, styles: Styles):
        self.sheet, self.styles, self.row = sheet, styles, 0

    def put(self, *cells) -> None:
        """One row: each cell a value or (value, format); None leaves the cell empty."""
        for col, cell in enumerate(cells):
            value, cell_format = cell if isinstance(cell, tuple) else (cell, None)
            if value is None:
                continue
            if cell_format is None:
                cell_format = self.styles.text if isinstance(value, str) else self.styles.integer
            self.sheet.write(self.row, col, value, cell_format)
        self.row += 1

    def skip(self, rows: int = 1) -> None:
        self.row += rows


def write_summary(
    sheet, styles: Styles, analysis: Record, run_name: str, notices: Sequence[str]
) -> None:
    """The run, its warnings and notices, bound counts per hardware and op, critical batches
    (the first CRITICAL_BATCH_LINES series), and how to read the Results sheet."""
    for col, width in enumerate((34, 14, 14, 16, 20, 14)):
        sheet.set_column_width(col, width)
    sheet.set_print_fit_to_pages(1, 0)  # printed: one page wide
    summary = analysis.summary
    out = _Lines(sheet, styles)
    out.put((_("Roofline run: {run}", run=run_name), styles.title))
    out.skip()
    out.put((_("Run"), styles.section))
    rejected = _("see the Errors sheet and errors.csv") if summary.rejected_rows else None
    for label, value, extra in (
        (_("Input file"), analysis.source, None),
        (_("Input SHA-256"), analysis.source_sha256 or _("(rows given in memory)"), None),
        (_("Started"), analysis.started, None),
        (_("Tool version"), analysis.tool_version, None),
        (_("Hardware catalog version"), analysis.catalog_version, None),
        (_("Source rows"), summary.source_rows, None),
        (_("Scenarios computed"), summary.scenarios, None),
        (_("Rejected rows"), summary.rejected_rows, rejected),
    ):
        out.put(
            (label, styles.label), (value, styles.count) if isinstance(value, int) else value, extra
        )
    about_calibration = unused_warnings(summary.calibration)  # not about the input
    for title, texts in (
        (_("Warnings about the input"), [w for w in analysis.warnings
                                         if w not in about_calibration]),
        (_("Warning about the calibration"), list(about_calibration)),
        (_("Notices"), list(notices)),
    ):  # fmt: skip
        if texts:
            out.skip()
            out.put((title, styles.section))
            for text in texts:
                out.put((text, styles.notice))
    scenarios = fmt.count(summary.scenarios)
    for title, key, table in (
        (_("Bound per hardware (all {n} scenarios)", n=scenarios), _("hardware"),
         summary.per_hardware),
        (_("Bound per op (all {n} scenarios)", n=scenarios), _("op"), summary.per_op),
    ):  # fmt: skip
        out.skip()
        out.put((title, styles.section))
        out.put(
            (key, styles.header),
            *((bound_word(b), styles.bound_header[b]) for b in BOUNDS),
            (_("not fitting"), styles.header_right),
            (_("total"), styles.header_right),
        )
        for name, row in table.iterrows():  # one line per chip or op: a handful
            out.put(str(name), *(int(row[c]) for c in (*BOUNDS, "not_fitting", "total")))
        if len(table) > 1:
            totals = table.sum()
            out.put(
                (_("all"), styles.label),
                *(int(totals[c]) for c in (*BOUNDS, "not_fitting", "total")),
            )
    out.skip()
    out.put((_("Critical batch sizes"), styles.section))
    out.put(f"{critical_batch_term().capitalize()}.")
    batches = summary.critical_batches
    if len(batches):
        out.put(
            *((h, styles.header) for h in (_("series"), _("hardware"), _("op"), _("dtypes"))),
            (_("batch"), styles.header_right),
        )
        for series, row in batches.head(CRITICAL_BATCH_LINES).iterrows():
            low, high = int(row["low"]), int(row["high"])
            batch = low if low == high else fmt.span(low, high)
            out.put(str(series), row["hardware"], row["op"], row["dtypes"], batch)
        if len(batches) > CRITICAL_BATCH_LINES:
            more = fmt.count(len(batches) - CRITICAL_BATCH_LINES)
            out.put(
                _(
                    "... and {more} more series; filter critical_batch on the Results sheet.",
                    more=more,
                )
            )
    else:
        out.put(_("No scenario in this run becomes compute-bound by growing its batch."))
    out.skip()
    out.put((_("How to read the Results sheet"), styles.section))
    for text in (
        _("Cells hold the SI values of results.csv; the number format only changes the display."),
        _(
            "Times: seconds, three digits; below a second in engineering notation: "
            "1.01E-3 s = 1.01 ms, 240E-6 s = 240 µs, 12.3E-9 s = 12.3 ns."
        ),
        _("FLOP/s in TFLOP/s (GFLOP/s, MFLOP/s when smaller); FLOPs in TFLOP / GFLOP / MFLOP."),
        _("Bytes in GB / MB (1 GB = 1e9 bytes), whole bytes below 1 MB; bandwidth in GB/s."),
        _("flops is the op's total; every other count is per chip."),
    ):
        out.put(text)
    out.put(
        ("bound:", styles.label),
        *((b, styles.bound[b]) for b in BOUNDS),
        ("fits = FALSE", styles.not_fitting),
    )


def write_charts(sheet, styles: Styles, charts: Sequence[tuple[Chart, Path]]) -> None:
    """Each chart's title and file name, its PNG below them, one under another."""
    sheet.set_print_fit_to_pages(1, 0)
    row = 0
    for chart, path in charts:
        with Image.open(path) as image:
            dpi = image.info.get("dpi", (96, 96))[1] or 96
            height = image.height * 96.0 / dpi  # the writer sizes an image by its dpi
        sheet.write(row, 0, chart.title, styles.section)
        sheet.write(row + 1, 0, chart.path, styles.text)
        sheet.insert_image(row + 2, 0, str(path))
        row += 2 + math.ceil(height / ROW_HEIGHT_PX) + 2
