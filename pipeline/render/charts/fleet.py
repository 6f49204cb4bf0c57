"""Drawing a fleet chart: a fleet series' points (chip x precision x chip count) as lines of
time against its swept dim, log-log, the legend in ranking order (fastest at the critical
batch first), the ranking's chosen points marked by their bound and the critical batch
point guided; a series of its fleet axes alone as bars of its ranking, fastest on top."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from pipeline.i18n import _
from pipeline.model.roofline import BOUNDS
from pipeline.render import format as fmt
from pipeline.render.charts.fleet_data import FleetData
from pipeline.render.charts.labels import bound_text, chart_text, fit_text
from pipeline.render.charts.style import (
    BOUND_COLORS,
    BOUND_MARKERS,
    DPI,
    FIGSIZE,
    SERIES_COLORS,
    in_chart_fonts,
    log_time_axis,
    marker_handles,
    new_figure,
    titles,
)

# Okabe-Ito first, then Paul Tol's muted colours: distinct for a dozen chips
FLEET_COLORS = (*SERIES_COLORS, "#882255", "#44AA99", "#999933", "#332288", "#AA4499", "#661100")
FLEET_STYLES = ("-", "--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)))
LEGEND_FONT = 8.0
ROW_INCHES = 0.19  # a legend row's height at LEGEND_FONT
SUBTITLE_FONT = 9.0
SUBTITLE_LINE = 0.18  # inches a second subtitle line takes
MORE_INCHES = 0.24  # the line under the legend saying the points left out


@in_chart_fonts
def fleet_figure(data: FleetData) -> Figure:
    """A fleet series' points: lines of time along its sweep, or bars of its ranking."""
    return _lines(data) if data.lines else _bars(data)


