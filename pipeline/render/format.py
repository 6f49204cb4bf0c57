"""The one number formatter: how a quantity is shown to people, in charts, in the report and
in the workbook. Data stays in SI units (FLOP, FLOP/s, bytes, bytes/s, seconds); only what a
person reads is scaled: three significant digits and an SI prefix (`1.01 ms`, `197 TFLOP/s`,
`16.0 GB`; decimal units, 1 GB = 10^9 bytes). The workbook cannot run Python on a cell, so
the same choices are written once more as Excel number formats (EXCEL), which scale values
down by thousands and show times in engineering notation (docs/outputs.md#the-workbook)."""

from __future__ import annotations

import math
from datetime import datetime
from decimal import Decimal
from numbers import Integral

import pandas as pd

from pipeline.i18n import _

DASH = "\u2014"  # shown for a missing value
_UP = ((1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""))
_DOWN = ((1.0, ""), (1e-3, "m"), (1e-6, "\u00b5"), (1e-9, "n"), (1e-12, "p"))


def missing(value) -> bool:
    """None, NA or NaN."""
    if value is None or value is pd.NA:
        return True
    return isinstance(value, float) and math.isnan(value)


def _three_digits(x: float) -> str:
    """A value in [1, 1000) (or below 1 for the smallest unit) with three significant digits."""
    if x >= 100:
        return f"{x:,.0f}"
    if x >= 10:
        return f"{x:.1f}"
    if x >= 1:
        return f"{x:.2f}"
    return f"{x:.3g}"


def with_prefix(value, unit: str, prefixes=_UP, trim: bool = False) -> str:
    """`value` scaled to the largest prefix that keeps it >= 1, three significant digits
    (`trim`: without trailing zeros, as on an axis: '50 TFLOP/s', not '50.0 TFLOP/s')."""
    if missing(value):
        return DASH
    v = float(value)
    if math.isinf(v):
        return "\u221e" if v > 0 else "-\u221e"
    if v == 0:
        return f"0 {unit}"
    rounded = float(f"{abs(v):.3g}")  # round first, so 999.7e9 becomes 1.00e12, not "1000 G"
    factor, prefix = next(((f, p) for f, p in prefixes if rounded >= f), prefixes[-1])
    sign = "-" if v < 0 else ""
    digits = _three_digits(rounded / factor)
    if trim and "." in digits:
        digits = digits.rstrip("0").rstrip(".")
    return f"{sign}{digits} {prefix}{unit}"


def seconds(value) -> str:
    """1.011e-3 -> '1.01 ms' (s, ms, µs, ns, ps)."""
    return with_prefix(value, "s", _DOWN)


def flop_rate(value, trim: bool = False) -> str:
    """1.97e14 -> '197 TFLOP/s'."""
    return with_prefix(value, "FLOP/s", trim=trim)


def flops(value) -> str:
    """2.06e12 -> '2.06 TFLOP'."""
    return with_prefix(value, "FLOP")


def size(value) -> str:
    """Bytes, decimal units as the book uses them: 1.6e10 -> '16.0 GB'."""
    return with_prefix(value, "B")


def bandwidth(value) -> str:
    """Bytes/s: 8.2e11 -> '820 GB/s'."""
    return with_prefix(value, "B/s")


def percent(fraction) -> str:
    """0.4615 -> '46.2%' (0 and 1 without decimals)."""
    if missing(fraction):
        return DASH
    f = float(fraction)
    if f in (0.0, 1.0):
        return f"{f * 100:.0f}%"
    return f"{f * 100:.1f}%"


def number(value) -> str:
    """A plain quantity (intensity, FLOP/byte): 238.25 -> '238', 0.5 -> '0.500', 4377 -> '4,377'."""
    if missing(value):
        return DASH
    v = float(value)
    if math.isinf(v):
        return "\u221e"
    if v == 0:
        return "0"
    a = abs(v)
    if a < 1:  # three significant digits, written out: 0.500, not 0.5
        return f"{v:.{2 - math.floor(math.log10(a))}f}"
    return ("-" if v < 0 else "") + _three_digits(a)


