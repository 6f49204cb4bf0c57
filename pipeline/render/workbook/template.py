"""The starter workbook of `pipeline template` (docs/input.md#starting-from-a-spreadsheet): a
Scenarios sheet with every input column, the shipped q1-q5 rows as examples, drop-down lists
and a note on each header cell (meaning, unit, default); a Hardware sheet with the catalog,
for reference (the tool never reads it back: it says so above the table and is locked against
edits; a chip is added or changed with a --hardware file); a Lists sheet the drop-downs read.
Written into the temporary file `pipeline.write_template` (api/analyze.py) then renames into
place.

Numbers stay numbers and are shown as typed (format `0`: no thousands separators, no scientific
notation, so a CSV saved from the sheet reads back the same); every other cell is a text cell
with Excel's quote prefix, so a note starting with `=` stays text.
"""

from __future__ import annotations

import csv
import io
import re
from importlib import resources
from pathlib import Path

import pandas as pd

from pipeline.catalogs.hardware import (
    EFFICIENCY_COLUMNS,
    LINKS,
    Catalog,
    catalog_records,
)
from pipeline.catalogs.spellings import shown_aliases
from pipeline.i18n import _
from pipeline.model.dtypes import ALIASES, DTYPES
from pipeline.model.ops import COLLECTIVES, CUSTOM, DIM, NAMED_OPS, SERVE, TRAIN, TRANSFORMER
from pipeline.render.workbook.book import _hardware_frame, _table
from pipeline.render.workbook.cells import text_width
from pipeline.render.workbook.styles import Styles
from pipeline.render.workbook.template_notes import note
from pipeline.render.workbook.xlsx_backend import language_keywords, rx
from pipeline.scenarios.header import DTYPE_INPUTS, KNOWN, OVERRIDES

DEFAULT_PATH = "scenarios.xlsx"
EXAMPLES = "q1-q5.csv"  # pipeline/data/q1-q5.csv: scenarios/q1-q5.csv, shipped in the package
VALIDATED_ROWS = 10_000  # data rows (from row 2) that get the drop-downs
INTEGER = "0"  # digits as typed: 65536, 1000000000000 (never 1E+12 or 65,536)
AUTHOR = "roofline-pipeline"  # Excel shows a note's author above its text


TEXT_COLUMNS = (
    "name",
    "op",
    "model",
    "hardware",
    *DTYPE_INPUTS,
    "kv_dtype",
    "group",
    "shard",
    "link",
    "notes",
    "draft_model",  # a serve row's
    *("parallel", "mesh_axes", "remat", "optimizer"),  # a train row's
)
# shown as typed (General): fractions and seconds (a serve row's targets)
FRACTION_COLUMNS = (*EFFICIENCY_COLUMNS, "measured_seconds", "ttft_target", "tpot_target",
                    "acceptance")  # fmt: skip
TOTALS = (*OVERRIDES, "flops", "bytes")  # numbers of 15 digits and more: 1e15 FLOP/s
WIDTHS = {"totals": 18, "dim": 8, "fraction": 10, "notes": 60}  # characters


def hardware_note() -> str:
    """Above the Hardware sheet's table: the tool reads the Scenarios sheet only."""
    return _(
        "For reference: the hardware catalog this workbook was made with. The tool never reads "
        "this sheet, so it is locked against edits. To add a chip or change a figure, write a "
        "hardware file (CSV or TOML: a name column and the fields to set) and give it when you "
        "run: pipeline run scenarios.xlsx --hardware mine.csv (pipeline hardware NAME shows a "
        "chip's fields and their sources)."
    )


HARDWARE_TOP = 2  # the Hardware sheet's header row (0-based): the note, a blank row, the table
NOTE_COLUMNS, NOTE_LINES = 10, 3  # the note's cells, merged, and the lines it wraps to


def lists(catalog: Catalog, dims: list[str]) -> dict[str, list[str]]:
    """The drop-down lists, by name: ops, chips with their aliases, dtypes, links, dims."""
    chips: list[str] = []
    for name, aliases in catalog.chips["aliases"].items():
        chips += [str(name), *shown_aliases(aliases)]
    return {
        "op": [*NAMED_OPS, CUSTOM, *COLLECTIVES, TRANSFORMER, SERVE, TRAIN],
        "hardware": chips,
        "dtype": [*DTYPES, *ALIASES],
        "link": list(LINKS),
        "shard": dims,
    }


def validations() -> dict[str, tuple[str, str, str, str]]:
    """column -> (list, error style, input title, input message), the message in the run's
    language; Excel caps a title at 32 characters and a message at 255. Only op takes text off
    its list as a matter of course (an einsum); the others warn, since a chip of a --hardware
    file or a new dim letter is fine."""
    pick = _("Pick one or type it; any case.")
    return {
        "op": ("op", "information", "op", _("Pick one, or type an einsum such as BSD,DF->BSF.")),
        "hardware": (
            "hardware",
            "warning",
            "hardware",
            _("Pick a chip or alias (Hardware sheet); a chip of your --hardware file is fine too."),
        ),
        **{c: ("dtype", "warning", c, pick) for c in DTYPE_INPUTS},
        "link": ("link", "warning", "link", _("Blank: the chip's default link. {pick}", pick=pick)),
        "shard": ("shard", "warning", "shard", _("The dim split across the chips: a dim column.")),
    }


def load_examples() -> tuple[list[str], list[list[str]]]:
    """The shipped example rows (pipeline/data/q1-q5.csv) as text cells: header, rows."""
    text = (resources.files("pipeline") / "data" / EXAMPLES).read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if not line.startswith("#")]
    header, *rows = list(csv.reader(io.StringIO("\n".join(lines))))
    return header, rows


