"""render/charts/legend_below.py: a chart of configurations' lines with its legend under the
axes (serving, training): the figure as tall as the legend's rows need, the legend and the
line saying what is left out below the axes, a point's shapes in it."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.render.charts.legend_below import (
    figure_over_legend,
    joined,
    legend_below,
    point_handles,
)
from pipeline.render.charts.style import FIGSIZE


def test_the_figure_grows_with_the_legend_and_it_stays_under_the_axes():
    small, _ax, low = figure_over_legend(2, "")
    big, ax, high = figure_over_legend(12, "3 more configurations")
    assert low == pytest.approx(FIGSIZE[1] + 0.3 + 0.19 * 2)
    assert high == pytest.approx(FIGSIZE[1] + 0.3 + 0.19 * 12 + 0.24)
    assert big.get_figheight() == high and small.get_figheight() == low
    (line,) = ax.plot([1, 2], [1, 2], label="a line")
    legend_below(big, [line, *point_handles((True, True, True), ("x", "y", "z"), 5)], "Lines",
                 "3 more configurations", high, ncols=2)  # fmt: skip
    renderer = big.canvas.get_renderer()
    (legend,) = big.legends
    assert [t.get_text() for t in legend.get_texts()] == ["a line", "x", "y", "z"]
    assert legend.get_window_extent(renderer).y1 < ax.get_window_extent(renderer).y0
    (more,) = big.texts
    assert more.get_text() == "3 more configurations" and more.get_position()[1] < 0.1


def test_only_the_shapes_shown_are_in_the_legend():
    shown = point_handles((False, True, False), ("filled", "hollow", "crossed"), 5.5)
    (hollow,) = shown
    assert hollow.get_label() == "hollow" and hollow.get_markerfacecolor() == "white"
    assert hollow.get_markersize() == 5.5
    (crossed,) = point_handles((False, False, True), ("a", "b", "c"), 5)
    assert isinstance(crossed, tuple) and crossed[-1].get_marker() == "x"


def test_the_points_of_every_line_joined():
    assert joined([np.array([1.0]), np.array([2.0, 3.0])]).tolist() == [1.0, 2.0, 3.0]
    assert joined([], bool).dtype == bool and len(joined([])) == 0