def count(value) -> str:
    """A count with thousands separators, a float rounded to a whole: 1035 -> '1,035'."""
    if missing(value):
        return DASH
    if isinstance(value, Integral):  # exact, however large
        return f"{int(value):,}"
    return f"{float(value):,.0f}"


_PARAMETERS = ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K"))


def parameters(value) -> str:
    """A parameter count as people say it: 6.74e9 -> '6.74B', 125e6 -> '125M', 1 -> '1';
    past 999T in powers of ten: 3e20 -> '3.00e20'."""
    if missing(value):
        return DASH
    v = float(value)
    rounded = float(f"{v:.3g}")  # 999.7e9 is 1.00T, not 1,000B
    if rounded >= 1e15:
        mantissa, exponent = f"{v:.2e}".split("e")
        return f"{mantissa}e{int(exponent)}"
    suffix = next(((f, p) for f, p in _PARAMETERS if rounded >= f), None)
    if suffix:
        return _three_digits(rounded / suffix[0]) + suffix[1]
    return count(v) if v.is_integer() else number(v)


def span(low, high, shown=count) -> str:
    """A range, each end shown by `shown`, an en dash between: span(137, 227) -> '137 – 227';
    one value when the ends are equal."""
    if low == high:
        return shown(low)
    return f"{shown(low)} \u2013 {shown(high)}"


def rounded(value: float) -> str:
    """Whole from 10 up, three significant digits below (a ridge's FLOP/byte on a chart):
    240.6 -> '241', 8.755 -> '8.76'."""
    return count(value) if value >= 10 else f"{value:.3g}"


def tick(value: float) -> str:
    """A log axis's tick label: 0.01 -> '0.01', 1000 -> '1,000', 1e5 and up as '1e5'."""
    if value >= 1e5:
        return f"{value:.0e}".replace("e+0", "e").replace("e+", "e")
    if value >= 1:
        return count(value)
    return f"{value:g}"


def fixed(value: float, unit: float = 1.0, decimals: int = 0) -> str:
    """`value` in a fixed unit with fixed decimals, for a column of one unit:
    fixed(1.97e14, 1e12, 1) -> '197.0' (TFLOP/s)."""
    return f"{value / unit:.{decimals}f}"


def sort_key(value) -> str:
    """A number as a compact `data-v` attribute for the table sorter; empty when missing."""
    if missing(value):
        return ""
    return f"{float(value):.5g}"


def ratio(value) -> str:
    """A factor: 1.847 -> '1.85×'."""
    if missing(value):
        return DASH
    return f"{number(value)}\u00d7"


def times(value) -> str:
    """A factor in a sentence: '1.85×' ('1.85배' in Korean, where × reads as a noun)."""
    if missing(value):
        return DASH
    return _("{factor}×", factor=number(value))


def when(text: str) -> str:
    """An ISO 8601 UTC timestamp as 'YYYY-MM-DD HH:MM:SS UTC' (anything else unchanged)."""
    try:
        moment = datetime.fromisoformat(text)
    except (TypeError, ValueError):
        return text
    offset = moment.utcoffset()
    if offset is not None and offset.total_seconds() == 0:
        return moment.strftime("%Y-%m-%d %H:%M:%S UTC")
    return text


def counted(n: int, one: str, many: str) -> str:
    """`n` with its noun, one or many (texts of the catalog, in the current language:
    _("{n} scenario"), _("{n} scenarios"))."""
    return (one if n == 1 else many).format(n=count(n))


def plural(n: int, noun: str) -> str:
    """'1 row', '2 rows', '1,035 scenarios' (the number as count() shows it)."""
    return f"{count(n)} {noun}" + ("" if n == 1 else "s")


