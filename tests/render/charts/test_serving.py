"""Drawing a serving chart (render.charts.serving), read from the Figure's artists: a line per
configuration, the TPOT target's vertical line at 1 / tpot_target with its side shaded, the
front ringed with its batches named, the legend under the axes within the figure, a PNG."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.patches import Rectangle

from pipeline.render.charts import png
from pipeline.render.charts.serving import serving_figure
from pipeline.render.charts.serving_data import serving_data
from tests.helpers import assert_png, serving_frames

PRICES = {"h100": 2.5, "h200": 3.5, "b200": 5.0, "mi300x": 3.0}


@pytest.fixture(scope="module")
def frames():
    return serving_frames(prices=PRICES)


def legend_of(fig) -> list[str]:
    (legend,) = fig.legends
    return [t.get_text() for t in legend.get_texts()]


def test_a_line_per_configuration_and_the_target(frames):
    data = serving_data(*frames, "llama3-70b")
    fig = serving_figure(data)
    (ax,) = fig.axes
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    legend = legend_of(fig)
    assert legend[0] == "1. b200 fp8 ×4  16,181/chip at B = 512"
    assert "h200 bf16 ×4  misses at every B" in legend
    assert "TPOT ≤ 15.0 ms: 66.7 tokens/s per user and more" in legend
    lines = {ln.get_label(): ln for ln in ax.get_lines()}
    drawn = [lines[t] for t in legend if t in lines]
    assert len(drawn) == 16  # every configuration: 4 chips × 2 precisions × 2 chip counts
    np.testing.assert_allclose(drawn[0].get_xdata(), data.lines[0].x)
    # the target: a vertical line at 1 / 15 ms, the side meeting it shaded up to the edge
    (target,) = [ln for ln in ax.get_lines() if np.ptp(ln.get_xdata()) == 0]
    assert target.get_xdata()[0] == pytest.approx(1 / 0.015)
    (shade,) = [p for p in ax.patches if isinstance(p, Rectangle)]
    assert shade.get_x() == pytest.approx(1 / 0.015)
    assert shade.get_x() + shade.get_width() == pytest.approx(ax.get_xlim()[1])
    assert "meets TPOT →" in [t.get_text() for t in ax.texts]


def test_the_front_is_ringed_and_its_batches_named(frames):
    data = serving_data(*frames, "llama3-70b")
    fig = serving_figure(data)
    (ax,) = fig.axes
    named = [t.get_text() for t in ax.texts if t.get_text().startswith("B=")]
    assert "B=1" in named and "B=512" in named
    assert len(named) <= len(data.front_B)  # a crowded front names what it has room for
    assert "front meeting the targets: none beats it on both axes" in legend_of(fig)
    assert "a batch B missing a target (TTFT or TPOT)" in legend_of(fig)


def test_the_legend_fits_in_the_figure(frames):
    fig = serving_figure(serving_data(*frames, "mixtral-8x7b"))
    renderer = fig.canvas.get_renderer()
    (legend,) = fig.legends
    box, page = legend.get_window_extent(renderer), fig.bbox
    assert box.x0 >= page.x0 and box.x1 <= page.x1 and box.y0 >= page.y0
    (ax,) = fig.axes
    assert box.y1 < ax.get_window_extent(renderer).y0  # under the axes, never over a line


def test_the_cost_chart_and_a_png(frames):
    fig = serving_figure(serving_data(*frames, "llama3-70b", cost=True))
    (ax,) = fig.axes
    assert ax.yaxis.get_major_formatter()(1.0, 0) == r"$1"
    assert legend_of(fig)[0].startswith("1. mi300x fp8 ×4  ")
    assert (
        fig.texts[0].get_text()
        == "llama3-70b: dollars per million tokens against tokens/s per user"
    )
    assert_png(png(serving_data(*frames, "llama3-70b")))
