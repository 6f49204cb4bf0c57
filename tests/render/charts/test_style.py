"""What every chart shares: figures on the Agg canvas, PNGs without metadata that would change
between runs, log axis limits, colours."""

from __future__ import annotations

import io
import struct

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg
from PIL import Image

from pipeline.render.charts.style import (
    DPI,
    FIGSIZE,
    axis_points,
    log_limits,
    new_figure,
    png_bytes,
    rgb,
)
from tests.helpers import PNG_MAGIC, assert_png, planned_charts


def chunks(data: bytes) -> list[bytes]:
    """The chunk types of a PNG, in order."""
    found, at = [], len(PNG_MAGIC)
    while at < len(data):
        (size,) = struct.unpack(">I", data[at : at + 4])
        found.append(data[at + 4 : at + 8])
        at += 12 + size
    return found


def test_a_new_figure_is_chart_sized_on_the_agg_canvas():
    fig = new_figure()
    assert isinstance(fig.canvas, FigureCanvasAgg)
    assert tuple(fig.get_size_inches()) == FIGSIZE and fig.dpi == DPI
    assert tuple(new_figure(3.0).get_size_inches()) == (FIGSIZE[0], 3.0)


def test_a_text_is_laid_out_once_for_every_chart_of_the_process(monkeypatch):
    """Measuring a text lays it out in FreeType: a chart measures it when built and again
    when png_bytes draws it, and every chart has the same tick labels. The measure is kept
    (for that text, font and dpi) and the pixels are those of matplotlib's own canvas."""
    laid_out = []
    plain = RendererAgg.get_text_width_height_descent

    def counted(self, s, prop, ismath):
        laid_out.append(s)
        return plain(self, s, prop, ismath)

    monkeypatch.setattr(RendererAgg, "get_text_width_height_descent", counted)
    text = "a text no other test draws: 123 TFLOP/s"
    figs = [new_figure() for _ in range(2)]
    for fig in figs:
        fig.subplots().plot([1, 2, 3], [3, 1, 2])
        label = fig.text(0.1, 0.5, text, fontsize=9)
        label.get_window_extent(fig.canvas.get_renderer())  # measured while built
        png_bytes(fig)
    assert laid_out.count(text) == 1
    label.set_fontsize(10)  # another font size: measured anew
    png_bytes(figs[1])
    assert laid_out.count(text) == 2
    drawn = np.asarray(figs[1].canvas.buffer_rgba()).copy()
    FigureCanvasAgg(figs[1]).draw()  # matplotlib's own canvas draws the same pixels
    assert np.array_equal(drawn, np.asarray(figs[1].canvas.buffer_rgba()))


def test_png_is_a_palette_image_without_date_or_software():
    fig = new_figure()
    fig.subplots().plot([1, 2, 3], [3, 1, 2])
    data = png_bytes(fig)
    assert data.startswith(PNG_MAGIC)
    assert chunks(data) == [b"IHDR", b"PLTE", b"pHYs", b"IDAT", b"IEND"]  # no tEXt, no tIME
    with Image.open(io.BytesIO(data)) as im:
        assert im.mode == "P" and im.size == (FIGSIZE[0] * DPI, FIGSIZE[1] * DPI)
        assert round(im.info["dpi"][0]) == DPI


def test_every_chart_of_the_book_is_a_valid_png(book):
    from pipeline.render.charts import png

    planned = planned_charts(book)
    assert len(planned) == 6
    for chart in planned:
        assert_png(png(chart.build()))


@pytest.mark.parametrize(
    ("values", "pad", "decades", "limits"),
    [
        ([1.0, 10.0], 1.0, 3.0, (0.1, 100.0)),  # one decade widened to three around its middle
        ([1.0, 10.0], 10.0, 3.0, (0.1, 100.0)),  # padded to three: as is
        ([1.0, 1e6], 2.0, 3.0, (0.5, 2e6)),
        ([5.0, 5.0], 1.0, 2.0, (0.5, 50.0)),  # one value
    ],
)
def test_log_limits_pad_and_keep_a_minimum_span(values, pad, decades, limits):
    assert log_limits(np.array(values), pad, decades) == pytest.approx(limits)


def test_axis_points_sample_a_line_every_few_pixels():
    ax = new_figure().subplots()
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 10)
    pts = axis_points(ax, np.array([0.0, 10.0, 10.0]), np.array([0.0, 0.0, 10.0]), step=6.0)
    ends = ax.transData.transform([(0, 0), (10, 0), (10, 10)])
    assert np.allclose(pts[0], ends[0]) and np.allclose(pts[-1], ends[2])
    assert any(np.allclose(p, ends[1]) for p in pts)  # the corner is kept
    gaps = np.hypot(*np.diff(pts, axis=0).T)
    assert gaps.min() > 0 and gaps.max() < 2 * 6.0  # no point twice, no stretch unsampled


def test_rgb_of_a_hex_colour():
    assert rgb("#0072B2") == (0.0, 0x72 / 255, 0xB2 / 255)