# Excel number formats: a trailing comma divides by 1,000; a format cannot multiply, so times
# are shown in engineering notation (E-3 = ms, E-6 = µs). Conditions use plain digits.
EXCEL = {
    "seconds": '[=0]0" s";##0.000E+0" s"',
    "flop_rate": '[>=1000000000000]#,##0.00,,,," TFLOP/s";'
    '[>=1000000000]#,##0.00,,," GFLOP/s";#,##0.00,," MFLOP/s"',
    "flops": '[>=1000000000000]#,##0.00,,,," TFLOP";[>=1000000000]#,##0.00,,," GFLOP";'
    '#,##0.00,," MFLOP"',
    "size": '[>=1000000000]#,##0.00,,," GB";[>=1000000]#,##0.00,," MB";#,##0" B"',
    "bandwidth": '#,##0.0,,," GB/s"',
    "intensity": '#,##0.0" FLOP/B"',
    "percent": "0.0%",
    "ratio": '0.00"×"',
    "count": "#,##0",
    "line": "0",
    "boolean": '"TRUE";"TRUE";"FALSE"',  # Excel shows a boolean as is; LibreOffice prints 1 / 0
    # energy and cost (docs/model.md#energy-and-cost), a training run's days
    "watts": '#,##0" W"',
    "energy": '[>=1000000]#,##0.00,," MJ";[>=1000]#,##0.00," kJ";##0.00E+0" J"',
    "usd": '[>=0.01]"$"#,##0.00;"$"0.00E+0',  # a cent and more plainly, less in E notation
    "usd_rate": '"$"#,##0.00" /h"',
    "tokens_per_joule": '#,##0.00" tok/J"',
    "days": '#,##0.0" days"',
}

# Times. A format cannot multiply (LibreOffice honours one % at most; Excel's trick of hiding
# %%% on a second line breaks there and on paste), so no column format shows 0.00101 as
# "1.01 ms". A column of times shows three significant digits in engineering notation
# (E-3 s = ms), a second and more plainly; conditional formatting picks the format by value,
# the first rule whose lower bound the value reaches (EXCEL_SECONDS_RULES). One cell (the
# Answer sheet) gets excel_seconds(value): its value in words, shown while it rounds to them.
_ENGINEERING = '##0.00E+0" s"'


def _plain(x: Decimal) -> str:
    return f"{x.normalize():f}"


def _decades(unit: Decimal, shown: tuple[str, str, str]) -> str:
    """Three sections for the three decades from `unit` on (99.95 x unit rounds to 100)."""
    return (f"[>={_plain(Decimal('99.95') * unit)}]{shown[0]};"
            f"[>={_plain(Decimal('9.995') * unit)}]{shown[1]};{shown[2]}")  # fmt: skip


EXCEL_SECONDS_RULES = (
    (Decimal("0.9995"), _decades(Decimal(1), ('#,##0" s"', '0.0" s"', '0.00" s"'))),
    *(
        (Decimal("0.9995") * unit, _decades(unit, ('##0E+0" s"', '##0.0E+0" s"', _ENGINEERING)))
        for unit in (Decimal("1e-3"), Decimal("1e-6"), Decimal("1e-9"))
    ),
    (Decimal(0), _decades(Decimal("1e-12"), ('##0E+0" s"', '##0.0E+0" s"', _ENGINEERING))),
)  # the last rule: any time above 0 (0 is the column format's "0 s")


def excel_seconds(value) -> str:
    """The number format of one time cell: seconds(value) ('1.01 ms') for every value that
    rounds to it, engineering notation for any other (the cell edited)."""
    if missing(value) or not math.isfinite(float(value)) or float(value) < 0:
        return EXCEL["seconds"]
    v = float(value)
    if v == 0:
        return f'[=0]"{seconds(v)}";{_ENGINEERING}'
    shown = Decimal(f"{v:.3g}")  # rounded as with_prefix rounds
    step = Decimal(1).scaleb(shown.adjusted() - 2)  # one in the third digit
    below = step / 10 if shown == Decimal(1).scaleb(shown.adjusted()) else step
    low, high = _plain(shown - below / 2), _plain(shown + step / 2)
    return f'[<{low}]{_ENGINEERING};[<{high}]"{seconds(v)}";{_ENGINEERING}'


def efficiencies(row) -> str:
    """'compute 90.0%, HBM 85.0%' from a mapping with compute_efficiency, hbm_efficiency and
    network_efficiency; an efficiency of 1 is left out."""
    labels = {"compute_efficiency": "compute", "hbm_efficiency": "HBM",
              "network_efficiency": "network"}  # fmt: skip
    return ", ".join(f"{label} {percent(row[c])}" for c, label in labels.items() if row[c] < 1)