def line_look(point) -> tuple[str, object]:
    """A point's colour and line style: colours first, a new style when they run out."""
    n = len(FLEET_COLORS)
    k = point.color + n * point.style  # decode_fp4: a colour per chip, a style per dtype
    return FLEET_COLORS[k % n], FLEET_STYLES[(k // n) % len(FLEET_STYLES)]


def _lines(data: FleetData) -> Figure:
    points = data.points
    bounds = [b for b in BOUNDS if any(b in ln.mark_bound for ln in data.lines)]
    unfit = any(not ln.mark_fits.all() for ln in data.lines)
    entries = len(data.lines) + len(bounds) + unfit
    ncols = 1 if entries <= 6 else 2
    rows = -(-entries // ncols)
    more_in = MORE_INCHES if data.more else 0.0
    legend_in = 0.3 + ROW_INCHES * rows + more_in  # under the axes: it never covers a line
    fig = new_figure()
    subtitle = _wrapped(fig, data.subtitle)
    head_in = 0.8 + SUBTITLE_LINE * (len(subtitle) - 1)
    height = FIGSIZE[1] + legend_in + head_in - 0.8
    fig.set_size_inches(FIGSIZE[0], height)
    ax = fig.subplots()
    fig.subplots_adjust(
        left=0.13, right=0.97, bottom=(0.62 + legend_in) / height, top=1 - head_in / height
    )
    xs = np.concatenate([ln.x for ln in data.lines])
    ys = np.concatenate([ln.y for ln in data.lines])
    xs, ys = xs[xs > 0], ys[np.isfinite(ys) & (ys > 0)]
    ax.set_xscale("log", base=10 if data.dim == "bytes" else 2)
    if data.dim != "bytes":  # every power of two labelled while they fit: 1 to 4,096
        ax.xaxis.set_major_locator(LogLocator(base=2, numticks=14))
    ax.set_xlim(xs.min() / 1.25, xs.max() * 1.25)
    value = fmt.size if data.dim == "bytes" else fmt.count
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: value(v) if v >= 1 else fmt.tick(v)))
    ax.xaxis.set_minor_formatter(NullFormatter())
    log_time_axis(ax, ys.min(), ys.max())
    ax.grid(True, which="major", color="#e3e3e3", lw=0.6)
    ax.grid(True, which="minor", axis="y", color="#f2f2f2", lw=0.4)
    ax.set_axisbelow(True)
    width = fig.bbox.width * (0.96 / ncols) - 3.6 * LEGEND_FONT * fig.dpi / 72
    handles = []
    for k, ln in enumerate(data.lines):  # in ranking order: the legend's order
        p = points[ln.point]
        color, style = line_look(p)
        head = f"{p.rank}. {p.label}"
        tail = f"  {fmt.seconds(p.t_lower)} ({fmt.ratio(p.ratio)})"
        above = 1 - k / len(data.lines)  # the fastest drawn over the lines it ties with
        (line,) = ax.plot(ln.x, ln.y, color=color, ls=style, lw=1.8, zorder=4 + above,
                          label=fit_text(fig, head, tail, width, LEGEND_FONT))  # fmt: skip
        handles.append(line)
        for bound in set(ln.mark_bound):
            on = np.array([b == bound for b in ln.mark_bound])
            for filled in (True, False):
                pick = on & (ln.mark_fits == filled)
                if pick.any():
                    ax.scatter(ln.mark_x[pick], ln.mark_y[pick], marker=BOUND_MARKERS[bound],
                               s=30, facecolors=color if filled else "white",
                               edgecolors=color if not filled else "white",
                               linewidths=1.0 if filled else 1.3, zorder=5 + above)  # fmt: skip
    if data.guide is not None:
        ax.axvline(data.guide, color="#555", lw=1.0, ls=(0, (4, 3)), zorder=3)
        ax.annotate(
            chart_text(data.guide_label, 60),
            (data.guide, 1.0),
            xycoords=("data", "axes fraction"),
            xytext=(-4, -5),
            textcoords="offset points",
            ha="right",
            va="top",
            fontsize=8.5,
            fontweight="bold",
            color="#333",
            bbox=dict(boxstyle="round,pad=0.2", fc="white", ec="none", alpha=0.85),
            zorder=7,
        )
    handles += marker_handles(
        bounds,
        unfit,
        lambda b: _("{bound} at a ranked point", bound=bound_text(b)),
        _("does not fit in HBM at a ranked point"),  # hollow: at that point, not the line
    )
    ax.set_xlabel(data.x_label)
    ax.set_ylabel(data.y_label)
    fig.legend(
        handles=handles,
        loc="lower left",
        bbox_to_anchor=(0.02, (0.08 + more_in) / height),
        ncols=ncols,
        fontsize=LEGEND_FONT,
        frameon=False,
        title=_("Ranked at the critical batch, fastest first: time (× the fastest)")
        if data.guide is not None
        else _("Ranked fastest first: time (× the fastest)"),
        title_fontsize=8.5,
        alignment="left",
        handlelength=2.6,
        columnspacing=1.5,
    )
    _more(fig, data.more, 0.1 / height)
    _heading(fig, data.title, subtitle, height)
    return fig


def _more(fig: Figure, text: str, y: float) -> None:
    """The line saying how many fleet points the chart leaves out (FLEET_LINES), if any."""
    if text:
        fig.text(0.02, y, chart_text(text, 160), fontsize=LEGEND_FONT, color="#444",
                 va="bottom", fontstyle="italic")  # fmt: skip


def _wrapped(fig: Figure, text: str) -> list[str]:
    """The subtitle (the ranking's sentence) on one line, or two split at its ';', each cut
    to the figure's width only when even that is too wide."""
    width = fig.bbox.width * 0.96
    whole = chart_text(text, 400)
    if fit_text(fig, whole, "", width, SUBTITLE_FONT) == whole:
        return [whole]
    first, sep, rest = whole.partition("; ")
    parts = [first + sep.strip(), rest] if sep else [whole]
    return [fit_text(fig, part, "", width, SUBTITLE_FONT) for part in parts]


def _heading(fig: Figure, title: str, subtitle: list[str], height: float) -> None:
    """The title, and under it the subtitle's lines."""
    titles(fig, title, "", height)
    for i, line in enumerate(subtitle):
        fig.text(0.02, 1 - (0.46 + SUBTITLE_LINE * i) / height, line, fontsize=SUBTITLE_FONT,
                 va="top", color="#444")  # fmt: skip


def _bars(data: FleetData) -> Figure:
    points = data.points
    n = len(points)
    fig = new_figure()
    subtitle = _wrapped(fig, data.subtitle)
    extra = SUBTITLE_LINE * (len(subtitle) - 1)
    more_in = MORE_INCHES if data.more else 0.0
    height = 2.2 + extra + more_in + 0.34 * n  # n: FLEET_LINES at most
    fig.set_size_inches(FIGSIZE[0], height)
    ax = fig.subplots()
    fig.subplots_adjust(left=0.2, right=0.95, bottom=(0.62 + more_in) / height,
                        top=1 - (1.15 + extra) / height)  # fmt: skip
    pos = np.arange(n)[::-1]  # fastest on top
    t = np.array([p.t_lower for p in points])
    colors = [BOUND_COLORS.get(p.bound, "#888") for p in points]
    bars = ax.barh(pos, t, color=colors, height=0.66, zorder=3)
    for bar, p in zip(bars, points, strict=True):
        if not p.fits:
            bar.set_hatch("////")
            bar.set_edgecolor("white")
    top = float(t.max()) if n else 1.0
    for y, p in zip(pos, points, strict=True):
        ax.text(p.t_lower + top * 0.01, y, f"{fmt.ratio(p.ratio)}  {fmt.seconds(p.t_lower)}",
                va="center", fontsize=8, color="#222")  # fmt: skip
    ax.set_yticks(pos, labels=[f"{p.rank}. {p.label}" for p in points], fontsize=8.5)
    ax.set_ylim(-0.6, n - 0.4)
    ax.set_xlim(0, top * 1.2)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: fmt.seconds(v) if v > 0 else "0"))
    renderer = fig.canvas.get_renderer()
    widest = max(tk.get_window_extent(renderer).width for tk in ax.get_yticklabels())
    left = min((widest + 40) / (FIGSIZE[0] * DPI), 0.45)
    fig.subplots_adjust(left=left)
    ax.set_xlabel(data.x_label)
    ax.grid(True, axis="x", color="#e3e3e3", lw=0.6)
    ax.set_axisbelow(True)
    used = [b for b in BOUNDS if any(p.bound == b for p in points)]
    handles = [Patch(color=BOUND_COLORS[b], label=bound_text(b)) for b in used]
    if any(not p.fits for p in points):
        handles.append(Patch(fc="#999", ec="white", hatch="////", label=_("does not fit in HBM")))
    fig.legend(
        handles=handles,
        loc="upper left",
        bbox_to_anchor=(left, 1 - (0.78 + extra) / height),
        ncols=4,
        fontsize=8.5,
        frameon=False,
        borderaxespad=0,
        handlelength=1.6,
    )
    _more(fig, data.more, 0.08 / height)
    _heading(fig, data.title, subtitle, height)
    return fig
