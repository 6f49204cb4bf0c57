"""Drawing the summary chart: stacked bars of compute-, memory- and network-bound scenarios per
hardware."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator

from pipeline.i18n import _
from pipeline.model.roofline import BOUNDS
from pipeline.render import format as fmt
from pipeline.render.charts.labels import bound_text, chart_text
from pipeline.render.charts.style import BOUND_COLORS, DPI, FIGSIZE, in_chart_fonts, new_figure
from pipeline.render.charts.summary_data import SummaryData


@in_chart_fonts
def summary_figure(data: SummaryData) -> Figure:
    """Stacked bars: compute-, memory- and network-bound scenario counts per hardware."""
    names = data.hardware
    if not names:
        return _nothing_figure(data)
    height = min(1.9 + 0.42 * len(names), 30.0)
    fig = new_figure(height)
    ax = fig.subplots()
    fig.subplots_adjust(left=0.2, right=0.95, bottom=0.62 / height, top=1 - 1.0 / height)
    pos = np.arange(len(names))[::-1]
    totals = np.sum([data.counts[b] for b in BOUNDS], axis=0)
    biggest = max(int(totals.max()), 1)
    left = np.zeros(len(names))
    for bound in BOUNDS:
        vals = np.array(data.counts[bound], dtype=float)
        ax.barh(
            pos,
            vals,
            left=left,
            color=BOUND_COLORS[bound],
            height=0.62,
            label=f"{bound_text(bound)} ({fmt.count(vals.sum())})",
        )
        for y, v, x0 in zip(pos, vals, left, strict=True):
            if v / biggest >= 0.07:
                text_color = "#222" if bound == "memory" else "white"
                ax.text(
                    x0 + v / 2,
                    y,
                    fmt.count(v),
                    ha="center",
                    va="center",
                    fontsize=8,
                    color=text_color,
                )
        left = left + vals
    for y, total in zip(pos, totals, strict=True):
        ax.text(total + biggest * 0.01, y, fmt.count(total), va="center", fontsize=8)
    ax.set_yticks(pos, labels=[chart_text(n, 28) for n in names], fontsize=9)
    ax.set_ylim(-0.6, len(names) - 0.4)
    ax.set_xlim(0, biggest * 1.12)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: fmt.count(v)))
    # room on the left for the longest hardware name, measured
    renderer = fig.canvas.get_renderer()
    widest = max(t.get_window_extent(renderer).width for t in ax.get_yticklabels())
    left_margin = min((widest + 24) / (FIGSIZE[0] * DPI), 0.45)
    fig.subplots_adjust(left=left_margin)
    ax.set_xlabel(_("Scenarios (count)"))
    ax.grid(True, axis="x", color="#e3e3e3", lw=0.6)
    ax.set_axisbelow(True)
    fig.legend(
        loc="upper left",
        bbox_to_anchor=(left_margin, 1 - 0.5 / height),
        ncols=3,
        fontsize=8.5,
        frameon=False,
        borderaxespad=0,
        handlelength=1.6,
    )
    fig.text(0.02, 1 - 0.14 / height, data.title, fontsize=12.5, fontweight="bold", va="top")
    return fig


def _nothing_figure(data: SummaryData) -> Figure:
    """The title and, where the bars would be, what the note says (no scenario computed)."""
    fig = new_figure(FIGSIZE[1] / 2)
    fig.text(0.02, 1 - 0.14 / (FIGSIZE[1] / 2), data.title, fontsize=12.5, fontweight="bold",
             va="top")  # fmt: skip
    fig.text(0.5, 0.45, chart_text(data.note, 120), ha="center", va="center", fontsize=11,
             color="#444")  # fmt: skip
    return fig
