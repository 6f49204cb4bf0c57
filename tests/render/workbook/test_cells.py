"""Texts within Excel's 32,767 characters per cell: cut in the workbook only, never half a
surrogate pair, headers kept distinct, every cut counted."""

from __future__ import annotations

import pyarrow as pa

from pipeline.render.workbook.cells import (
    CELL_CHARS,
    FittedSheet,
    fit_column,
    fit_headers,
    fit_text,
)


def _units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def test_fit_text_keeps_a_text_that_fits_and_cuts_one_that_does_not():
    fits = "x" * CELL_CHARS
    assert fit_text(fits) is fits
    cut = fit_text("y" * (CELL_CHARS + 1))
    assert _units(cut) == CELL_CHARS and cut.endswith("…") and cut[:-1] == "y" * (CELL_CHARS - 1)


def test_fit_text_counts_utf16_units_and_never_splits_a_pair():
    emoji = "\U0001f600"  # two UTF-16 units
    assert fit_text(emoji * (CELL_CHARS // 2)) == emoji * (CELL_CHARS // 2)  # 32,766 units
    cut = fit_text(emoji * CELL_CHARS)
    assert cut.endswith("…") and _units(cut) <= CELL_CHARS
    assert set(cut[:-1]) == {emoji}  # whole pairs only


def test_fit_column_cuts_only_the_long_cells_and_counts_them():
    arr = pa.array(["a", None, "b" * (CELL_CHARS + 5), "c" * (CELL_CHARS + 1)])
    fitted, n = fit_column(arr)
    assert n == 2
    assert fitted[0].as_py() == "a" and fitted[1].as_py() is None
    assert all(_units(fitted[i].as_py()) == CELL_CHARS for i in (2, 3))
    same, none = fit_column(pa.array(["short", None]))
    assert none == 0 and same.to_pylist() == ["short", None]


def test_fit_headers_keeps_names_distinct_after_the_cut():
    long = "h" * (CELL_CHARS + 10)
    names = ["name", long, long + "2"]  # both cut to the same text
    fitted, cut = fit_headers(names)
    assert cut == [1, 2] and fitted[0] == "name"
    assert len(set(fitted)) == 3 and all(_units(f) <= CELL_CHARS for f in fitted)
    assert fitted[2].endswith("(column 3)…")


class _Sheet:
    name = "Answer"

    def __init__(self):
        self.cells = {}

    def write(self, row, col, value, *fmt):
        self.cells[row, col] = value

    def merge_range(self, r0, c0, r1, c1, value, *fmt):
        self.cells[r0, c0] = value

    def set_column(self, *args):
        self.cells["column"] = args


def test_fitted_sheet_cuts_counts_and_passes_the_rest_through():
    sheet = _Sheet()
    fitted = FittedSheet(sheet)
    fitted.write(0, 0, "z" * (CELL_CHARS + 1))
    fitted.write(1, 0, 3.5)
    fitted.merge_range(2, 0, 2, 3, "w" * (CELL_CHARS * 2))
    fitted.set_column(0, 0, 12)
    assert fitted.cut == 2 and sheet.cells[1, 0] == 3.5 and sheet.cells["column"] == (0, 0, 12)
    assert _units(sheet.cells[0, 0]) == CELL_CHARS
    assert fitted.notices("results.csv") == [
        "2 cells on the Answer sheet held more than Excel's 32,767 characters and are cut "
        "there; results.csv has them whole."
    ]


def test_a_dry_run_writes_nothing_and_still_counts():
    dry = FittedSheet(None, "Summary")
    dry.write(0, 0, "q" * (CELL_CHARS + 1))
    dry.set_column(0, 0, 12)  # anything else: a no-op
    assert dry.cut == 1 and dry.name == "Summary"
    assert FittedSheet(None, "Summary").notices("x") == []
