"""The workbook's conditional formats, read back with openpyxl: time columns shown by
render.format's EXCEL_SECONDS_RULES (three significant digits, engineering notation below a
second), one cell format per distinct time (bound and fits tints: test_workbook.py)."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from openpyxl.utils import get_column_letter

import pipeline
from pipeline.render.format import EXCEL, EXCEL_SECONDS_RULES
from pipeline.render.workbook.styles import FORMATS, Styles
from tests.helpers import ROOT, column_of, workbook_of


@pytest.fixture(scope="module")
def results(book, tmp_path_factory):
    wb, _ = workbook_of(book, tmp_path_factory.mktemp("styles"))
    return wb["Results"]


def test_every_time_column_gets_the_time_rules_in_order(results, book):
    rows = len(book.results) + 1
    times = [c for c in book.results.columns if FORMATS.get(c) == "seconds"]
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


@pytest.fixture(scope="module")
def calibrated_steps(tmp_path_factory):
    """A calibrated run of transformer steps: the estimate and step columns on Results."""
    root = ROOT / "scenarios"
    calibration = pipeline.calibrate(root / "measured.csv")
    analysis = pipeline.analyze(root / "models.csv", calibration=calibration)
    wb, _ = workbook_of(analysis, tmp_path_factory.mktemp("steps"))
    return analysis, wb["Results"]


# written out here, not taken from the table the writer uses
NUMBER_FORMATS = {
    "t_lower": "seconds", "t_estimate": "seconds", "time_per_token": "seconds",
    "measured_seconds": "seconds", "measured_over_predicted": "ratio",
    "measured_over_estimate": "ratio", "tokens_per_second": "count", "compute_share": "percent",
    "memory_share": "percent", "network_share": "percent", "weight_bytes": "size",
    "kv_cache_bytes": "size", "max_batch": "count", "hbm_bytes": "size", "chips": "count",
    "link_bandwidth": "bandwidth", "attainable_flops": "flop_rate",
}  # fmt: skip


def test_each_number_column_of_results_has_its_format(calibrated_steps):
    _analysis, sheet = calibrated_steps
    formats = {}  # openpyxl keeps a run of alike columns under its first letter
    for dimension in sheet.column_dimensions.values():
        for col in range(dimension.min, dimension.max + 1):
            formats[col] = dimension.number_format
    for column, quantity in NUMBER_FORMATS.items():
        assert formats[column_of(sheet, column)] == EXCEL[quantity], column


def test_estimate_bound_is_tinted_as_bound(calibrated_steps):
    analysis, sheet = calibrated_steps
    n = len(analysis.results) + 1
    rules = {str(cf.sqref): cf.rules for cf in sheet.conditional_formatting}
    for column in ("bound", "estimate_bound"):
        letter = get_column_letter(column_of(sheet, column))
        assert [r.formula for r in rules[f"{letter}2:{letter}{n}"]] == [
            [f'${letter}2="compute"'],
            [f'${letter}2="memory"'],
            [f'${letter}2="network"'],
        ]
    times = [get_column_letter(column_of(sheet, c)) for c in ("t_estimate", "time_per_token")]
    timed = next(sqref for sqref, r in rules.items() if r[0].operator == "greaterThanOrEqual")
    assert all(f"{letter}2:{letter}{n}" in timed.split() for letter in times)


# the serve, train, energy and cost columns (issues 43-45), written out here as above
NEW_FORMATS = {
    "tdp": "watts", "energy": "energy", "usd_per_chip_hour": "usd_rate", "cost": "usd",
    "tokens_per_joule": "tokens_per_joule", "usd_per_million_tokens": "usd",
    "isl": "count", "osl": "count", "ttft": "seconds", "tpot": "seconds",
    "request_latency": "seconds", "tokens_per_second_per_chip": "count",
    "tokens_per_second_per_user": "count", "tpot_target": "seconds", "critical_tokens": "count",
    "tokens": "count", "model_flops": "flops", "mfu": "percent", "days": "days",
    "bubble": "percent", "weights_per_chip": "size", "gradients_per_chip": "size",
    "optimizer_per_chip": "size", "activations_per_chip": "size",
    "critical_tokens_per_chip": "count",
}  # fmt: skip


@pytest.fixture(scope="module")
def served_and_trained(tmp_path_factory):
    rows = [
        {"name": "s", "op": "serve", "model": "llama3-8b", "hardware": "h100", "B": 8,
         "isl": 512, "osl": 64, "tpot_target": 0.05},
        {"name": "t", "op": "train", "model": "llama3-8b", "hardware": "h100", "chips": 8,
         "tokens": 1e6, "train_tokens": 1e12},
    ]  # fmt: skip
    prices = pd.DataFrame({"hardware": ["h100"], "usd_per_chip_hour": [3.0],
                           "source": ["a quote"], "date": ["2026-11-01"]})  # fmt: skip
    analysis = pipeline.analyze(rows, prices=prices)
    wb, _ = workbook_of(analysis, tmp_path_factory.mktemp("served"))
    return analysis, wb


def test_the_serve_train_energy_and_cost_columns_have_formats_with_units(served_and_trained):
    analysis, wb = served_and_trained
    sheet = wb["Results"]
    formats = {}
    for dimension in sheet.column_dimensions.values():
        for col in range(dimension.min, dimension.max + 1):
            formats[col] = dimension.number_format
    assert set(NEW_FORMATS) <= set(analysis.results.columns)
    for column, quantity in NEW_FORMATS.items():
        assert formats[column_of(sheet, column)] == EXCEL[quantity], column
    assert '" W"' in EXCEL["watts"] and '" J"' in EXCEL["energy"] and "$" in EXCEL["usd"]
    hardware = wb["Hardware"]
    header = [c.value for c in hardware[1]]
    row = [c.value for c in hardware["A"]].index("h100") + 1
    assert hardware.cell(row, header.index("tdp") + 1).number_format == EXCEL["watts"]
