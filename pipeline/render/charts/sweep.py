"""Drawing a sweep chart: attainable FLOP/s against the swept dim, one line per series, the
compute ceiling dashed, each line's first compute-bound value marked (the book's Q3 figure)."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, NullFormatter

from pipeline.render.charts.data import SweepData
from pipeline.render.charts.style import (
    FIGSIZE,
    ROOF_COLOR,
    SERIES_COLORS,
    SERIES_STYLES,
    flops_axis,
    hollow,
    new_figure,
    titles,
)


def sweep_figure(data: SweepData) -> Figure:
    """Attainable FLOP/s against a swept dim, one line per series (the book's Q3 figure)."""
    lines = data.lines
    unfit = any(not ln.fits.all() for ln in lines)
    ncols = 1 if len(lines) + unfit == 1 else 2
    rows = -(-(len(lines) + unfit) // ncols)
    legend_in = 0.12 + 0.2 * rows  # the legend sits under the axes and never covers a line
    height = FIGSIZE[1] + legend_in
    fig = new_figure(height)
    ax = fig.subplots()
    fig.subplots_adjust(
        left=0.17, right=0.975, bottom=(0.62 + legend_in) / height, top=1 - 0.77 / height
    )
    if data.log_x:
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(
            FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 1 else f"{v:g}")
        )
        ax.xaxis.set_minor_formatter(NullFormatter())
    else:
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    peaks = [c.peak for c in data.ceilings]
    top = max(peaks + [float(np.nanmax(ln.y)) for ln in lines])
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
        reach = (
            f"compute-bound from {dim} = {crit:,.0f}"
            if crit is not None
            else "never compute-bound here"
        )
        ax.plot(
            ln.x,
            ln.y,
            color=color,
            ls=style,
            lw=2.0,
            label=f"{ln.label}: {reach}",
            zorder=4,
        )
        bad = ~ln.fits
        if bad.any():
            hollow(ax, ln.x[bad], ln.y[bad], color, 1.0, s=18, zorder=5)
        if crit is not None:
            ax.plot([crit, crit], [0, ln.critical_y], color=color, lw=0.9, ls=":", zorder=3)
            ax.plot([crit], [ln.critical_y], marker="o", ms=6, color=color, zorder=6)
    _critical_labels(fig, ax, lines, dim)
    if unfit:
        ax.scatter([], [], facecolors="none", edgecolors="#333", s=18, label="does not fit in HBM")
    ax.set_xlabel(data.x_label)
    ax.set_ylabel(data.y_label)
    fig.legend(
        loc="lower left",
        bbox_to_anchor=(0.02, 0.1 / height),
        ncols=ncols,
        fontsize=8.5,
        frameon=False,
        handlelength=2.5,
    )
    titles(fig, data.title, data.subtitle, height)
    return fig


def _critical_labels(fig, ax, lines, dim: str) -> None:
    """'B = 137' beside each line's first compute-bound point; equal values share a label,
    labels too close to the previous one step up."""
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
                f"{dim} = {crit:,.0f}",
                (crit, y),
                xytext=(0, 7 + 13 * step),
                textcoords="offset points",
                ha="center",
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
