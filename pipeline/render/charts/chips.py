"""Drawing the chips chart: every chosen chip's HBM roofline at one dtype on one pair of
log-log axes (attainable FLOP/s against arithmetic intensity), one line per chip with its
ridge point marked and labelled, a legend of the chips, a note on the chips left out."""

from __future__ import annotations

import numpy as np

from pipeline.i18n import _
from pipeline.render import format as fmt
from pipeline.render.charts.chips_data import ChipsData
from pipeline.render.charts.labels import chart_text, fit_text
from pipeline.render.charts.style import (
    FIGSIZE,
    SERIES_COLORS,
    SERIES_STYLES,
    ChartFigure,
    axis_points,
    in_chart_fonts,
    log_log_axes,
    new_figure,
    titles,
)

MARKERS = ("o", "s", "^", "D", "v", "P", "X", "h")
RIDGE_FONT = 9.0
# where a ridge label may go, in points from its marker, in order of preference: above, beside
# above, under the roof (right and below), then further out
RIDGE_SPOTS = tuple(
    (dx * r, dy * r, ha, va)
    for r in (1.0, 2.2)
    for dx, dy, ha, va in (
        (0, 7, "center", "bottom"),
        (-5, 5, "right", "bottom"),
        (5, 5, "left", "bottom"),
        (5, -5, "left", "top"),
        (0, -7, "center", "top"),
        (7, 0, "left", "center"),
        (-7, 0, "right", "center"),
        (-5, -5, "right", "top"),
    )
)
LEGEND_FONT = 8.5
LEGEND_MARGIN = 0.02  # of the figure's width, left and right of a legend under the axes
BELOW_ONE_COLUMN = 6  # chips a legend under the axes lists in one column
NOTE_IN = 0.22  # inches for the note on the chips left out, at the bottom
LOWEST_INTENSITY = 1.0  # FLOP/byte: the chart starts at most here (decode-like ops sit there)


@in_chart_fonts
def chips_figure(data: ChipsData) -> ChartFigure:
    """The chips chart (see the module) as a Figure."""
    fig = new_figure()
    ax = fig.subplots()
    _layout(fig, data, 0.0)
    ridges = np.array([r.ridge for r in data.roofs])
    peaks = np.array([r.peak for r in data.roofs])
    slopes = np.array([r.bandwidth for r in data.roofs])
    xlim = (min(LOWEST_INTENSITY, ridges.min() / 10), ridges.max() * 10)
    low = xlim[0] * slopes.min() / 1.5
    decade = 10 ** np.floor(np.log10(low))  # down to it when near: the axis starts labelled
    ylim = (decade if low < 3 * decade else low, peaks.max() * 2.5)
    log_log_axes(ax, xlim, ylim, minor_grid=True)
    ax.set_xlabel(_("arithmetic intensity (FLOP/byte)"))
    ax.set_ylabel(_("attainable FLOP/s"))
    lines = []
    for roof in data.roofs:
        i = roof.index
        xs = np.array([xlim[0], roof.ridge, xlim[1]])
        ys = np.array([xlim[0] * roof.bandwidth, roof.peak, roof.peak])
        line = ax.plot(
            xs,
            ys,
            color=SERIES_COLORS[i % len(SERIES_COLORS)],
            ls=SERIES_STYLES[i % len(SERIES_STYLES)],
            lw=2.2,
            marker=MARKERS[i % len(MARKERS)],
            markevery=[1],  # the ridge point only
            ms=8,
            markeredgecolor="white",
            markeredgewidth=1.0,
            label=roof.label,
            gid=f"roof:{roof.name}",
            zorder=3 + i / 100,
        )
        lines += line
    legend = ax.legend(loc="lower right", fontsize=LEGEND_FONT, framealpha=0.95, borderaxespad=0.6)
    if _covered(fig, ax, legend, lines):  # many chips, or far apart: the legend goes below
        legend.remove()
        legend = _legend_below(fig, data, lines)
    legend.set_zorder(8)
    titles(fig, data.title, data.subtitle, fig.get_figheight())
    if data.note:
        fig.text(0.01, 0.012, chart_text(data.note, 160), fontsize=8, color="#555", va="bottom")
    obstacles = np.concatenate([axis_points(ax, *ln.get_data()) for ln in lines])
    _ridge_labels(fig, ax, data, legend, obstacles)
    return fig


def _layout(fig, data: ChipsData, legend_in: float) -> None:
    """The axes' margins for a figure `legend_in` inches taller than a chart, to hold the
    legend under the axes (and the note under it)."""
    height = FIGSIZE[1] + legend_in
    fig.set_size_inches(FIGSIZE[0], height)
    below = 0.62 + legend_in + (NOTE_IN if data.note else 0.0)
    fig.subplots_adjust(left=0.13, right=0.975, bottom=below / height, top=1 - 0.77 / height)


