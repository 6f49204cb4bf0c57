"""The workbook's Serving sheet, right after Answer and only when the run has serve rows: one
line per serve series and configuration at its best batch (render.text.serving_table, as the
report's Serving table), the planner's columns first (configuration, B, tokens/s per chip,
TTFT, TPOT, meets the targets or why not); numbers as numbers (times in seconds shown in words
by their format, dollars and tokens per joule with theirs), units in the headers, the user's
names as text cells (docs/outputs.md#the-serving-table-and-chart)."""

from __future__ import annotations

import pandas as pd

from pipeline.i18n import _
from pipeline.render.text.serving_table import serving_tables
from pipeline.render.workbook.cells import FittedSheet, text_width
from pipeline.render.workbook.styles import Styles
from pipeline.render.workbook.table_sheet import HEADER_ROW, finish_table, start_table, write_line

SHEET = "Serving"
# (column, the record's key, its kind, width in characters); its header is `header(column)`
COLUMNS = (
    ("configuration", "config", "text", 18),
    ("B", "B", "count", 7),
    ("tokens/s per chip", "per_chip", "count", 11),
    ("TTFT (s)", "ttft", "seconds", 11),
    ("TPOT (s)", "tpot", "seconds", 11),
    ("meets the targets / why not", "verdict", "verdict", 30),
    ("rank", "rank", "count", 6),
    ("tokens/s per user", "per_user", "rate", 11),
    ("request latency (s)", "request_latency", "seconds", 12),
    ("series", "series", "text", 14),
    ("model", "model", "text", 14),
    ("hardware", "hardware", "text", 10),
    ("dtype", "dtype", "text", 7),
    ("KV cache dtype", "kv_dtype", "text", 9),
    ("chips", "chips", "count", 7),
    ("input tokens (isl)", "isl", "count", 10),
    ("output tokens (osl)", "osl", "count", 10),
    ("TTFT target (s)", "ttft_target", "seconds", 11),
    ("TPOT target (s)", "tpot_target", "seconds", 11),
    ("time basis", "time_basis", "text", 10),
)
# with prices (`cost`), with the chips' TDP (`energy`): issue 44's figures
COST_COLUMNS = (
    ("USD per million tokens", "usd_per_million_tokens", "usd", 12, "cost"),
    ("tokens per joule", "tokens_per_joule", "joule", 10, "energy"),
    ("cost rank", "cost_rank", "count", 7, "cost"),
    ("energy rank", "energy_rank", "count", 7, "energy"),
)
USD = '[<1]"$"0.0000;"$"#,##0.00'  # dollars: four decimals under $1 ('$0.0858'), else two
RATE = "#,##0.0"
JOULE = "[<10]0.00;#,##0.0"  # tokens per joule: two decimals under 10


def header(column: str) -> str:
    """A column of the sheet as its header says it, in the run's language."""
    return {
        "configuration": _("configuration"), "B": "B",
        "tokens/s per chip": _("tokens/s per chip"), "TTFT (s)": _("TTFT (s)"),
        "TPOT (s)": _("TPOT (s)"), "meets the targets / why not": _("meets the targets / why not"),
        "rank": _("rank"), "tokens/s per user": _("tokens/s per user"),
        "request latency (s)": _("request latency (s)"), "series": _("series"),
        "model": _("model"), "hardware": _("hardware"), "dtype": "dtype",
        "KV cache dtype": _("KV cache dtype"), "chips": _("chips"),
        "input tokens (isl)": _("input tokens (isl)"),
        "output tokens (osl)": _("output tokens (osl)"),
        "TTFT target (s)": _("TTFT target (s)"), "TPOT target (s)": _("TPOT target (s)"),
        "time basis": _("time basis"), "USD per million tokens": _("USD per million tokens"),
        "tokens per joule": _("tokens per joule"), "cost rank": _("cost rank"),
        "energy rank": _("energy rank"),
    }[column]  # fmt: skip


def write_serving_sheet(book, styles: Styles, serving: pd.DataFrame, whole: str) -> list[str]:
    """The Serving sheet added to `book` when `serving` (Summary.serving) has rows; the notices
    of its cells cut to Excel's limit (`whole`: where the texts are whole)."""
    if serving is None or serving.empty:
        return []
    sheet = FittedSheet(book.add_worksheet(SHEET))
    write_serving(sheet, styles, serving)
    return sheet.notices(whole)


def write_serving(sheet, styles: Styles, serving: pd.DataFrame) -> None:
    """Every line of Summary.serving: a title, what the lines and columns mean, the header and
    a line per configuration, filterable; printed landscape, one page wide."""
    tables = serving_tables(serving, limit=len(serving), rows=len(serving))
    extra = tuple(c[:4] for c in COST_COLUMNS if tables[c[4]])
    shown = COLUMNS + extra
    longest = max(text_width(r["config"]) for s in tables["series"] for r in s["rows"])
    start_table(sheet, styles, shown, header, min(longest + 2, 44), _(
        "Serving: which configuration gives the most tokens/s per chip within the targets"), (_(
        "One line per serve series and configuration (model, chip, dtypes, chip count) at its "
        "best batch B: the most tokens/s per chip among its points that meet the targets and "
        "fit in HBM, ranked per model (rank 1 the best); a configuration meeting at no B "
        "follows at its point nearest to meeting, and says why."), _(
        "TTFT: the prefill of one request; TPOT: one decode step per output token; request "
        "latency: TTFT + (osl − 1) · TPOT; tokens/s per chip: B / (TPOT · chips); tokens/s per "
        "user: 1 / TPOT; time basis: estimate (a calibration covers the steps) or floor "
        "(t_lower). The time cells hold seconds.")))  # fmt: skip
    formats = {
        "count": styles.integer,
        "rate": styles.column(RATE, text=False),
        "usd": styles.column(USD, text=False),
        "joule": styles.column(JOULE, text=False),
    }
    row = HEADER_ROW
    shared = ("series", "isl", "osl", "ttft_target", "tpot_target")  # the series'
    for table in tables["series"]:
        for line in table["rows"]:
            row += 1
            record = {**line, **{k: table[k] for k in shared}}
            write_line(sheet, styles, row, shown, record, line["meets"], formats)
    finish_table(sheet, row, len(shown))
