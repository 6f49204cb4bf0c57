"""Drawing a model chart: a swept transformer step's tokens per second (left) and step time
(right) against B or S on a shared log2 axis, a line per chip, the points that do not fit in
HBM hollow and where the fitting stops marked across both panels (the largest batch that
fits along B, the largest swept S that fits along S)."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter

from pipeline.i18n import _
from pipeline.model.roofline import BOUNDS
from pipeline.render import format as fmt
from pipeline.render.charts.labels import bound_text
from pipeline.render.charts.model_sweep_data import ModelSweepData
from pipeline.render.charts.style import (
    BOUND_MARKERS,
    SERIES_COLORS,
    in_chart_fonts,
    log_time_axis,
    marker_handles,
    new_figure,
    short_seconds,
    titles,
)

WIDTH = 11.0  # inches: two panels side by side
PANEL_HEIGHT = 4.4  # inches of the panels, under the title and over the legend
LEGEND_FONT = 8.5
ROW_INCHES = 0.21  # a legend row's height at LEGEND_FONT
LIMIT_STYLE = (0, (4, 3))
WRITTEN_LINES = 3  # at most this many lines get their last fitting point written out


@in_chart_fonts
def model_sweep_figure(data: ModelSweepData) -> Figure:
    """Tokens/s and step time against the swept dim, side by side, a line per chip."""
    lines = data.lines
    bounds = [b for b in BOUNDS if any(b in ln.bound for ln in lines)]
    unfit = any(not ln.fits.all() for ln in lines)
    entries = len(lines) + len(bounds) + unfit
    ncols = min(entries, 3)
    legend_in = 0.25 + ROW_INCHES * -(-entries // ncols)
    height = 0.85 + PANEL_HEIGHT + legend_in
    fig = new_figure(height)
    fig.set_size_inches(WIDTH, height)
    left, right = fig.subplots(1, 2, sharex=True)
    fig.subplots_adjust(left=0.09, right=0.985, wspace=0.22,
                        bottom=(0.55 + legend_in) / height, top=1 - 0.85 / height)  # fmt: skip
    _x_axis(left, data)
    _rate_axis(left, lines)
    _time_axis(right, lines)
    handles = []
    for k, ln in enumerate(lines):
        color = SERIES_COLORS[k % len(SERIES_COLORS)]
        for ax, y in ((left, ln.tokens_per_second), (right, ln.t_lower)):
            ax.plot(ln.x, y, color=color, lw=1.8, zorder=3)
            _points(ax, ln, y, color)
            if np.isfinite(ln.limit):
                ax.axvline(ln.limit, color=color, lw=1.2, ls=LIMIT_STYLE, zorder=2)
        if np.isfinite(ln.limit) and len(lines) == 1:
            _limit_text(left, ln.limit, ln.limit_label)
        if ln.last_fit >= 0 and len(lines) <= WRITTEN_LINES:
            _fit_text(left, right, ln, data.dim, color)
        label = f"{ln.label}: {ln.limit_label}" if len(lines) > 1 else ln.label
        handles.append(Line2D([], [], color=color, lw=1.8, label=label))
    if any(np.isfinite(ln.limit) for ln in lines):
        handles.append(Line2D([], [], color=SERIES_COLORS[0] if len(lines) == 1 else "#555",
                              lw=1.2, ls=LIMIT_STYLE, label=_limit_legend(data.dim)))  # fmt: skip
    handles += marker_handles(
        bounds,
        unfit,
        lambda b: _("{bound} step", bound=bound_text(b)),
        _("does not fit in HBM (weights + KV cache)"),
    )
    fig.legend(handles=handles, loc="lower left", bbox_to_anchor=(0.06, 0.1 / height),
               ncols=ncols, fontsize=LEGEND_FONT, frameon=False, handlelength=2.6,
               columnspacing=2.0)  # fmt: skip
    titles(fig, data.title, data.subtitle, height)
    return fig


def _points(ax, ln, y: np.ndarray, color: str) -> None:
    """The line's points, a marker per bound: filled where they fit, hollow where not."""
    bound = np.array(ln.bound, dtype=object)
    for b in dict.fromkeys(ln.bound):
        for filled in (True, False):
            pick = (bound == b) & (ln.fits == filled)
            if pick.any():
                ax.scatter(ln.x[pick], y[pick], marker=BOUND_MARKERS.get(b, "o"), s=34,
                           facecolors=color if filled else "white", edgecolors=color,
                           linewidths=1.0 if filled else 1.4, zorder=4)  # fmt: skip


