"""Drawing a serving chart: a serve series' configurations as lines over B, tokens/s per chip
(or dollars per million tokens) against tokens/s per user, log-log; a point per B, filled when
it meets the targets, hollow when it misses one, a cross in it when it does not fit in HBM; the TPOT
target as a vertical line with the side meeting it shaded; the front of the meeting points
marked and its batches named; the legend under the axes, in ranking order."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

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
from pipeline.render.charts.serving_data import ServingData
from pipeline.render.charts.style import in_chart_fonts, titles

MEETS_FILL = "#E8F5E9"  # the side of the TPOT target that meets it
FRONT_COLOR = "#111111"
SHAPES = ("o", "s", "^", "D", "v", "P")  # a point's shape: its line style's (precision, chips)
# where a front point's batch goes, in points from it: right above, right below, left
LABEL_OFFSETS = ((6, 5, "left"), (6, -13, "left"), (-6, 5, "right"), (-6, -13, "right"))


@in_chart_fonts
def serving_figure(data: ServingData) -> Figure:
    """A serve series' configurations over B against tokens/s per user: a colour per chip, a
    line style and point shape per precision and chip count."""
    markers = _marker_handles(data)
    entries = len(data.lines) + len(markers) + (len(data.front_x) > 0) + (data.target is not None)
    ncols = 1 if entries <= 6 else 2
    fig, ax, height = figure_over_legend(-(-entries // ncols), data.more)
    xs, ys = joined([ln.x for ln in data.lines]), joined([ln.y for ln in data.lines])
    seen = np.isfinite(xs) & np.isfinite(ys) & (xs > 0) & (ys > 0)
    xs, ys = xs[seen], ys[seen]
    if data.target:
        xs = np.append(xs, data.target)
    _axes(ax, xs, ys, data.cost)
    handles = []
    width = fig.bbox.width * (0.96 / ncols) - 3.6 * LEGEND_FONT * fig.dpi / 72
    for k, ln in enumerate(data.lines):
        color, style = line_look(ln)
        shape = SHAPES[ln.style % len(SHAPES)]  # a configuration of one point reads by it
        above = 1 - k / max(len(data.lines), 1)  # the best ranked drawn over the others
        label = fit_text(fig, ln.label, f"  {ln.best}", width, LEGEND_FONT)
        (line,) = ax.plot(ln.x, ln.y, color=color, ls=style, lw=1.5, marker=shape, ms=5,
                          zorder=4 + above, label=label)  # fmt: skip
        handles.append(line)
        off = ~(ln.meets & ln.fits)  # a miss: hollow, a cross in it when it does not fit
        ax.scatter(ln.x[off], ln.y[off], s=26, marker=shape, facecolors="white",
                   edgecolors=color, linewidths=1.2, zorder=5 + above)  # fmt: skip
        ax.scatter(ln.x[~ln.fits], ln.y[~ln.fits], s=12, marker="x", color=color,
                   linewidths=1.0, zorder=5 + above)  # fmt: skip
    taken = []  # the boxes front labels keep clear of
    if data.target:
        taken.append(_target(ax, data))
        handles.append(Line2D([], [], color="#2E7D32", lw=1.4, ls=(0, (5, 3)),
                              label=chart_text(data.target_label, 80)))  # fmt: skip
    if len(data.front_x):
        _front(ax, data, taken)
        said = (_("cheapest front meeting the targets (batches named)") if data.cost
                else _("front meeting the targets: none beats it on both axes"))  # fmt: skip
        handles.append(Line2D([], [], color=FRONT_COLOR, lw=2.6, alpha=0.35, marker="o", ms=9,
                              mfc="none", mec=FRONT_COLOR, label=said))  # fmt: skip
    handles += markers
    ax.set_xlabel(data.x_label)
    ax.set_ylabel(data.y_label)
    title = (
        _("Configurations, cheapest first: their cheapest point meeting the targets")
        if data.cost
        else _("Configurations, best first: their most tokens/s per chip meeting the targets")
    )
    legend_below(fig, handles, title, data.more, height, ncols=ncols, columnspacing=1.5)
    titles(fig, chart_text(data.title, 120), data.subtitle, height)
    return fig


def _axes(ax, xs: np.ndarray, ys: np.ndarray, cost: bool) -> None:
    """Log-log axes around the points, ticks at 1-2-5 of each decade while they are a decade
    or two, at 1-2-3-5 under one, at every digit under half a decade."""
    ax.set_xscale("log")
    ax.set_yscale("log")
    if len(xs):
        ax.set_xlim(xs.min() / 1.3, xs.max() * 1.3)
    if len(ys):
        ax.set_ylim(ys.min() / 1.35, ys.max() * 1.35)
    shown = (lambda v, _: "$" + fmt.tick(v)) if cost else (lambda v, _: fmt.tick(v))
    for axis, value in ((ax.xaxis, lambda v, _: fmt.tick(v)), (ax.yaxis, shown)):
        axis.set_major_locator(LogLocator(base=10, numticks=12))
        low, high = ax.get_xlim() if axis is ax.xaxis else ax.get_ylim()
        decades = np.log10(high / low)
        subs = (
            np.arange(2.0, 10.0) if decades < 0.6 else (2.0, 3.0, 5.0) if decades < 1.2
            else (2.0, 5.0)
        )  # fmt: skip
        axis.set_minor_locator(LogLocator(base=10, subs=subs, numticks=12))
        axis.set_major_formatter(FuncFormatter(value))
        axis.set_minor_formatter(FuncFormatter(value) if decades < 2.2 else NullFormatter())
    ax.tick_params(which="minor", labelsize=8, labelcolor="#555")
    ax.grid(True, which="major", color="#e3e3e3", lw=0.6)
    ax.grid(True, which="minor", color="#f2f2f2", lw=0.4)
    ax.set_axisbelow(True)


def _target(ax, data: ServingData):
    """The TPOT target: a vertical line at the tokens/s per user it asks for, the side
    meeting it (faster for each user) shaded; the box of its label."""
    ax.axvspan(data.target, ax.get_xlim()[1], color=MEETS_FILL, zorder=0, lw=0)
    ax.axvline(data.target, color="#2E7D32", lw=1.4, ls=(0, (5, 3)), zorder=3)
    label = ax.annotate(
        chart_text(_("meets TPOT →"), 40),
        (data.target, 1.0),
        xycoords=("data", "axes fraction"),
        xytext=(5, -6),
        textcoords="offset points",
        ha="left",
        va="top",
        fontsize=8.5,
        fontweight="bold",
        color="#2E7D32",
        zorder=7,
    )
    return label.get_window_extent(ax.figure.canvas.get_renderer())


def _front(ax, data: ServingData, taken: list) -> None:
    """The front: a broad grey band through its points, each ringed and its batch named
    where it has room (clear of the `taken` boxes and of each other)."""
    ax.plot(data.front_x, data.front_y, color=FRONT_COLOR, lw=6, alpha=0.15, zorder=3,
            solid_capstyle="round")  # fmt: skip
    ax.scatter(data.front_x, data.front_y, s=90, facecolors="none", edgecolors=FRONT_COLOR,
               linewidths=1.1, zorder=8)  # fmt: skip
    renderer = ax.figure.canvas.get_renderer()
    placed = list(taken)
    for x, y, b in zip(data.front_x, data.front_y, data.front_B, strict=True):
        for dx, dy, ha in LABEL_OFFSETS:  # beside its ring, where no label is yet
            label = ax.annotate(f"B={fmt.count(b)}", (x, y), xytext=(dx, dy), ha=ha,
                                textcoords="offset points", fontsize=7.5, color="#222", zorder=9,
                                bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none",
                                          alpha=0.8))  # fmt: skip
            box = label.get_window_extent(renderer)
            if not any(box.overlaps(other) for other in placed):
                placed.append(box)
                break
            label.remove()  # a crowded front names the batches it has room for


def _marker_handles(data: ServingData) -> list:
    """Legend entries for the point shapes the chart shows."""
    fits = joined([ln.fits for ln in data.lines], bool)
    meets = joined([ln.meets for ln in data.lines], bool)
    shown = ((meets & fits).any(), (fits & ~meets).any(), (~fits).any())
    return point_handles(shown, (_("a batch B meeting the targets"),
                                 _("a batch B missing a target (TTFT or TPOT)"),
                                 _("a batch B that does not fit in HBM")), 5)  # fmt: skip
