"""The workbook's cell formats (made once per workbook) and its conditional formats: `bound`
tinted by value, `fits = FALSE` red, times shown by the rules of render.format (seconds in
engineering notation, the decimals picked per decade). Every format that carries text has the
quote prefix (docs/outputs.md#the-workbook)."""

from __future__ import annotations

from pipeline.catalogs.hardware import COLUMNS as HARDWARE_COLUMNS
from pipeline.model.roofline import BOUNDS
from pipeline.model.step_totals import STEP_COLUMNS
from pipeline.render.format import EXCEL, EXCEL_SECONDS_RULES, excel_seconds
from pipeline.render.workbook.xlsx_backend import rx

# Every sheet's number format by column (render.format.EXCEL's names): results.csv's columns
# (the Results sheet; the Answer and Models sheets show the same quantities) and the catalog's
# (the Hardware sheet). A column not named is text, or a number as it is (a dim).
_COLUMNS = {
    "count": ("chips", "critical_batch", "max_batch", "tokens_per_second",
              # a serve row's (model.serve_totals) and a train row's (model.train)
              "isl", "osl", "tokens_per_second_per_chip", "tokens_per_second_per_user",
              "batch_at_target", "critical_tokens", "tokens", "train_tokens", "microbatches",
              "critical_tokens_per_chip", "compute_bound_batch"),
    "flops": ("flops", "flops_per_chip", "model_flops"),
    "size": ("bytes_read", "bytes_written", "hbm_bytes", "network_bytes", "memory_footprint",
             "hbm_capacity", "weight_bytes", "kv_cache_bytes", "weights_per_chip",
             "gradients_per_chip", "optimizer_per_chip", "activations_per_chip"),
    "flop_rate": ("peak_flops", "attainable_flops",
                  *(c for c in HARDWARE_COLUMNS if c.startswith("peak_"))),
    "bandwidth": ("link_bandwidth", *(c for c in HARDWARE_COLUMNS if c.endswith("_bandwidth"))),
    "intensity": ("intensity", "critical_intensity"),
    "seconds": ("t_math", "t_hbm", "t_network", "t_lower", "t_upper", "t_estimate",
                "measured_seconds", "time_per_token", "ttft", "tpot", "request_latency",
                "ttft_target", "tpot_target",
                *(c for c in HARDWARE_COLUMNS if c.endswith("_latency"))),
    "percent": ("peak_fraction", *(c for c in STEP_COLUMNS if c.endswith("_share")), "mfu",
                "bubble"),
    # energy and cost (model.cost; tdp on the Hardware sheet too), a training run's days
    "watts": ("tdp",),
    "energy": ("energy",),
    "usd": ("cost", "usd_per_million_tokens"),
    "usd_rate": ("usd_per_chip_hour",),
    "tokens_per_joule": ("tokens_per_joule",),
    "days": ("days",),
    "ratio": ("measured_over_predicted", "measured_over_estimate"),
    "line": ("line",),
}  # fmt: skip
FORMATS = {column: quantity for quantity, names in _COLUMNS.items() for column in names}
TINTED = ("bound", "estimate_bound")  # text columns tinted by their bound (BOUND_COLOURS)

# fill, font: light tints of the charts' Okabe-Ito colours (render.charts.style.BOUND_COLORS)
BOUND_COLOURS = {
    "compute": ("#CCE3F0", "#003E61"),
    "memory": ("#FBE5B3", "#6B4A00"),
    "network": ("#F3DDE9", "#6E2A52"),
}
NOT_FITTING_COLOURS = ("#FFC7CE", "#9C0006")


def _format(
    *,
    text: bool = True,
    bold: bool = False,
    size: float | None = None,
    fill: str | None = None,
    font: str | None = None,
    number: str | None = None,
    align: str | None = None,
    border: bool = False,
    wrap: bool = False,
    indent: int = 0,
) -> rx.Format:
    f = rx.Format()
    if text:  # a cell made of the user's text stays text when someone edits it
        f.set_quote_prefix()
    if bold:
        f.set_bold()
    if size:
        f.set_font_size(size)
    if fill:
        f.set_background_color(fill)
    if font:
        f.set_font_color(font)
    if number:
        f.set_num_format(number)
    if align:
        f.set_align(align)
    if border:
        f.set_border_bottom("thin")
    if wrap:
        f.set_text_wrap()
        f.set_vertical_align("top")  # set_align takes horizontal names only ("top": left)
    if indent:
        f.set_indent(indent)
    return f


