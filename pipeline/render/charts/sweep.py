"""Drawing a sweep chart: attainable FLOP/s against the swept dim, one line per series, the
compute ceiling dashed, where each line turns compute-bound marked (the book's Q3 figure);
or a collective's time against its bytes, log-log, each line's latency knee marked."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, NullFormatter

from pipeline.i18n import _
from pipeline.render import format as fmt
from pipeline.render.charts.data import SweepData, SweepLine
from pipeline.render.charts.labels import fit_text
from pipeline.render.charts.style import (
    FIGSIZE,
    ROOF_COLOR,
    SERIES_COLORS,
    SERIES_STYLES,
    flops_axis,
    hollow,
    in_chart_fonts,
    new_figure,
    titles,
)

LEGEND_FONT = 8.5
LEGEND_MARGIN = 0.02  # of the figure's width, left and right of the legend
# the legend's spacing in font sizes (matplotlib's defaults), given so the widths below hold
LEGEND_SPACING = {"borderaxespad": 0.5, "borderpad": 0.4, "columnspacing": 2.0,
                  "handlelength": 2.5, "handletextpad": 0.8}  # fmt: skip


@in_chart_fonts
def sweep_figure(data: SweepData) -> Figure:
    """Attainable FLOP/s against a swept dim, one line per series (the book's Q3 figure)."""
    lines = data.lines
    unfit = any(not ln.fits.all() for ln in lines)
    time = data.measure == "time"
    fig = new_figure()
    ncols = 1 if len(lines) + unfit == 1 or time else 2  # a knee's legend text is long
    legend = _legend_texts(fig, lines, data.dim, time, ncols)
    if ncols == 2 and legend != _legend_texts(fig, lines, data.dim, time, None):
        ncols = 1  # a label too long for half the width gets the whole width before a cut
        legend = _legend_texts(fig, lines, data.dim, time, ncols)
    rows = -(-(len(lines) + unfit) // ncols)
    legend_in = 0.12 + 0.2 * rows  # the legend sits under the axes and never covers a line
    height = FIGSIZE[1] + legend_in
    fig.set_size_inches(FIGSIZE[0], height)
    ax = fig.subplots()
    fig.subplots_adjust(
        left=0.17, right=0.975, bottom=(0.62 + legend_in) / height, top=1 - 0.77 / height
    )
    value = fmt.size if time else fmt.count  # how a swept value is written
    if data.log_x:
        ax.set_xscale("log", base=10 if time else 2)
        ax.xaxis.set_major_formatter(
            FuncFormatter(lambda v, _: value(v) if v >= 1 else fmt.tick(v))
        )
        ax.xaxis.set_minor_formatter(NullFormatter())
    else:
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: value(v)))
    peaks = [c.peak for c in data.ceilings]
    top = max(peaks + [float(np.nanmax(ln.y)) for ln in lines])
    if time:
        low = min(float(np.nanmin(ln.y)) for ln in lines)
        ax.set_yscale("log")
        ax.set_ylim(low / 2.5, top * 2.5)
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: fmt.seconds(v)))
        ax.yaxis.set_minor_formatter(NullFormatter())
    else:
        ax.set_ylim(0, top * 1.17)
        flops_axis(ax, "y")
    ax.grid(True, color="#e3e3e3", lw=0.6)
    ax.set_axisbelow(True)
    xs = np.concatenate([ln.x for ln in lines])
    if data.log_x:
        ax.set_xlim(xs.min() / 1.2, xs.max() * 1.2)
    else:
        span = xs.max() - xs.min() or 1.0
        ax.set_xlim(max(xs.min() - 0.02 * span, 0), xs.max() + 0.02 * span)
    for c in data.ceilings:
        ax.axhline(c.peak, color=ROOF_COLOR, lw=1.2, ls="--", zorder=2)
        ax.annotate(
            c.label,
            (1.0, c.peak),
            xycoords=("axes fraction", "data"),
            xytext=(-6, -4),
            textcoords="offset points",
            ha="right",
            va="top",
            fontsize=8.5,
            color=ROOF_COLOR,
        )
    dim = data.dim
    for i, ln in enumerate(lines):
        color = SERIES_COLORS[i % len(SERIES_COLORS)]
        style = SERIES_STYLES[(i // len(SERIES_COLORS)) % len(SERIES_STYLES)]
        crit = ln.critical
        x, y = ln.x, ln.y
        if time and crit is not None:  # the model's time is max(floor, linear): its corner
            at = int(np.searchsorted(x, crit))
            x, y = np.insert(x, at, crit), np.insert(y, at, ln.critical_y)
        ax.plot(
            x,
            y,
            color=color,
            ls=style,
            lw=2.0,
            label=legend[i],
            zorder=4,
        )
        bad = ~ln.fits
        if bad.any():
            hollow(ax, ln.x[bad], ln.y[bad], color, 1.0, s=18, zorder=5)
        if crit is not None:
            bottom = ax.get_ylim()[0]
            ax.plot([crit, crit], [bottom, ln.critical_y], color=color, lw=0.9, ls=":", zorder=3)
            ax.plot([crit], [ln.critical_y], marker="o", ms=6, color=color, zorder=6)
    _critical_labels(fig, ax, lines, dim, value, time)
    if unfit:
        ax.scatter(
            [], [], facecolors="none", edgecolors="#333", s=18, label=_("does not fit in HBM")
        )
    ax.set_xlabel(data.x_label)
    ax.set_ylabel(data.y_label)
    fig.legend(
        loc="lower left",
        bbox_to_anchor=(LEGEND_MARGIN, 0.1 / height),
        ncols=ncols,
        fontsize=LEGEND_FONT,
        frameon=False,
        **LEGEND_SPACING,
    )
    titles(fig, data.title, data.subtitle, height)
    return fig


def _legend_texts(
    fig: Figure, lines: tuple[SweepLine, ...], dim: str, time: bool, ncols: int | None
) -> list[str]:
    """Each line's legend entry, 'series (other dims): where it turns compute-bound', its
    series name cut (an ellipsis) to fit a column of a legend in `ncols` columns across the
    figure; `ncols` None: uncut."""
    em = LEGEND_FONT * fig.dpi / 72  # pixels per font size
    sp = LEGEND_SPACING
    span = fig.bbox.width * (1 - 2 * LEGEND_MARGIN)
    span -= 2 * (sp["borderaxespad"] + sp["borderpad"]) * em
    out = []
    for ln in lines:
        if ln.reach or time:
            reach = ln.reach
        elif ln.critical is not None:
            reach = _("compute-bound from {dim} = {value}", dim=dim, value=fmt.count(ln.critical))
        else:
            reach = _("never compute-bound here")
        detail = f" ({ln.detail})" if ln.detail else ""
        detail = detail if ln.label.endswith(detail) else ""
        head = ln.label[: len(ln.label) - len(detail)]
        tail = detail + (f": {reach}" if reach else "")
        if ncols is None:
            out.append(head + tail)
            continue
        width = (span - (ncols - 1) * sp["columnspacing"] * em) / ncols
        width -= (sp["handlelength"] + sp["handletextpad"]) * em
        out.append(fit_text(fig, head, tail, width, LEGEND_FONT))
    return out


def _critical_labels(fig, ax, lines, dim: str, value, time: bool) -> None:
    """'B = 137' beside each line's turn to compute-bound (a collective: its knee);
    equal values share a label, labels too close to the previous one step up."""
    points: dict[float, tuple[float, str]] = {}
    for i, ln in enumerate(lines):
        if ln.critical is not None and ln.critical not in points:
            color = SERIES_COLORS[i % len(SERIES_COLORS)]
            points[ln.critical] = (ln.critical_y, color)
    renderer = fig.canvas.get_renderer()
    placed: list = []
    for crit, (y, color) in sorted(points.items()):
        shared = sum(ln.critical == crit for ln in lines) > 1
        for step in range(len(points) + 1):
            ann = ax.annotate(
                _("knee {value}", value=value(crit)) if time else f"{dim} = {value(crit)}",
                (crit, y),
                xytext=(0, 7 + 13 * step),
                textcoords="offset points",
                ha="right" if time else "center",  # a knee: left of the rising line
                va="bottom",
                fontsize=8.5,
                fontweight="bold",
                color="#222" if shared else color,
                zorder=7,
            )
            box = ann.get_window_extent(renderer).padded(2)
            if step == len(points) or not any(box.overlaps(b) for b in placed):
                break
            ann.remove()
        placed.append(box)