def _covered(fig, ax, legend, lines) -> bool:
    """Whether the legend hides part of a roof line."""
    box = legend.get_window_extent(fig.canvas.get_renderer())
    for line in lines:
        pts = axis_points(ax, *line.get_data())
        if ((pts[:, 0] > box.x0) & (pts[:, 0] < box.x1) & (pts[:, 1] > box.y0)
                & (pts[:, 1] < box.y1)).any():  # fmt: skip
            return True
    return False


def _legend_below(fig, data: ChipsData, lines):
    """The legend under the axes, the figure made taller for it: two columns past
    BELOW_ONE_COLUMN chips, each entry cut to its column's width (an ellipsis at its end)."""
    ncols = 1 if len(lines) <= BELOW_ONE_COLUMN else 2
    rows = -(-len(lines) // ncols)
    legend_in = 0.12 + 0.2 * rows
    _layout(fig, data, legend_in)
    width = fig.bbox.width * (1 - 2 * LEGEND_MARGIN) / ncols - 4.5 * LEGEND_FONT * fig.dpi / 72
    # two columns: the ridge without its unit (the x axis has it), cut at the end if need be
    short = [r.label.removesuffix(" FLOP/byte") if ncols > 1 else r.label for r in data.roofs]
    labels = [fit_text(fig, text, "", width, LEGEND_FONT) for text in short]
    height = fig.get_figheight()
    return fig.legend(
        lines,
        labels,
        loc="lower left",
        bbox_to_anchor=(LEGEND_MARGIN, (0.1 + (NOTE_IN if data.note else 0.0)) / height),
        ncols=ncols,
        fontsize=LEGEND_FONT,
        frameon=False,
    )


def _ridge_labels(fig, ax, data: ChipsData, legend, obstacles: np.ndarray) -> None:
    """Each ridge point's FLOP/byte beside it, in its chip's colour: at the first of a few
    spots around the marker that covers no line, label, legend or other marker, else at the
    least crowded one (no leader lines: a number far from its marker reads as another's)."""
    renderer = fig.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    scale = fig.dpi / 72.0
    taken = [_box(legend.get_window_extent(renderer))]
    anchors = ax.transData.transform([(r.ridge, r.peak) for r in data.roofs])
    ox, oy = obstacles[:, 0], obstacles[:, 1]
    for i, roof in enumerate(data.roofs):
        text = fmt.rounded(roof.ridge)
        probe = fig.text(0, 0, text, fontsize=RIDGE_FONT, fontweight="bold")
        ext = probe.get_window_extent(renderer)
        probe.remove()
        w, h = ext.width + 2, ext.height + 2
        px, py = anchors[i]
        others = np.delete(anchors, i, axis=0)
        best = None
        for k, (dx, dy, ha, va) in enumerate(RIDGE_SPOTS):
            x0 = px + dx * scale - {"left": 0, "right": w, "center": w / 2}[ha]
            y0 = py + dy * scale - {"bottom": 0, "top": h, "center": h / 2}[va]
            box = (x0, y0, x0 + w, y0 + h)
            cost = 0.5 * k + 1000 * (not _inside(box, _box(frame)))
            cost += int(((ox > box[0]) & (ox < box[2]) & (oy > box[1]) & (oy < box[3])).sum())
            cost += 100 * sum(_overlap(box, t) for t in taken)
            own = _distance(box, px, py)
            if len(others) and min(_distance(box, x, y) for x, y in others) < own + 10:
                cost += 30  # nearer another chip's marker than its own: misread
            if best is None or cost < best[0]:
                best = (cost, k, box)
        _, k, box = best
        taken.append(box)
        dx, dy, ha, va = RIDGE_SPOTS[k]
        ax.annotate(
            text,
            (roof.ridge, roof.peak),
            xytext=(dx, dy),
            textcoords="offset points",
            ha=ha,
            va=va,
            fontsize=RIDGE_FONT,
            fontweight="bold",
            color=SERIES_COLORS[roof.index % len(SERIES_COLORS)],
            zorder=7,
            gid=f"ridge:{roof.name}",
        )


def _box(extent) -> tuple[float, float, float, float]:
    return (extent.x0, extent.y0, extent.x1, extent.y1)


def _inside(box: tuple, frame: tuple) -> bool:
    return frame[0] <= box[0] and box[2] <= frame[2] and frame[1] <= box[1] and box[3] <= frame[3]


def _overlap(a: tuple, b: tuple) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _distance(box: tuple, x: float, y: float) -> float:
    """Pixels from a point to the nearest point of a box (0 inside)."""
    return float(np.hypot(x - np.clip(x, box[0], box[2]), y - np.clip(y, box[1], box[3])))