def template_columns(example_header: list[str]) -> list[str]:
    """name, op, the examples' dims, then every other input column, notes last."""
    dims = [c for c in example_header if DIM.match(c)]
    rest = [c for c in KNOWN if c not in ("name", "op", "notes")]
    return ["name", "op", *dims, *rest, "notes"]


_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def cell_value(column: str, text: str) -> str | int | float:
    """A CSV cell as the template holds it: a plain number in a number column as a number
    (a whole one as an int), anything else (a sweep, a name, a note) as the text itself."""
    if column in TEXT_COLUMNS or not _NUMBER.match(text.strip()):
        return text
    value = float(text)
    return int(value) if value.is_integer() and abs(value) < 2**53 else value


def write_starter(path: Path, catalog: Catalog) -> None:
    """Write the starter workbook into `path` (a temporary file the caller places)."""
    header, rows = load_examples()
    columns = template_columns(header)
    book = rx.Workbook(str(path))
    styles = Styles()
    scenarios = book.add_worksheet("Scenarios")
    _scenarios(scenarios, styles, columns, header, rows)
    hardware = book.add_worksheet("Hardware")
    frame, formats = _hardware_frame(catalog_records(catalog), pd.DataFrame(), pd.DataFrame())
    hardware.merge_range(0, 0, 0, NOTE_COLUMNS - 1, hardware_note(), styles.notice_wrapped)
    hardware.set_row_height(0, 15 * NOTE_LINES)
    _table(
        hardware,
        styles,
        frame,
        formats,
        1,
        _("the hardware catalog"),
        wrap="source",
        top=HARDWARE_TOP,
    )
    # edits here would change nothing: Excel refuses them (filtering and widths still work)
    hardware.protect_with_options(
        rx.ProtectionOptions(use_autofilter=True, format_columns=True, format_rows=True)
    )
    choices = lists(catalog, [c for c in columns if DIM.match(c)])
    _lists(book.add_worksheet("Lists"), styles, choices)
    _validations(scenarios, columns, choices)
    book.set_properties(
        title=_("Roofline scenarios: a starter workbook"),
        comments=EXAMPLES,
        keywords=language_keywords(),
    )
    book.close()


def _kind(column: str) -> str:
    if column in TEXT_COLUMNS:
        return "text"
    return "fraction" if column in FRACTION_COLUMNS else "integer"


def _width(column: str, cells: list[str]) -> int:
    """Characters: the header and its filter arrow, the widest example, the column's least."""
    least = WIDTHS["totals"] if column in TOTALS else WIDTHS["dim"]
    if _kind(column) == "fraction":
        least = WIDTHS["fraction"]
    widest = max([len(column) + 3, *(len(c) + 2 for c in cells), least])
    return min(widest, WIDTHS["notes"])


def _scenarios(sheet, styles: Styles, columns: list[str], header: list[str], rows) -> None:
    """Header with notes, the example rows, a format and width per column."""
    sheet.set_default_note_author(AUTHOR)
    formats = {
        "text": styles.column(None, True),
        "integer": styles.column(INTEGER, False),
        "fraction": styles.column(None, False),
    }
    sweep = rx.Format()  # text among numbers (1..512): kept text, aligned with them
    sweep.set_quote_prefix()
    sweep.set_align("right")
    for col, column in enumerate(columns):
        kind = _kind(column)
        sheet.set_column_format(col, formats[kind])
        cells = [r[header.index(column)] for r in rows] if column in header else []
        sheet.set_column_width(col, _width(column, cells))
        sheet.write(0, col, column, styles.header if kind == "text" else styles.header_right)
        text = note(column)
        comment = rx.Note(text)
        comment.set_width(360)
        comment.set_height(30 + 15 * (text_width(text) // 55 + text.count("\n")))
        sheet.insert_note(0, col, comment)
    for r, row in enumerate(rows, start=1):
        for column, text in zip(header, row, strict=True):
            if text == "":
                continue
            value = cell_value(column, text)
            # text in a number column (a sweep, 1..512) carries the quote prefix cell by cell
            fmt = sweep if isinstance(value, str) and column not in TEXT_COLUMNS else None
            sheet.write(r, columns.index(column), value, fmt)
    sheet.freeze_panes(1, 1)
    sheet.set_landscape()
    sheet.set_repeat_rows(0, 0)


def _lists(sheet, styles: Styles, choices: dict[str, list[str]]) -> None:
    """One column per drop-down list, its name in the header."""
    for col, (name, values) in enumerate(choices.items()):
        sheet.write(0, col, name, styles.header)
        for row, value in enumerate(values, start=1):
            sheet.write(row, col, value, styles.text)
        sheet.set_column_width(col, max(len(name), *map(len, values)) + 2)
    sheet.freeze_panes(1, 0)


def _validations(sheet, columns: list[str], choices: dict[str, list[str]]) -> None:
    """A drop-down on each listed column, from its list on the Lists sheet."""
    order = list(choices)
    for column, (name, style, title, message) in validations().items():
        if column not in columns:
            continue
        letter = chr(ord("A") + order.index(name))
        rule = rx.DataValidation()
        rule.allow_list_formula(f"Lists!${letter}$2:${letter}${len(choices[name]) + 1}")
        rule.set_error_style(style)
        rule.set_input_title(title)
        rule.set_input_message(message)
        rule.set_error_title(_("Not on the list of {name}", name=name))
        rule.set_error_message(
            _("The tool checks it when it reads the sheet. {message}", message=message)
            if style != "information"
            else _("Kept as typed. {message}", message=message)
        )
        col = columns.index(column)
        sheet.add_data_validation(1, col, VALIDATED_ROWS, col, rule)
