"""Drawing a training chart: a train series' step time against the chip count (or the tokens a
step), a line per configuration, log-log; a point filled where the step has the compute-bound
batch, hollow where it is short of it (its communication shows), a cross in it where it does
not fit in HBM; each line's compute-bound threshold a dotted vertical line in its colour, its
value written at the top; the legend under the axes, the fewest days first."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from pipeline.i18n import _
from pipeline.render import format as fmt
from pipeline.render.charts.fleet import LEGEND_FONT, line_look
from pipeline.render.charts.labels import chart_text, fit_text
from pipeline.render.charts.legend_below import (
    figure_over_legend,
    joined,
    legend_below,
    point_handles,
)
from pipeline.render.charts.style import in_chart_fonts, log_time_axis, short_seconds, titles
from pipeline.render.charts.training_data import TrainingData

REACH = 4.0  # how far past the points (a factor) the x axis stretches to show a threshold
THRESHOLD_STYLE = (0, (1.5, 2.0))


@in_chart_fonts
def training_figure(data: TrainingData) -> Figure:
    """A train series' step time over chips or tokens a step: a colour per chip, a line
    style per the rest of a configuration."""
    markers = _marker_handles(data)
    fig, ax, height = figure_over_legend(len(data.lines) + len(markers) + 1, data.more)
    xs, ys = joined([ln.x for ln in data.lines]), joined([ln.y for ln in data.lines])
    xs, ys = xs[np.isfinite(xs) & (xs > 0)], ys[np.isfinite(ys) & (ys > 0)]
    low, high = (xs.min(), xs.max()) if len(xs) else (1.0, 2.0)
    shown = [ln.threshold for ln in data.lines
             if ln.threshold and low / REACH <= ln.threshold <= high * REACH]  # fmt: skip
    _x_axis(ax, xs, shown, data.axis)
    if len(ys):
        log_time_axis(ax, ys.min(), ys.max(), seconds=short_seconds)
    width = fig.bbox.width * 0.94 - 3.6 * LEGEND_FONT * fig.dpi / 72
    handles = []
    for k, ln in enumerate(data.lines):
        color, style = line_look(ln)
        above = 1 - k / max(len(data.lines), 1)  # the best ranked drawn over the others
        tail = f"  {ln.best}" + _threshold_words(ln.threshold, data.axis)
        (line,) = ax.plot(ln.x, ln.y, color=color, ls=style, lw=1.6, marker="o", ms=5.5,
                          zorder=4 + above,
                          label=fit_text(fig, ln.label, tail, width, LEGEND_FONT))  # fmt: skip
        handles.append(line)
        off = ~ln.compute_bound | ~ln.fits
        ax.scatter(ln.x[off], ln.y[off], s=30, marker="o", facecolors="white",
                   edgecolors=color, linewidths=1.3, zorder=5 + above)  # fmt: skip
        ax.scatter(ln.x[~ln.fits], ln.y[~ln.fits], s=14, marker="x", color=color,
                   linewidths=1.1, zorder=6 + above)  # fmt: skip
        if ln.threshold in shown:
            ax.axvline(ln.threshold, color=color, ls=THRESHOLD_STYLE, lw=1.3, zorder=3)
            ax.annotate(_at(ln.threshold, data.axis), (ln.threshold, 1.0),
                        xycoords=("data", "axes fraction"), xytext=(3, -4 - 11 * k),
                        textcoords="offset points", ha="left", va="top", fontsize=7.5,
                        color=color, zorder=7)  # fmt: skip
    handles.append(Line2D([], [], color="#555", ls=THRESHOLD_STYLE, lw=1.3,
                          label=_threshold_legend(data.axis)))  # fmt: skip
    handles += markers
    ax.set_xlabel(data.x_label)
    ax.set_ylabel(data.y_label)
    ax.grid(True, which="major", color="#e3e3e3", lw=0.6)
    ax.set_axisbelow(True)
    title = _("Configurations, fewest days first: their best point")
    legend_below(fig, handles, title, data.more, height)
    titles(fig, chart_text(data.title, 120), data.subtitle, height)
    return fig


def _x_axis(ax, xs: np.ndarray, thresholds: list[float], axis: str) -> None:
    """A log x axis over the points and the thresholds shown, ticks at the points' values."""
    ax.set_xscale("log")
    every = np.concatenate([xs, np.asarray(thresholds, dtype=float)])
    if len(every):
        ax.set_xlim(every.min() / 1.4, every.max() * 1.4)
    ticks = np.unique(xs)
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: _at(v, axis)))


def _at(value: float, axis: str) -> str:
    """A chip count ('4,096') or tokens a step ('4.00M')."""
    return fmt.count(value) if axis == "chips" else fmt.parameters(value)


def _threshold_words(threshold: float | None, axis: str) -> str:
    """'; compute-bound up to 3,602 chips' (or 'from 4.50M tokens a step'); '' without."""
    if threshold is None:
        return ""
    if axis == "chips":
        return "; " + _("compute-bound up to {n} chips", n=fmt.count(threshold))
    return "; " + _("compute-bound from {n} tokens a step", n=fmt.parameters(threshold))


def _threshold_legend(axis: str) -> str:
    if axis == "chips":
        return _("threshold: tokens a chip = the compute-bound batch (fewer chips: compute-bound)")
    return _("threshold: tokens a chip = the compute-bound batch (more tokens: compute-bound)")


def _marker_handles(data: TrainingData) -> list:
    """Legend entries for the point shapes the chart shows."""
    bound = joined([ln.compute_bound for ln in data.lines], bool)
    fits = joined([ln.fits for ln in data.lines], bool)
    shown = ((bound & fits).any(), (~bound & fits).any(), (~fits).any())
    return point_handles(shown, (_("a step with the compute-bound batch"),
                                 _("a step short of it: its communication shows"),
                                 _("a step that does not fit in HBM")), 5.5)  # fmt: skip
