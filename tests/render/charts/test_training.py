"""render/charts/training.py: a train series' step time against chips, a line per
configuration, each line's compute-bound threshold a vertical line in its colour, the points
short of it hollow, those not fitting crossed; the legend under the axes."""

from __future__ import annotations

import numpy as np
from matplotlib.colors import to_hex

from pipeline.render.charts import png
from pipeline.render.charts.training import training_figure
from pipeline.render.charts.training_data import training_data
from tests.helpers import assert_png


def legend_of(fig) -> list[str]:
    (legend,) = fig.legends
    return [t.get_text() for t in legend.get_texts()]


def test_a_line_per_configuration_and_its_threshold(training):
    data = training_data(training.summary.training, "fsdp")
    fig = training_figure(data)
    (ax,) = fig.axes
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    legend = legend_of(fig)
    assert legend[0].startswith("h100 bf16 fsdp  40.3 days at 4,096; compute-bound up to ")
    lines = {ln.get_label(): ln for ln in ax.get_lines()}
    drawn = [lines[t] for t in legend if t in lines]
    assert len(drawn) == 2
    np.testing.assert_allclose(drawn[0].get_xdata(), [256, 1024, 4096])
    np.testing.assert_allclose(drawn[0].get_ydata(), data.lines[0].y)
    # each threshold: a vertical line in its configuration's colour, at tokens / critical
    vertical = [ln for ln in ax.get_lines() if np.ptp(ln.get_xdata()) == 0]
    assert len(vertical) == 2
    for line, ours in zip(vertical, data.lines, strict=True):
        assert line.get_xdata()[0] == ours.threshold
        assert to_hex(line.get_color()) == to_hex(lines[legend[data.lines.index(ours)]].get_color())
    low, high = ax.get_xlim()
    assert low < 256 and high > max(ln.threshold for ln in data.lines)
    assert "a step that does not fit in HBM" in legend
    assert [t.get_text() for t in ax.get_xticklabels()] == ["256", "1,024", "4,096"]


def test_the_legend_is_under_the_axes_and_a_png(training):
    fig = training_figure(training_data(training.summary.training, "fsdp"))
    renderer = fig.canvas.get_renderer()
    (legend,) = fig.legends
    box, page = legend.get_window_extent(renderer), fig.bbox
    assert box.x0 >= page.x0 and box.x1 <= page.x1 and box.y0 >= page.y0
    (ax,) = fig.axes
    assert box.y1 < ax.get_window_extent(renderer).y0  # outside the plot, never over a line
    assert_png(png(training_data(training.summary.training, "fsdp")))
