"""Drawing a roofline (HBM or network) of one chip: log-log attainable FLOP/s against
intensity, the slopes and ceilings, each ridge marked, every scenario a point coloured by its
bound (a density map beyond SCATTER_LIMIT points), names placed where they stay readable."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from pipeline.i18n import _
from pipeline.model.roofline import BOUNDS
from pipeline.render import format as fmt
from pipeline.render.charts.data import LABEL_LIMIT, SCATTER_LIMIT, RooflineData
from pipeline.render.charts.labels import (
    bound_text,
    chart_text,
    cluster_labels,
    place_labels,
    rows_text,
)
from pipeline.render.charts.style import (
    BOUND_COLORS,
    BOUND_MARKERS,
    ROOF_COLOR,
    SERIES_STYLES,
    axis_points,
    hollow,
    in_chart_fonts,
    log_limits,
    log_log_axes,
    new_figure,
    rgb,
    titles,
)

DENSITY_BINS = (160, 110)


def _draw_roofs(ax, data: RooflineData, xlim: tuple[float, float]) -> tuple[list, list, list]:
    """Slopes, ceilings and ridges; returns (texts, ridge texts, obstacle points) for labels.
    Each line ends or starts at a ridge point, as the model has it (data.ridges)."""
    texts, obstacles = [], []
    top = max(c.peak for c in data.ceilings)
    fastest = max(range(len(data.slopes)), key=lambda i: data.slopes[i].bandwidth)
    starts = {r.family: r.x for r in data.ridges if r.slope == fastest}  # each ceiling's
    for i, s in enumerate(data.slopes):
        end = max((r for r in data.ridges if r.slope == i), key=lambda r: r.y).x  # at the top
        xs = np.array([xlim[0], end])
        ys = xs * s.bandwidth
        ax.plot(
            xs, ys, color=ROOF_COLOR, lw=1.8, ls=SERIES_STYLES[i % len(SERIES_STYLES)], zorder=2
        )
        obstacles.append(axis_points(ax, xs, ys))
        # the label sits along the slope, a fifth of the way across, rotated to match it
        lx = 10 ** (np.log10(xlim[0]) + 0.2 * (np.log10(end) - np.log10(xlim[0])))
        p0, p1 = ax.transData.transform([(lx, lx * s.bandwidth), (end, top)])
        angle = float(np.degrees(np.arctan2(p1[1] - p0[1], p1[0] - p0[0])))
        texts.append(
            ax.annotate(
                s.label,
                (lx, lx * s.bandwidth),
                xytext=(-4, 6),
                textcoords="offset points",
                rotation=angle,
                rotation_mode="anchor",
                ha="left",
                va="bottom",
                fontsize=8.5,
                color=ROOF_COLOR,
            )
        )
    for c in data.ceilings:
        xs = np.array([starts[c.family], xlim[1]])
        ys = np.array([c.peak, c.peak])
        ax.plot(xs, ys, color=ROOF_COLOR, lw=1.8, zorder=2)
        obstacles.append(axis_points(ax, xs, ys))
        texts.append(
            ax.annotate(
                c.label,
                (xlim[1], c.peak),
                xytext=(-6, 3),
                textcoords="offset points",
                ha="right",
                va="bottom",
                fontsize=8.5,
                color=ROOF_COLOR,
            )
        )
    for d in data.derated:
        top_d = max(d.peaks)
        xs = np.array([xlim[0], max(d.ridges)])
        ax.plot(xs, xs * d.bandwidth, color=ROOF_COLOR, lw=1.2, ls="--", alpha=0.75, zorder=2)
        obstacles.append(axis_points(ax, xs, xs * d.bandwidth))
        for peak, ridge in zip(d.peaks, d.ridges, strict=True):
            xs = np.array([ridge, xlim[1]])
            ax.plot(xs, [peak, peak], color=ROOF_COLOR, lw=1.2, ls="--", alpha=0.75, zorder=2)
            obstacles.append(axis_points(ax, xs, np.array([peak, peak])))
        texts.append(
            ax.annotate(
                f"{d.label} ({rows_text(d.rows)})",
                (xlim[1], top_d),
                xytext=(-6, -3),
                textcoords="offset points",
                ha="right",
                va="top",
                fontsize=7.5,
                color=ROOF_COLOR,
            )
        )
    ylo = ax.get_ylim()[0]
    last_px = -1e9
    right = True
    ridges = []
    for r in sorted(data.ridges, key=lambda r: r.x):
        ax.plot([r.x, r.x], [ylo, r.y], color="#888", lw=0.8, ls=":", zorder=1)
        ax.plot([r.x], [r.y], marker="D", ms=5, color=ROOF_COLOR, zorder=6)
        px = ax.transData.transform((r.x, r.y))
        obstacles.append(px[None, :])
        right = not right if px[0] - last_px < 16 else True  # two close ridges: one each side
        last_px = px[0]
        ridges.append(
            ax.annotate(
                _("ridge {x} FLOP/byte ({family})", x=fmt.rounded(r.x), family=r.family),
                (r.x, ylo),
                xytext=(3 if right else -3, 4),
                textcoords="offset points",
                rotation=90,
                ha="left" if right else "right",
                va="bottom",
                fontsize=7.5,
                color="#555",
            )
        )
    return texts, ridges, obstacles


def _draw_points(ax, data: RooflineData, xlim, ylim) -> tuple[list, str]:
    """Scenario points by bound; returns legend handles and the drawing mode."""
    p = data.points
    n = len(p.x)
    handles = []
    dense = n > SCATTER_LIMIT or p.weight is not None
    if dense:
        _draw_density(ax, p, xlim, ylim)
    few = n <= LABEL_LIMIT or bool(data.labels or data.trails)
    for t in data.trails:
        ax.plot(t.x, t.y, color="#999", lw=1.0, zorder=3)
    size, alpha = (40, 0.95) if few else (12, 0.55)
    for code, bound in enumerate(BOUNDS):
        color = BOUND_COLORS[bound]
        label = f"{bound_text(bound)} ({fmt.count(data.counts[bound])})"
        if dense:
            handles.append(Patch(facecolor=color, alpha=0.8, label=label))
            continue
        sel = p.bound == code
        small = p.in_sweep if data.trails else np.zeros(n, dtype=bool)  # many, close
        for mask, s in ((sel & ~small, size), (sel & small, 10)):
            fit, unfit = mask & p.fits, mask & ~p.fits
            common = dict(marker=BOUND_MARKERS[bound], s=s, zorder=5, rasterized=not few)
            if fit.any():
                ax.scatter(p.x[fit], p.y[fit], color=color, alpha=alpha, linewidths=0, **common)
            if unfit.any():
                hollow(ax, p.x[unfit], p.y[unfit], color, 1.2, **common)
        handles.append(
            Line2D([], [], ls="", marker=BOUND_MARKERS[bound], color=color, ms=7, label=label)
        )
    if data.not_fitting:
        handles.append(
            Line2D(
                [],
                [],
                ls="",
                marker="x" if dense else "o",
                ms=6 if dense else 7,
                markerfacecolor="none",
                markeredgecolor="#222",
                label=_("does not fit in HBM ({n})", n=fmt.count(data.not_fitting)),
            )
        )
    if data.trails:  # named in the legend: their own sweep charts show them in full
        names = [chart_text(t.text, 24) for t in data.trails]
        more = " " + _("+{n} more", n=len(names) - 3) if len(names) > 3 else ""
        shown = ", ".join(names[:3]) + more
        handles.append(Line2D([], [], color="#999", lw=1.5, label=_("sweep: {names}", names=shown)))
    if dense:
        handles.append(Patch(facecolor="#999", alpha=0.35, label=_("lighter = fewer scenarios")))
    return handles, ("dense" if dense else "few" if few else "scatter")


def _draw_density(ax, p, xlim, ylim) -> None:
    """Binned density: each bin coloured by its most common bound, shaded by its count."""
    nx, ny = DENSITY_BINS
    xe = np.linspace(np.log10(xlim[0]), np.log10(xlim[1]), nx + 1)
    ye = np.linspace(np.log10(ylim[0]), np.log10(ylim[1]), ny + 1)
    lx, ly = np.log10(p.x), np.log10(p.y)
    w = np.ones(len(lx)) if p.weight is None else p.weight.astype(float)
    hist = np.stack(
        [
            np.histogram2d(lx[sel], ly[sel], bins=[xe, ye], weights=w[sel])[0]
            for sel in (p.bound == k for k in range(len(BOUNDS)))
        ]
    )
    total = hist.sum(axis=0)
    rgba = np.zeros((nx, ny, 4))
    palette = np.array([rgb(BOUND_COLORS[b]) for b in BOUNDS])
    rgba[..., :3] = palette[hist.argmax(axis=0)]
    shade = np.log1p(total) / np.log1p(max(total.max(), 1))
    rgba[..., 3] = np.where(total > 0, 0.45 + 0.55 * shade, 0.0)
    # above the roof lines: most scenarios sit on a roof, and the colour is what matters there
    ax.pcolormesh(10**xe, 10**ye, rgba.transpose(1, 0, 2), shading="flat", zorder=4)
    unfit = ~p.fits
    if unfit.any():
        h = np.histogram2d(lx[unfit], ly[unfit], bins=[xe, ye])[0]
        ix, iy = np.nonzero(h)
        cx = 10 ** ((xe[ix] + xe[ix + 1]) / 2)
        cy = 10 ** ((ye[iy] + ye[iy + 1]) / 2)
        ax.scatter(cx, cy, s=10, marker="x", color="#222", linewidths=0.6, alpha=0.8, zorder=6)


@in_chart_fonts
def roofline_figure(data: RooflineData) -> Figure:
    """An HBM or network roofline (see the module) as a Figure."""
    fig = new_figure()
    ax = fig.subplots()
    fig.subplots_adjust(left=0.15, right=0.975, bottom=0.11, top=0.86)
    ax.set_xscale("log")
    ax.set_yscale("log")
    p = data.points
    ridge_x = np.array([r.x for r in data.ridges])
    peaks = np.array([c.peak for c in data.ceilings])
    xlim = log_limits(np.concatenate([p.x, ridge_x]), pad=4.0, min_decades=2.5)
    # every point stays on the chart; the top leaves room for the ceiling labels
    ylo = min(float(np.concatenate([p.y, peaks]).min()) / 2.5, peaks.max() / 100)
    ylim = (ylo, peaks.max() * 3.5)
    log_log_axes(ax, xlim, ylim)
    ax.set_xlabel(data.x_label)
    ax.set_ylabel(data.y_label)
    texts, ridge_texts, obstacles = _draw_roofs(ax, data, xlim)
    handles, mode = _draw_points(ax, data, xlim, ylim)
    legend = ax.legend(
        handles=handles, loc="upper left", fontsize=8, framealpha=0.92, borderaxespad=0.6
    )
    legend.set_zorder(8)
    notes = []
    if data.overridden:
        n = fmt.count(data.overridden)
        notes.append(
            _("{n} row gives its own peak, HBM or link numbers (drawn at its own values; the "
              "roofs are the catalog's)", n=n)
            if data.overridden == 1
            else _("{n} rows give their own peak, HBM or link numbers (drawn at their own "
                   "values; the roofs are the catalog's)", n=n)
        )  # fmt: skip
    if p.hidden:
        notes.append(_("{rows} not drawn (no bytes or no FLOPs)", rows=rows_text(p.hidden)))
    if data.collectives:
        rows = rows_text(data.collectives, "collective row")
        notes.append(
            _("{rows} not on a roofline (no FLOPs; see the tables and the sweep chart of bytes)",
              rows=rows)
        )  # fmt: skip
    if notes:
        fig.text(0.01, 0.012, "; ".join(notes), fontsize=7.5, color="#555", va="bottom")
    titles(fig, data.title, data.subtitle)
    if mode == "few" and (data.labels or data.trails):
        renderer = fig.canvas.get_renderer()
        boxes = [t.get_window_extent(renderer).padded(2) for t in [*texts, legend]]
        faint = [t.get_window_extent(renderer).padded(1) for t in ridge_texts]
        pts = [ax.transData.transform(np.column_stack([p.x, p.y]))]
        pts += [axis_points(ax, t.x, t.y, step=8) for t in data.trails]
        items = cluster_labels(ax, [{"text": b.text, "x": b.x, "y": b.y} for b in data.labels])
        place_labels(fig, ax, items, boxes, faint, np.concatenate([*obstacles, *pts]))
    return fig
