"""A chart of configurations' lines with its legend under the axes, where it never covers a
line (serving, training): the figure as tall as the legend's rows need, the legend and the line
saying which configurations are left out below the axes, the entries for a point's shapes."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from pipeline.render.charts.fleet import LEGEND_FONT, MORE_INCHES, ROW_INCHES
from pipeline.render.charts.labels import chart_text
from pipeline.render.charts.style import FIGSIZE, new_figure


def figure_over_legend(rows: int, more: str) -> tuple[Figure, object, float]:
    """A figure, its axes and its height in inches: the chart's, and under the axes room for
    a legend of `rows` rows and the line saying `more` (when there is one)."""
    legend_in = 0.3 + ROW_INCHES * rows + (MORE_INCHES if more else 0.0)
    height = FIGSIZE[1] + legend_in
    fig = new_figure(height)
    ax = fig.subplots()
    fig.subplots_adjust(left=0.11, right=0.97, bottom=(0.62 + legend_in) / height,
                        top=1 - 0.8 / height)  # fmt: skip
    return fig, ax, height


def legend_below(fig: Figure, handles: list, title: str, more: str, height: float, **options):
    """The legend of `handles` (a tuple: drawn one over the other, the last one's label) under
    the axes, titled; under it the line saying `more`; `options`: fig.legend's (ncols...)."""
    more_in = MORE_INCHES if more else 0.0
    fig.legend(
        handles=handles,
        labels=[(h[-1] if isinstance(h, tuple) else h).get_label() for h in handles],
        loc="lower left",
        bbox_to_anchor=(0.02, (0.08 + more_in) / height),
        fontsize=LEGEND_FONT,
        frameon=False,
        title=title,
        title_fontsize=8.5,
        alignment="left",
        handlelength=2.6,
        **options,
    )
    if more:
        fig.text(0.02, 0.1 / height, chart_text(more, 160), fontsize=LEGEND_FONT,
                 color="#444", va="bottom", fontstyle="italic")  # fmt: skip


def point_handles(shown: tuple[bool, bool, bool], labels: tuple[str, str, str], ms: float):
    """Legend entries for the point shapes a chart shows (`shown`): filled, hollow, and hollow
    with a cross in it (one that does not fit in HBM), said by `labels`; `ms` their size."""
    filled, hollow, crossed = shown
    handles: list = []
    if filled:
        handles.append(Line2D([], [], ls="", marker="o", color="#555", ms=ms, label=labels[0]))
    if hollow:
        handles.append(Line2D([], [], ls="", marker="o", mfc="white", mec="#555", ms=ms,
                              label=labels[1]))  # fmt: skip
    if crossed:
        ring = Line2D([], [], ls="", marker="o", mfc="white", mec="#555", ms=ms)
        cross = Line2D([], [], ls="", marker="x", color="#555", ms=3.5, label=labels[2])
        handles.append((ring, cross))  # drawn one over the other (HandlerTuple)
    return handles


def joined(arrays: list[np.ndarray], dtype=float) -> np.ndarray:
    """Every line's values in one array (an empty one when there are no lines)."""
    return np.concatenate([*arrays, np.array([], dtype=dtype)])