class Styles:
    """The workbook's cell formats, made once."""

    def __init__(self) -> None:
        self.header = _format(bold=True, fill="#D9E1F2", border=True)
        self.header_right = _format(bold=True, fill="#D9E1F2", border=True, align="right")
        self.header_words = _format(bold=True, fill="#D9E1F2", border=True, indent=1)
        # the same, wrapping at a space: a Korean header wider than its column (Models sheet),
        # at the foot of its cell as the headers beside it on one line
        self.header_wrapped = {
            "header": _format(bold=True, fill="#D9E1F2", border=True, wrap=True),
            "header_right": _format(
                bold=True, fill="#D9E1F2", border=True, align="right", wrap=True
            ),
            "header_words": _format(
                bold=True, fill="#D9E1F2", border=True, align="left", indent=1, wrap=True
            ),
        }
        for wrapped in self.header_wrapped.values():
            wrapped.set_vertical_align("bottom")
        self.title = _format(bold=True, size=14)
        self.section = _format(bold=True, size=12)
        self.label = _format(bold=True)
        self.text = _format()
        self.wrapped = _format(wrap=True)
        self.notice = _format(bold=True, font=NOT_FITTING_COLOURS[1])
        self.notice_wrapped = _format(bold=True, font=NOT_FITTING_COLOURS[1], wrap=True)
        self.count = _format(text=False, number=EXCEL["count"], align="left")
        self.integer = _format(text=False, number=EXCEL["count"])
        self.boolean = _format(text=False, number=EXCEL["boolean"])
        self.bound = {b: _format(fill=f, font=c) for b, (f, c) in BOUND_COLOURS.items()}
        self.bound_header = {
            b: _format(bold=True, border=True, fill=f, font=c, align="right")
            for b, (f, c) in BOUND_COLOURS.items()
        }
        self.not_fitting = _format(fill=NOT_FITTING_COLOURS[0], font=NOT_FITTING_COLOURS[1])
        # the Answer sheet's words beside right-aligned numbers: set off by an indent
        self.words = _format(indent=1)
        self.bound_words = {
            b: _format(fill=f, font=c, indent=1) for b, (f, c) in BOUND_COLOURS.items()
        }
        self.not_fitting_words = _format(
            fill=NOT_FITTING_COLOURS[0], font=NOT_FITTING_COLOURS[1], indent=1
        )
        # conditional formats carry only what they change: here the number format
        self.seconds_rules = [
            (float(low), _format(text=False, number=shown)) for low, shown in EXCEL_SECONDS_RULES
        ]
        self._columns: dict[tuple, rx.Format] = {}
        self._times: dict[str, rx.Format] = {}

    def column(self, number: str | None, text: bool, wrap: bool = False) -> rx.Format:
        """A column's cell format: its number format, or the quote prefix for text."""
        key = (number, text, wrap)
        if key not in self._columns:
            self._columns[key] = _format(text=text, number=number, wrap=wrap)
        return self._columns[key]

    def time(self, seconds: float) -> rx.Format:
        """One time cell's format: its value in words ('1.01 ms'), kept SI in the cell."""
        number = excel_seconds(seconds)
        if number not in self._times:  # one per distinct text: a few dozen on a sheet
            self._times[number] = _format(text=False, number=number, align="right")
        return self._times[number]


def column_letter(col: int) -> str:
    """A 0-based column's letters (0: A, 45: AT)."""
    # imported here: openpyxl's package import costs ~50 ms, which every command would pay
    from openpyxl.utils import get_column_letter

    return get_column_letter(col + 1)  # 1-based


def tint_bounds(sheet, styles: Styles, names: list[str], rows: int) -> None:
    """The TINTED columns' cells tinted by their bound; fits = FALSE in red."""
    if rows == 0:
        return
    tints = [(f'="{b}"', styles.bound[b]) for b in BOUNDS]
    for column, rules in (
        *((c, tints) for c in TINTED),
        ("fits", [("=FALSE", styles.not_fitting)]),
    ):
        if column not in names:
            continue
        col = names.index(column)
        letter = column_letter(col)
        for condition, cell_format in rules:
            rule = rx.ConditionalFormatFormula()
            rule.set_rule(f"=${letter}2{condition}")
            rule.set_format(cell_format)
            # The writer's constant-memory guard takes a rule's rows for rows being written, so
            # the rule is placed on the last row written and its range given explicitly.
            rule.set_multi_range(f"{letter}2:{letter}{rows + 1}")
            sheet.add_conditional_format(rows, col, rows, col, rule)


def show_times(sheet, styles: Styles, columns: list[int], rows: int, top: int = 0) -> None:
    """Time columns (0-based `columns`, data below the header on row `top`, 0-based) shown by
    EXCEL_SECONDS_RULES: the first rule whose lower bound a cell reaches applies (a time of 0
    keeps the column's)."""
    if rows == 0 or not columns:
        return
    ranges = " ".join(
        f"{column_letter(c)}{top + 2}:{column_letter(c)}{top + rows + 1}" for c in columns
    )
    last = max(columns)
    for low, cell_format in styles.seconds_rules:
        rule = rx.ConditionalFormatCell()
        if low > 0:
            rule.set_rule_greater_than_or_equal_to(low)
        else:
            rule.set_rule_greater_than(0)
        rule.set_format(cell_format)
        rule.set_stop_if_true(True)
        rule.set_multi_range(ranges)  # as in tint_bounds: placed on the last row written
        sheet.add_conditional_format(top + rows, last, top + rows, last, rule)