def _fit_text(left, right, ln, dim: str, color: str) -> None:
    """The point furthest along the sweep that fits (at most B, the most tokens/s), written
    beside it on both panels ('B = 32: 2,155 tokens/s' on the left, its step time on the
    right), on a side of the point its line leaves free."""
    k = ln.last_fit
    lo, hi = np.log2(left.get_xlim())
    at = (np.log2(ln.x[k]) - lo) / (hi - lo)  # 0 to 1 across the panel
    what = f"B = {fmt.count(ln.x[k])}" if dim == "B" else f"S = {_tick(ln.x[k])}"
    rate = _("{rate} tokens/s", rate=fmt.count(ln.tokens_per_second[k]))
    for ax, y, text in (
        (left, ln.tokens_per_second, rate),
        (right, ln.t_lower, short_seconds(ln.t_lower[k])),
    ):
        rising = y[k] >= y[k - 1] if k else y[min(k + 1, len(y) - 1)] >= y[k]
        # a rising line leaves above-left and below-right free, a falling one the others;
        # above first, unless the text would leave the panel
        to_left = rising != (at < 0.35 if rising else at > 0.65)
        up = rising == to_left
        ax.annotate(
            f"{what}: {text}",
            (ln.x[k], y[k]),
            textcoords="offset points",
            xytext=(-7 if to_left else 7, 7 if up else -9),
            ha="right" if to_left else "left",
            va="bottom" if up else "top",
            fontsize=8.5,
            color=color,
            fontweight="bold",
            zorder=6,
            bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none", alpha=0.8),
        )


def _limit_legend(dim: str) -> str:
    return _("largest batch that fits in HBM") if dim == "B" else _("largest swept S that fits")


def _limit_text(ax, x: float, text: str) -> None:
    """The limit's value beside its line, at the top of the panel (inside it when the line
    sits on the right half, so the text never leaves the axes)."""
    lo, hi = np.log2(ax.get_xlim())
    right = (np.log2(x) - lo) / (hi - lo) > 0.6
    ax.annotate(text, (x, 1.0), xycoords=("data", "axes fraction"),
                xytext=(-5 if right else 5, -6), textcoords="offset points",
                ha="right" if right else "left", va="top", fontsize=8.5, color="#333",
                bbox=dict(boxstyle="round,pad=0.2", fc="white", ec="none", alpha=0.85),
                zorder=6)  # fmt: skip


def _x_axis(ax, data: ModelSweepData) -> None:
    """The shared swept dim, log2: every power of two labelled while they fit."""
    xs = np.concatenate([ln.x for ln in data.lines])
    xs = xs[np.isfinite(xs) & (xs > 0)]
    ax.set_xscale("log", base=2)
    ax.set_xlim(xs.min() / 1.3, xs.max() * 1.3)
    for a in ax.figure.axes:
        a.xaxis.set_major_locator(LogLocator(base=2, numticks=11))
        a.xaxis.set_major_formatter(FuncFormatter(lambda v, _: _tick(v)))
        a.xaxis.set_minor_formatter(NullFormatter())
        a.set_xlabel(
            _("batch size B (sequences)") if data.dim == "B" else _("context S (positions)")
        )
        a.grid(True, which="major", color="#e3e3e3", lw=0.6)
        a.set_axisbelow(True)


def _tick(value: float) -> str:
    """A power of two: 512, 8k, 128k (k = 1,024, as context lengths are said)."""
    if value >= 1024 and value % 1024 == 0:
        return f"{value / 1024:,.0f}k"
    return fmt.count(value) if value >= 1 else fmt.tick(value)


def _rate_axis(ax, lines) -> None:
    """Tokens per second from zero, linear: where it levels off reads at a glance."""
    top = max(float(np.nanmax(ln.tokens_per_second)) for ln in lines)
    ax.set_ylim(0, top * 1.12 if top > 0 else 1.0)
    ax.yaxis.set_major_locator(MaxNLocator(nbins=6, steps=[1, 2, 2.5, 5, 10]))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: fmt.count(v)))
    ax.set_ylabel(_("tokens per second"))
    ax.set_title(_("Throughput: tokens per second"), fontsize=10, loc="left")


def _time_axis(ax, lines) -> None:
    """Step time (t_lower), log: `3.4 ms`, labelled at 2 and 5 too when it spans little."""
    ys = np.concatenate([ln.t_lower for ln in lines])
    ys = ys[np.isfinite(ys) & (ys > 0)]
    log_time_axis(ax, ys.min(), ys.max(), short_seconds)
    ax.set_title(_("Step time (log scale)"), fontsize=10, loc="left")
    ax.grid(True, which="minor", axis="y", color="#f2f2f2", lw=0.4)
