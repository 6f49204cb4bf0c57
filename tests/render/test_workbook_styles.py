"""The workbook's conditional formats, read back with openpyxl: time columns shown by
render.format's EXCEL_SECONDS_RULES (three significant digits, engineering notation below a
second), one cell format per distinct time (bound and fits tints: test_workbook.py)."""

from __future__ import annotations

import math

import pytest
from openpyxl.utils import get_column_letter

from pipeline.render.format import EXCEL, EXCEL_SECONDS_RULES
from pipeline.render.workbook import RESULT_FORMATS
from pipeline.render.workbook_styles import Styles
from tests.helpers import column_of, workbook_of


@pytest.fixture(scope="module")
def results(book, tmp_path_factory):
    wb, _ = workbook_of(book, tmp_path_factory.mktemp("styles"))
    return wb["Results"]


def test_every_time_column_gets_the_time_rules_in_order(results, book):
    rows = len(book.results) + 1
    times = [c for c in book.results.columns if RESULT_FORMATS.get(c) == "seconds"]
    assert {"t_lower", "t_math", "t_hbm", "t_network", "t_upper"} <= set(times)
    expected = " ".join(
        f"{get_column_letter(col)}2:{get_column_letter(col)}{rows}"
        for col in sorted(column_of(results, c) for c in times)
    )
    (rules,) = [cf.rules for cf in results.conditional_formatting if str(cf.sqref) == expected]
    assert [(r.operator, r.formula, r.stopIfTrue) for r in rules] == [
        ("greaterThanOrEqual", ["0.9995"], True),
        ("greaterThanOrEqual", ["0.0009995"], True),
        ("greaterThanOrEqual", ["0.0000009995"], True),
        ("greaterThanOrEqual", ["0.0000000009995"], True),
        ("greaterThan", ["0"], True),  # any other time above 0
    ]
    assert [r.dxf.numFmt.formatCode for r in rules] == [f for _, f in EXCEL_SECONDS_RULES]
    # the column's own format (0 s, or a viewer without conditional formats)
    assert results.cell(2, column_of(results, "t_lower")).number_format == EXCEL["seconds"]


@pytest.mark.parametrize(
    "seconds, shown",
    [
        (2.5, "2.50 s"),
        (12.34, "12.3 s"),
        (1234.6, "1,235 s"),
        (0.99996, "1.00 s"),  # rounds to a second: shown as one
        (0.178, "178E-3 s"),
        (0.0106, "10.6E-3 s"),
        (1.0111e-3, "1.01E-3 s"),
        (4.88e-6, "4.88E-6 s"),
        (87.2e-6, "87.2E-6 s"),
        (12.3e-9, "12.3E-9 s"),
        (300e-12, "300E-12 s"),
        (4.2e-12, "4.20E-12 s"),
    ],
)
def test_the_rules_show_three_significant_digits(seconds, shown):
    """What a spreadsheet shows: the first rule the value reaches, then its section."""
    rule = next(f for low, f in EXCEL_SECONDS_RULES if seconds >= low and seconds > 0)
    assert _show(rule, seconds) == shown


def test_one_cell_format_per_distinct_time():
    styles = Styles()
    assert styles.time(1.011e-3) is styles.time(1.012e-3)  # both "1.01 ms"
    assert styles.time(1.011e-3) is not styles.time(1.02e-3)


def _show(number_format: str, value: float) -> str:
    """A section of `number_format` ([>=x] conditions, then the default) applied to `value`:
    digits after the point as its zeros say, engineering notation when it has E+0."""
    sections = number_format.split(";")
    section = sections[-1]
    for candidate in sections[:-1]:
        bound, rest = candidate[3:].split("]", 1)
        if value >= float(bound):
            section = rest
            break
    pattern, unit = section.split('"')[0], section.split('"')[1]
    decimals = len(pattern.split(".")[1].split("E")[0]) if "." in pattern else 0
    if "E+0" not in pattern:
        return f"{value:,.{decimals}f}{unit}"
    exponent = 3 * math.floor(math.log10(value) / 3)
    return f"{value / 10**exponent:.{decimals}f}E{exponent}{unit}"
