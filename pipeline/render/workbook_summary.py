"""The workbook's Summary sheet (the run, its notices, bound counts per hardware and per op,
critical batches, a legend) and its Charts sheet (each PNG under its title)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from PIL import Image

from pipeline.model.roofline import BOUNDS, CRITICAL_BATCH
from pipeline.record import Record
from pipeline.render import format as fmt
from pipeline.render.charts import Chart
from pipeline.render.workbook_styles import Styles

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
    out.put((f"Roofline run: {run_name}", styles.title))
    out.skip()
    out.put(("Run", styles.section))
    rejected = "see the Errors sheet and errors.csv" if summary.rejected_rows else None
    for label, value, extra in (
        ("Input file", analysis.source, None),
        ("Input SHA-256", analysis.source_sha256 or "(rows given in memory)", None),
        ("Started", analysis.started, None),
        ("Tool version", analysis.tool_version, None),
        ("Hardware catalog version", analysis.catalog_version, None),
        ("Source rows", summary.source_rows, None),
        ("Scenarios computed", summary.scenarios, None),
        ("Rejected rows", summary.rejected_rows, rejected),
    ):
        out.put(
            (label, styles.label), (value, styles.count) if isinstance(value, int) else value, extra
        )
    for title, texts in (
        ("Warnings about the input", analysis.warnings),
        ("Notices", list(notices)),
    ):
        if texts:
            out.skip()
            out.put((title, styles.section))
            for text in texts:
                out.put((text, styles.notice))
    for key, table in (("hardware", summary.per_hardware), ("op", summary.per_op)):
        out.skip()
        out.put((f"Bound per {key} (all {fmt.count(summary.scenarios)} scenarios)", styles.section))
        out.put(
            (key, styles.header),
            *((b, styles.bound_header[b]) for b in BOUNDS),
            ("not fitting", styles.header_right),
            ("total", styles.header_right),
        )
        for name, row in table.iterrows():  # one line per chip or op: a handful
            out.put(str(name), *(int(row[c]) for c in (*BOUNDS, "not_fitting", "total")))
        if len(table) > 1:
            totals = table.sum()
            out.put(
                ("all", styles.label), *(int(totals[c]) for c in (*BOUNDS, "not_fitting", "total"))
            )
    out.skip()
    out.put(("Critical batch sizes", styles.section))
    out.put(f"{CRITICAL_BATCH.capitalize()}.")
    batches = summary.critical_batches
    if len(batches):
        out.put(
            *((h, styles.header) for h in ("series", "hardware", "op", "dtypes")),
            ("batch", styles.header_right),
        )
        for series, row in batches.head(CRITICAL_BATCH_LINES).iterrows():
            low, high = int(row["low"]), int(row["high"])
            batch = low if low == high else fmt.span(low, high)
            out.put(str(series), row["hardware"], row["op"], row["dtypes"], batch)
        if len(batches) > CRITICAL_BATCH_LINES:
            more = fmt.count(len(batches) - CRITICAL_BATCH_LINES)
            out.put(f"... and {more} more series; filter critical_batch on the Results sheet.")
    else:
        out.put("No scenario in this run becomes compute-bound by growing its batch.")
    out.skip()
    out.put(("How to read the Results sheet", styles.section))
    for text in (
        "Cells hold the SI values of results.csv; the number format only changes the display.",
        "Times: seconds, three digits; below a second in engineering notation: "
        "1.01E-3 s = 1.01 ms, 240E-6 s = 240 µs, 12.3E-9 s = 12.3 ns.",
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
