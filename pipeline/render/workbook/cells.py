"""Text within Excel's limit of 32,767 characters (UTF-16 code units) per cell, in the
workbook only: a longer cell, column header or name is cut there, ending in "…", and each
cut is said on the Summary sheet (results.csv and the scenario file keep the text whole).
Data sheets cut their Arrow columns and headers (`fit_column`, `fit_headers`); the sheets
written a cell at a time (Answer, Summary, Changes, Charts) go through a `FittedSheet`."""

from __future__ import annotations

import unicodedata

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.i18n import _
from pipeline.render.format import count

CELL_CHARS = 32_767  # Excel's limit of characters (UTF-16 code units) in one cell


def text_width(text: str) -> int:
    """How many columns of Excel's width `text` takes: 2 for a wide character (Hangul, CJK),
    1 for any other (so an English text's width is its length)."""
    if text.isascii():
        return len(text)
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def header_width(width: float, header: str) -> float:
    """A column's width in characters, widened to its header when the header is in wide
    characters (a Korean run's); an English header leaves it as it is."""
    return width if header.isascii() else max(width, text_width(header) + 2)


def wrapped_width(width: float, header: str) -> float:
    """A column's width for a header that wraps at a space (a Korean run's): widened to the
    wider of its header's two lines, split where they are most even; English as it is."""
    if header.isascii():
        return width
    words = header.split(" ")
    lines = [
        max(text_width(" ".join(words[:i])), text_width(" ".join(words[i:])))
        for i in range(1, len(words))
    ]
    return max(width, min(lines, default=text_width(header)) + 2)


def yes_no(flag: bool) -> str:
    """'yes' or 'no', in the run's language."""
    return _("yes") if flag else _("no")


def fit_text(text: str) -> str:
    """`text`, or its first CELL_CHARS - 1 UTF-16 units (never half a pair) and "…"."""
    if len(text) <= CELL_CHARS // 2:  # even a text of surrogate pairs fits
        return text
    units = text.encode("utf-16-le")
    if len(units) // 2 <= CELL_CHARS:
        return text
    return units[: 2 * (CELL_CHARS - 1)].decode("utf-16-le", "ignore") + "…"


def fit_column(arr: pa.Array) -> tuple[pa.Array, int]:
    """A text column with its cells past Excel's limit cut to it, and how many were."""
    long = np.flatnonzero(
        pc.fill_null(pc.greater(pc.utf8_length(arr), CELL_CHARS // 2), False).to_numpy(
            zero_copy_only=False
        )
    )
    if not len(long):
        return arr, 0
    values = arr.to_pylist()
    n = 0
    for i in long.tolist():  # only the cells past half the limit: a few
        fitted = fit_text(values[i])
        n += fitted is not values[i]
        values[i] = fitted
    return pa.array(values, type=pa.string()), n


def fit_headers(names: list[str]) -> tuple[list[str], list[int]]:
    """Column headers within the limit, still distinct (a cut one that meets another ends
    in its column's number), and the positions of those cut."""
    fitted: list[str] = []
    cut: list[int] = []
    for i, name in enumerate(names):
        short = fit_text(name)
        if short is not name:
            cut.append(i)
            if short in names or short in fitted:
                mark = f" (column {i + 1})…"
                short = short[: -1 - len(mark)] + mark
        fitted.append(short)
    return fitted, cut


class FittedSheet:
    """A worksheet whose text cells are cut to the limit, the cuts counted; with no sheet, a
    dry run that writes nothing and only counts (so the Summary can say the cuts of the
    sheets written after it, and its own). Every other method passes through."""

    def __init__(self, sheet, name: str | None = None):
        self._sheet = sheet
        self.name = name if sheet is None else sheet.name
        self.cut = 0

    def _fit(self, value):
        if isinstance(value, str):
            fitted = fit_text(value)
            self.cut += fitted is not value
            return fitted
        return value

    def write(self, row: int, col: int, value, *cell_format) -> None:
        """One cell, its text cut to the limit."""
        if self._sheet is not None:
            self._sheet.write(row, col, self._fit(value), *cell_format)
        else:
            self._fit(value)

    def merge_range(self, first_row, first_col, last_row, last_col, value, *cell_format) -> None:
        """Merged cells holding one value, its text cut to the limit."""
        value = self._fit(value)
        if self._sheet is not None:
            self._sheet.merge_range(first_row, first_col, last_row, last_col, value, *cell_format)

    def __getattr__(self, attr: str):
        if self._sheet is None:
            return lambda *args, **kwargs: None
        return getattr(self._sheet, attr)

    def notices(self, whole: str) -> list[str]:
        """What the Summary says of this sheet's cuts (`whole`: where the texts are whole)."""
        if not self.cut:
            return []
        values = {"sheet": self.name, "limit": count(CELL_CHARS), "whole": whole}
        if self.cut == 1:
            return [
                _(
                    "1 cell on the {sheet} sheet held more than Excel's {limit} characters and "
                    "are cut there; {whole} has them whole.",
                    **values,
                )
            ]
        return [
            _(
                "{cells} cells on the {sheet} sheet held more than Excel's {limit} characters and "
                "are cut there; {whole} has them whole.",
                cells=count(self.cut),
                **values,
            )
        ]
