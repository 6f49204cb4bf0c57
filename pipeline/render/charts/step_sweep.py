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
from pipeline.render.charts.step_sweep_data import ModelSweepData
from pipeline.render.charts.style import (
    BOUND_MARKERS,
    SERIES_COLORS,
    axis_points,
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
LEGEND_LEFT = 0.06  # of the figure's width: the legend's left edge
LIMIT_STYLE = (0, (4, 3))
WRITTEN_LINES = 3  # at most this many lines get their last fitting point written out
CALLOUT_FONT = 8.5


@in_chart_fonts
def model_sweep_figure(data: ModelSweepData) -> Figure:
    """Tokens/s and step time against the swept dim, side by side, a line per chip."""
    lines = data.lines
    bounds = [b for b in BOUNDS if any(b in ln.bound for ln in lines)]
    unfit = any(not ln.fits.all() for ln in lines)
    entries = len(lines) + len(bounds) + unfit
    fig = new_figure(PANEL_HEIGHT)
    fig.set_size_inches(WIDTH, PANEL_HEIGHT)
    labels = [f"{ln.label}: {ln.limit_label}" if len(lines) > 1 else ln.label for ln in lines]
    ncols = min(entries, _legend_columns(fig, labels))
    legend_in = 0.25 + ROW_INCHES * -(-entries // ncols)
    height = 0.85 + PANEL_HEIGHT + legend_in
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
        handles.append(Line2D([], [], color=color, lw=1.8, label=labels[k]))
    if len(lines) <= WRITTEN_LINES:
        for ax, panel in ((left, "rate"), (right, "time")):
            _fit_texts(ax, lines, data.dim, panel)
    if any(np.isfinite(ln.limit) for ln in lines):
        handles.append(Line2D([], [], color=SERIES_COLORS[0] if len(lines) == 1 else "#555",
                              lw=1.2, ls=LIMIT_STYLE, label=_limit_legend(data.dim)))  # fmt: skip
    handles += marker_handles(
        bounds,
        unfit,
        lambda b: _("{bound} step", bound=bound_text(b)),
        _("does not fit in HBM (weights + KV cache)"),
    )
    fig.legend(handles=handles, loc="lower left", bbox_to_anchor=(LEGEND_LEFT, 0.1 / height),
               ncols=ncols, fontsize=LEGEND_FONT, frameon=False, handlelength=2.6,
               columnspacing=2.0)  # fmt: skip
    titles(fig, data.title, data.subtitle, height)
    return fig


def _legend_columns(fig, labels: list[str], most: int = 3) -> int:
    """The most legend columns (up to `most`) whose widest label, its line's handle and the
    space between columns fit the figure's width from the legend's left edge (LEGEND_LEFT):
    long labels (a fleet point's chip, dtype and chip count, and its largest batch) in two
    columns or one, never cut at the figure's edge."""
    if not labels:
        return most
    renderer = fig.canvas.get_renderer()
    widest = 0.0
    for label in labels:
        text = fig.text(0, 0, label, fontsize=LEGEND_FONT)
        widest = max(widest, text.get_window_extent(renderer).width / fig.dpi)
        text.remove()
    em = LEGEND_FONT / 72  # inches
    column = widest + (2.6 + 0.8 + 2.0) * em  # handle, its pad, the space between columns
    room = WIDTH * (1 - LEGEND_LEFT) - 0.1
    return max(1, min(most, int(room // column)))


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


def _fit_texts(ax, lines, dim: str, panel: str) -> None:
    """Each line's point furthest along the sweep that fits (at most B, the most tokens/s),
    written beside it ('B = 32: 2,155 tokens/s' on the rate panel, its step time on the
    time panel) in the line's colour. No callout overlaps another, the limit's text or
    leaves the panel (so never the legend below it): each takes the free spot nearest its
    point, on a side its line leaves free where it can, else stacked further out with a
    leader to its point (lines whose points nearly coincide, as a model list's do)."""
    renderer = ax.figure.canvas.get_renderer()
    ys = [ln.tokens_per_second if panel == "rate" else ln.t_lower for ln in lines]
    items = [k for k, ln in enumerate(lines) if ln.last_fit >= 0]
    texts = {k: _fit_label(lines[k], ys[k], dim, panel) for k in items}
    obstacles = _obstacles(ax, lines, ys)
    options = {k: _spots(ax, renderer, lines[k], ys[k], texts[k], obstacles) for k in items}
    fixed = [t.get_window_extent(renderer) for t in ax.texts]  # the limit's text

    def layout(order: list[int]) -> tuple[float, dict[int, tuple]]:
        boxes, leaders, chosen, total = [(b.x0, b.y0, b.x1, b.y1) for b in fixed], [], {}, 0.0
        for k in order:
            best = None
            for box, leader, cost, spot in options[k]:
                clash = sum(_overlap(box, o) for o in boxes)
                clash += sum(_through(seg, box) for seg in leaders)
                clash += sum(_through(leader, o) for o in boxes) if leader else 0
                if best is None or cost + 1000 * clash < best[0]:
                    best = (cost + 1000 * clash, box, leader, spot)
            total += best[0]
            boxes.append(best[1])
            leaders += [best[2]] if best[2] else []
            chosen[k] = best[3]
        return total, chosen

    # nearest the lowest point first, or the highest: whichever stacks them more cheaply
    orders = [sorted(items, key=lambda k: ys[k][lines[k].last_fit] * s) for s in (1, -1)]
    _, chosen = min((layout(order) for order in orders), key=lambda t: t[0])
    for k in items:
        ln, i, color = lines[k], lines[k].last_fit, SERIES_COLORS[k % len(SERIES_COLORS)]
        dx, dy, left, up, far = chosen[k]
        ax.annotate(
            texts[k],
            (ln.x[i], ys[k][i]),
            textcoords="offset points",
            xytext=(dx, dy),
            ha="right" if left else "left",
            va="bottom" if up else "top",
            fontsize=CALLOUT_FONT,
            color=color,
            fontweight="bold",
            zorder=6,
            bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none", alpha=0.8),
            arrowprops=dict(
                arrowstyle="-",
                color=color,
                lw=0.8,
                shrinkA=0,
                shrinkB=3,
                relpos=(float(left), float(not up)),
            )  # fmt: skip
            if far
            else None,
        )


def _fit_label(ln, y: np.ndarray, dim: str, panel: str) -> str:
    """'B = 32: 2,155 tokens/s' (rate), 'B = 32: 14.8 ms' (time), 'S = 8k: …' along S."""
    i = ln.last_fit
    what = f"B = {fmt.count(ln.x[i])}" if dim == "B" else f"S = {_tick(ln.x[i])}"
    if panel == "rate":
        return f"{what}: {_('{rate} tokens/s', rate=fmt.count(y[i]))}"
    return f"{what}: {short_seconds(y[i])}"


def _obstacles(ax, lines, ys) -> np.ndarray:
    """What a callout had better not cover, in pixels: the lines, sampled, their points
    (counted five times) and the limits' vertical lines."""
    frame = ax.get_window_extent(ax.figure.canvas.get_renderer())
    out = [np.empty((0, 2))]
    for ln, y in zip(lines, ys, strict=True):
        ok = np.isfinite(y) & (ln.x > 0)
        if ok.any():
            out.append(axis_points(ax, ln.x[ok], y[ok]))
            out += [ax.transData.transform(np.column_stack([ln.x[ok], y[ok]]))] * 4
        if np.isfinite(ln.limit):
            px = ax.transData.transform((ln.limit, 1.0))[0]
            tall = np.arange(frame.y0, frame.y1, 6.0)
            out.append(np.column_stack([np.full(len(tall), px), tall]))
    return np.concatenate(out)


def _spots(ax, renderer, ln, y: np.ndarray, text: str, obstacles: np.ndarray) -> list:
    """Where a callout may go: (box, leader or None, cost, (dx, dy, left, up, far)) for
    each side of its point and each distance out, a text's height (and a gap) at a time.
    Nearer and on a side its line leaves free costs less; covering the lines costs a little,
    leaving the panel a lot."""
    fig = ax.figure
    scale = fig.dpi / 72.0
    frame = ax.get_window_extent(renderer)
    probe = fig.text(0, 0, text, fontsize=CALLOUT_FONT, fontweight="bold")
    ext = probe.get_window_extent(renderer)
    probe.remove()
    i = ln.last_fit
    px, py = ax.transData.transform((ln.x[i], y[i]))
    lo, hi = np.log2(ax.get_xlim())
    at = (np.log2(ln.x[i]) - lo) / (hi - lo)  # 0 to 1 across the panel
    rising = y[i] >= y[i - 1] if i else y[min(i + 1, len(y) - 1)] >= y[i]
    # a rising line leaves above-left and below-right free, a falling one the others;
    # above first, unless the text would leave the panel
    to_left = rising != (at < 0.35 if rising else at > 0.65)
    up = rising == to_left
    sides = [(to_left, up), (not to_left, not up), (to_left, not up), (not to_left, up)]
    ox, oy = obstacles[:, 0], obstacles[:, 1]
    out = []
    for step in range(8):
        for rank, (left, high) in enumerate(sides):
            dx = -7 if left else 7
            dy = (7 if high else -9) + (1 if high else -1) * step * (ext.height + 3) / scale
            x0 = px + dx * scale - (ext.width if left else 0) - 2
            y0 = py + dy * scale - (0 if high else ext.height) - 2
            box = (x0, y0, x0 + ext.width + 4, y0 + ext.height + 4)
            inside = frame.x0 <= box[0] and box[2] <= frame.x1
            inside = inside and frame.y0 <= box[1] and box[3] <= frame.y1
            covered = int(((ox > box[0]) & (ox < box[2]) & (oy > box[1]) & (oy < box[3])).sum())
            corner = (box[2] if left else box[0], box[1] if high else box[3])
            leader = (*corner, px, py) if step else None
            cost = 1000 * (not inside) + 2 * step + rank + 0.5 * covered
            out.append((box, leader, cost, (dx, dy, left, high, bool(step))))
    return out


def _overlap(a: tuple, b: tuple) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _through(seg: tuple, box: tuple) -> bool:
    """Whether a leader passes through a box (sampled; its ends are its own)."""
    t = np.linspace(0.1, 0.9, 9)
    x, y = seg[0] + (seg[2] - seg[0]) * t, seg[1] + (seg[3] - seg[1]) * t
    return bool(((x > box[0]) & (x < box[2]) & (y > box[1]) & (y < box[3])).any())


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
