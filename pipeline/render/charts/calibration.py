"""The calibration chart (issue 32 item 1: "a predicted-vs-measured chart, log-log with the
y = x line, before and after"; issue 41: a colour per dtype, the symmetric error): each
measured row's predicted time against its measured time, the roofline floor (t_lower) on the
left, the calibrated estimate (t_estimate) on the right, on the same log-log axes with the
line predicted = measured, a colour per dtype (a collective's op for a collective), and each
panel's median and p90 of the error max(t/m, m/t) - 1: the numbers the fit computed and the
calibration file states (ERRORS), drawn, not redone."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, LogLocator

from pipeline.calibration.estimate import ERRORS, KINDS
from pipeline.i18n import _, current_lang
from pipeline.model.dtypes import DTYPES
from pipeline.render import format as fmt
from pipeline.render.charts.fleet import FLEET_COLORS
from pipeline.render.charts.labels import chart_text, rows_text
from pipeline.render.charts.style import (
    ROOF_COLOR,
    in_chart_fonts,
    log_time_axis,
    new_figure,
    short_seconds,
    titles,
)

# points between a panel's heading and its axes, over its error line: Hangul stands taller
# than Latin letters of the same size, so a Korean heading needs a little more
TITLE_PAD = (17, 20)
SHOWN_GROUPS = 8  # groups with a colour and a legend entry, the largest; the rest grey
# the fleet chart's colours but black, which would read as the line predicted = measured
POINT_COLORS = tuple(c for c in FLEET_COLORS if c != "#000000")
OTHER_COLOR = "#9a9a9a"
WIDTH = 11.0  # inches: two square panels side by side
PANEL = 4.3  # inches: each panel's side
HEAD = 0.85  # inches: the figure's title and subtitle
PANEL_HEAD = 0.5  # inches: a panel's title and error line
LEFT, GAP = 0.95, 1.0  # inches: left of the first panel, between the panels
BOTTOM = 0.6  # inches: the x axis' ticks and label under a panel
LEGEND_FONT = 8.5
ROW_INCHES = 0.21  # a legend row's height at LEGEND_FONT
LEGEND_COLUMNS = 3


@dataclass(frozen=True)
class CalibrationChartData:
    """The points of a calibration chart, one per row with a measured time and a floor (in
    seconds): its floor, its estimate (NaN where no used group estimates it) and its colour's
    group (`group`, codes into `group_names`: its dtype, 'bf16', or a collective's op); the
    errors the calibration states (`errors`, ERRORS' names: NaN, nothing fitted)."""

    title: str
    subtitle: str
    measured: np.ndarray
    t_lower: np.ndarray
    t_estimate: np.ndarray
    group: np.ndarray  # int64 codes into group_names
    group_names: tuple[str, ...]
    errors: dict[str, float]
    not_calibrated: int  # points whose estimate is NaN: left out of the After panel
    left_out: int = 0  # rows without a measured time or a floor to draw

    @property
    def calibrated(self) -> np.ndarray:
        """The points with an estimate (bool per point)."""
        return np.isfinite(self.t_estimate)


def calibration_chart_data(
    results: pd.DataFrame,
    t_estimate: np.ndarray,
    labels: np.ndarray,
    errors: dict[str, float],
    title: str | None = None,
) -> CalibrationChartData:
    """A calibration chart's data from results with `measured_seconds`, their estimates
    (calibration.estimate) and colour labels (chart_labels), one of each per row, and the
    errors that the fit computed (its Calibration's ERRORS)."""
    measured = _floats(results, "measured_seconds")
    t_lower = _floats(results, "t_lower")
    t_estimate = np.asarray(t_estimate, dtype=float)
    with np.errstate(invalid="ignore"):
        keep = np.isfinite(measured) & (measured > 0) & np.isfinite(t_lower) & (t_lower > 0)
        estimated = np.isfinite(t_estimate) & (t_estimate > 0)
    measured, t_lower, t_estimate = measured[keep], t_lower[keep], t_estimate[keep]
    t_estimate = np.where(estimated[keep], t_estimate, np.nan)
    # a code per label, from its distinct values, not per row's strings
    group, names = _sorted_codes(np.asarray(labels, dtype=object)[keep], (*DTYPES, *KINDS), 28)
    said = {k: float(errors.get(k, np.nan)) for k in ERRORS}
    return CalibrationChartData(
        title=chart_text(_("Predicted against measured time") if title is None else title, 120),
        subtitle=_subtitle(len(measured), len(names), said),
        measured=measured,
        t_lower=t_lower,
        t_estimate=t_estimate,
        group=group.reshape(-1).astype(np.int64),
        group_names=tuple(names),
        errors=said,
        not_calibrated=int((~np.isfinite(t_estimate)).sum()),
        left_out=int((~keep).sum()),
    )


def chart_labels(results: pd.DataFrame, kinds: np.ndarray) -> np.ndarray:
    """Each row's colour: its compute dtype ('bf16'; '' unknown), a collective's op."""
    kinds = np.asarray(kinds, dtype=object)
    if "compute_dtype" not in results.columns:
        return kinds
    dtype = results["compute_dtype"].astype(object).fillna("").astype(str).to_numpy(dtype=object)
    return np.where(np.isin(kinds, KINDS[2:]) | (dtype == ""), kinds, dtype)


def _floats(results: pd.DataFrame, column: str) -> np.ndarray:
    if column not in results.columns:
        return np.full(len(results), np.nan)
    return pd.to_numeric(results[column], errors="coerce").to_numpy(dtype=float)


def _sorted_codes(values, order: tuple[str, ...] = (), limit: int = 20) -> tuple[np.ndarray, list]:
    """Codes of `values` into their distinct names (chart text, at most `limit` characters),
    sorted: those in `order` first, in its order, then the others by name."""
    codes, uniques = pd.factorize(values, use_na_sentinel=False)
    names = [chart_text(u, limit) for u in uniques]
    rank = {k: i for i, k in enumerate(order)}
    by = sorted(range(len(names)), key=lambda i: (rank.get(names[i], len(rank)), names[i]))
    remap = np.empty(len(names), dtype=np.int64)
    remap[by] = np.arange(len(names))
    return remap[codes], [names[i] for i in by]


def _subtitle(points: int, colours: int, errors: dict[str, float]) -> str:
    rows = rows_text(points, "measured row")
    if np.isnan(errors["heldout_median"]):
        return _("{rows}; no row calibrated", rows=rows)
    return _("{rows}; calibrating takes the median error max(t/m, m/t) − 1 from {before} to "
             "{after} held out (p90 {before_p90} to {after_p90})", rows=rows,
             before=fmt.percent(errors["floor_median"]),
             after=fmt.percent(errors["heldout_median"]),
             before_p90=fmt.percent(errors["floor_p90"]),
             after_p90=fmt.percent(errors["heldout_p90"]))  # fmt: skip


@in_chart_fonts
def calibration_figure(data: CalibrationChartData) -> Figure:
    """Predicted against measured time, log-log with the line predicted = measured: the
    roofline floor (before) and the calibrated estimate (after) side by side."""
    shown, colors = _colors(data)
    entries = 1 + len(shown) + (len(shown) < len(data.group_names))
    legend_in = 0.2 + ROW_INCHES * -(-entries // LEGEND_COLUMNS)
    height = HEAD + PANEL_HEAD + PANEL + BOTTOM + legend_in
    fig = new_figure(height)
    fig.set_size_inches(WIDTH, height)
    before, after = fig.subplots(1, 2)
    bottom = (BOTTOM + legend_in) / height
    fig.subplots_adjust(left=LEFT / WIDTH, right=(LEFT + 2 * PANEL + GAP) / WIDTH,
                        bottom=bottom, top=bottom + PANEL / height,
                        wspace=GAP / PANEL)  # fmt: skip
    low, high = _limits(data)
    done = data.calibrated
    size, alpha = _marker(len(data.measured))
    panels = (
        (before, data.t_lower, slice(None), _("Before: the roofline floor"),
         _("predicted: t_lower (roofline floor)"), _error_line(data, after=False)),
        (after, data.t_estimate, done, _("After: the calibrated estimate"),
         _("predicted: t_estimate (calibrated)"),
         _error_line(data, after=True)),
    )  # fmt: skip
    for ax, predicted, pick, heading, y_label, error in panels:
        _time_axes(ax, low, high)
        _points(ax, data.measured[pick], predicted[pick], data.group[pick], colors, size, alpha)
        ax.plot(ax.get_xlim(), ax.get_ylim(), color=ROOF_COLOR, lw=1.1, ls=(0, (5, 3)),
                label=_("predicted = measured"), zorder=4)  # fmt: skip
        ax.set_title(heading, fontsize=10, loc="left", pad=TITLE_PAD[current_lang() != "en"])
        ax.text(0, 1.02, error, transform=ax.transAxes, fontsize=9, color="#444",
                va="bottom")  # fmt: skip
        ax.set_xlabel(_("measured time"))
        ax.set_ylabel(y_label)
    fig.legend(handles=_handles(data, shown), loc="lower left",
               bbox_to_anchor=(LEFT / WIDTH - 0.01, 0.08 / height), ncols=LEGEND_COLUMNS,
               fontsize=LEGEND_FONT, frameon=False, handlelength=2.4,
               columnspacing=2.0)  # fmt: skip
    titles(fig, data.title, data.subtitle, height)
    return fig


def _colors(data: CalibrationChartData) -> tuple[np.ndarray, list[str]]:
    """The groups given a colour (the SHOWN_GROUPS with the most points, in name order) and
    each group's colour (grey for the others)."""
    rows = np.bincount(data.group, minlength=len(data.group_names))
    shown = np.sort(np.argsort(-rows, kind="stable")[:SHOWN_GROUPS])
    colors = [OTHER_COLOR] * len(data.group_names)
    for k, g in enumerate(shown):
        colors[g] = POINT_COLORS[k % len(POINT_COLORS)]
    return shown, colors


def _points(ax, x, y, group, colors: list[str], size: float, alpha: float) -> None:
    """The points, a marker line per colour (Agg stamps one marker image for all of a
    line's points: 100,000 points draw in 0.2 s, where a scatter took 0.8 s), the largest
    first, so a small group is drawn over a large one; rasterized in a PDF or SVG."""
    of_group, names = pd.factorize(np.array(colors, dtype=object))
    codes = of_group[group]
    rows = np.bincount(codes, minlength=len(names))
    order = [k for k in np.argsort(-rows, kind="stable") if rows[k]]
    for z, k in enumerate(order):
        at = codes == k
        ax.plot(x[at], y[at], ls="", marker="o", ms=size, mew=0, color=names[k],
                alpha=alpha, rasterized=True, zorder=3 + z / len(order))  # fmt: skip


def _marker(points: int) -> tuple[float, float]:
    """Marker diameter (points) and alpha: distinct dots for a few hundred points, a haze of
    small ones for 100,000, where density is what reads."""
    if points <= 300:
        return 4.5, 0.85
    scale = (300 / points) ** 0.25
    return max(4.5 * scale, 1.2), max(0.85 * scale, 0.3)


def _limits(data: CalibrationChartData) -> tuple[float, float]:
    """Both panels' one range, on both axes: every time drawn (a microsecond to a
    millisecond when there is none)."""
    values = np.concatenate([data.measured, data.t_lower, data.t_estimate[data.calibrated]])
    if not len(values):
        return 1e-6, 1e-3
    return float(values.min()), float(values.max())


def _time_axes(ax, low: float, high: float) -> None:
    """Log time axes from `low` to `high` on x and y alike (log_time_axis on y, its limits
    and ticks mirrored on x), square, a light grid below."""
    log_time_axis(ax, low, high, short_seconds)
    ax.set_xscale("log")
    ax.set_xlim(*ax.get_ylim())
    ax.set_box_aspect(1)
    ax.xaxis.set_major_locator(LogLocator(base=10, numticks=12))
    ax.xaxis.set_minor_locator(LogLocator(base=10, subs=(2.0, 5.0), numticks=12))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: short_seconds(v)))
    ax.xaxis.set_minor_formatter(ax.yaxis.get_minor_formatter())
    ax.tick_params(axis="x", which="minor", labelsize=8, labelcolor="#555")
    ax.grid(True, which="major", color="#e3e3e3", lw=0.6)
    ax.grid(True, which="minor", color="#f2f2f2", lw=0.4)
    ax.set_axisbelow(True)


def _error_line(data: CalibrationChartData, after: bool) -> str:
    """A panel's subtitle: its error's median and p90 ('median 34.0%, p90 120%'), both
    over the calibrated rows; the estimate's fitted and held out, and the rows left out."""
    e = data.errors
    if np.isnan(e["heldout_median"]):
        return _("no row calibrated")
    if not after:
        said = _("median {median}, p90 {p90}", median=fmt.percent(e["floor_median"]),
                 p90=fmt.percent(e["floor_p90"]))  # fmt: skip
        if data.not_calibrated:
            n = fmt.count(int(data.calibrated.sum()))
            said += " " + _("over the {n} calibrated rows", n=n)
        return said
    said = _("median {median}, p90 {p90} (held out {heldout}, {heldout_p90})",
             median=fmt.percent(e["median"]), p90=fmt.percent(e["p90"]),
             heldout=fmt.percent(e["heldout_median"]),
             heldout_p90=fmt.percent(e["heldout_p90"]))  # fmt: skip
    if data.not_calibrated:
        said += "; " + _("{rows} not calibrated", rows=rows_text(data.not_calibrated))
    return said


def _handles(data: CalibrationChartData, shown: np.ndarray) -> list:
    """Legend entries: the line, the coloured groups with their points, the rest counted."""
    rows = np.bincount(data.group, minlength=len(data.group_names))
    handles = [Line2D([], [], color=ROOF_COLOR, lw=1.1, ls=(0, (5, 3)),
                      label=_("predicted = measured"))]  # fmt: skip
    for k, g in enumerate(shown):
        label = f"{data.group_names[g]}: {rows_text(int(rows[g]))}"
        handles.append(Line2D([], [], ls="", marker="o", ms=6, mew=0, label=label,
                              color=POINT_COLORS[k % len(POINT_COLORS)]))  # fmt: skip
    rest = len(data.group_names) - len(shown)
    if rest:
        others = int(rows.sum() - rows[shown].sum())
        label = _("and {groups}: {rows}", groups=rows_text(rest, "more group"),
                  rows=rows_text(others))  # fmt: skip
        handles.append(Line2D([], [], ls="", marker="o", ms=6, mew=0, color=OTHER_COLOR,
                              label=label))  # fmt: skip
    return handles
