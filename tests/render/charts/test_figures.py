"""Figures and PNGs: matplotlib Figure objects (no pyplot state), valid and sensibly sized
PNGs, the same data giving the same bytes, big runs drawn as a density map."""

from __future__ import annotations

import io

import pytest
from matplotlib.figure import Figure
from PIL import Image

import pipeline
from pipeline.render.charts import figure, png
from pipeline.render.charts.data import roofline_data
from tests.render.charts.test_data import V5E, synthetic
from tests.render.charts.test_plan import plan

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def assert_png(data: bytes, min_size=(800, 400)) -> None:
    assert data[:8] == PNG_MAGIC
    with Image.open(io.BytesIO(data)) as im:
        assert im.size[0] >= min_size[0] and im.size[1] >= min_size[1], im.size


def test_every_book_chart_is_a_valid_png_and_repeats_exactly(book):
    for planned in plan(book):
        data = planned.build()
        first = png(data)
        assert_png(first)
        assert png(data) == first, planned.chart.path


def test_chart_functions_return_figures(book):
    for fig in (
        pipeline.charts.summary(book),
        pipeline.charts.roofline(book, "tpu-v5e"),
        pipeline.charts.roofline(book, "V5E"),  # an alias, any case
        pipeline.charts.network(book, "tpu-v5e"),
        pipeline.charts.sweep(book, "tpu-v5e"),
        pipeline.charts.sweep(book, "tpu-v5e", "b"),
    ):
        assert isinstance(fig, Figure) and fig.get_axes()


def test_chart_functions_say_what_is_missing(book):
    with pytest.raises(pipeline.UnknownHardware, match="did you mean 'h100'"):
        pipeline.charts.roofline(book, "h10")
    with pytest.raises(pipeline.UnknownHardware, match="no scenario on h100 sends data"):
        pipeline.charts.network(book, "h100")
    with pytest.raises(pipeline.UnknownHardware, match="no sweep on tpu-v5e varies D"):
        pipeline.charts.sweep(book, "tpu-v5e", "D")
    with pytest.raises(pipeline.UnknownHardware, match="no sweep runs on h100"):
        pipeline.charts.sweep(book, "h100")


def test_many_points_render_as_a_density_map():
    fig = figure(roofline_data(synthetic(20_000), V5E))
    collections = [type(c).__name__ for ax in fig.get_axes() for c in ax.collections]
    assert "QuadMesh" in collections  # binned density, not 20,000 markers
    assert_png(png(roofline_data(synthetic(20_000), V5E)))
