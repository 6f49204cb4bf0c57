"""Drawing a model chart: tokens/s and step time side by side on a shared log2 axis, the
points that do not fit hollow, the largest batch that fits a vertical line on both panels."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.colors import to_rgba
from matplotlib.text import Text

from pipeline.i18n import use_lang
from pipeline.render.charts import png
from pipeline.render.charts.step_sweep import model_sweep_figure
from pipeline.render.charts.step_sweep_data import model_frame, model_sweep_data
from tests.helpers import ROOT, analyze_file, analyze_rows, assert_png

SWEEP = "llama3_8b_decode_sweep"


@pytest.fixture(scope="module")
def data():
    return model_sweep_data(model_frame(analyze_file(ROOT / "scenarios" / "models.csv")), SWEEP)


def test_two_panels_sharing_a_log2_axis(data):
    fig = model_sweep_figure(data)
    rate, time = fig.axes
    assert rate.get_xscale() == time.get_xscale() == "log" and time.get_yscale() == "log"
    assert rate.get_ylabel() == "tokens per second" and rate.get_ylim()[0] == 0
    assert time.yaxis.get_major_formatter()(0.01, 0) == "10 ms"
    assert [t.get_text() for t in fig.texts][0] == data.title


def test_points_that_do_not_fit_are_hollow(data):
    rate, _ = model_sweep_figure(data).axes
    filled, hollow = rate.collections  # memory-bound, fitting then not
    white = to_rgba("white")
    assert len(filled.get_offsets()) == 6 and len(hollow.get_offsets()) == 4
    assert tuple(hollow.get_facecolors()[0]) == white != tuple(filled.get_facecolors()[0])
    np.testing.assert_array_equal(np.asarray(hollow.get_offsets())[:, 0], [64, 128, 256, 512])


def test_the_largest_batch_that_fits_is_a_vertical_line_on_both_panels(data):
    fig = model_sweep_figure(data)
    for ax in fig.axes:
        (line,) = [ln for ln in ax.get_lines() if ln.get_linestyle() == "--"]
        assert list(line.get_xdata()) == [59, 59]
    rate = fig.axes[0]
    assert "fits up to B = 59" in [t.get_text() for t in rate.texts]
    assert "B = 32: 2,155 tokens/s" in [t.get_text() for t in rate.texts]
    (legend,) = fig.legends
    assert "largest batch that fits in HBM" in [t.get_text() for t in legend.get_texts()]


def test_a_chip_per_line_and_the_png(data):
    a = analyze_rows([{"name": "fl", "op": "transformer", "model": "llama3-8b",
                       "hardware": "h100|v5e", "B": "1..256*2", "T": "1", "S": "4096"}])  # fmt: skip
    fig = model_sweep_figure(model_sweep_data(model_frame(a), "fl"))
    (legend,) = fig.legends
    texts = [t.get_text() for t in legend.get_texts()]
    assert texts[:2] == ["h100: fits up to B = 119", "tpu-v5e: fits at no batch"]
    assert_png(png(data), (1400, 700))


def _callouts(fig) -> list:
    """The 'B = 64: …' callouts of a model chart, each with its panel."""
    return [(ax, t) for ax in fig.axes for t in ax.texts if t.get_text().startswith("B = ")]


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_the_callouts_of_a_model_list_never_overlap(lang):
    # the README's model list: both lines' last fitting point is B = 64, at nearly one height
    a = analyze_rows([{"name": "ml", "op": "transformer", "model": "llama3-8b|mistral-7b",
                       "hardware": "h100", "B": "1..256*4", "T": "1", "S": "2048"}])  # fmt: skip
    with use_lang(lang):
        fig = model_sweep_figure(model_sweep_data(model_frame(a), "ml"))
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    callouts = _callouts(fig)
    assert len(callouts) == 4  # two lines, two panels

    def extent(t):  # the text's own box (an Annotation's adds its leader's)
        return Text.get_window_extent(t, renderer)

    boxes = [(ax, extent(t)) for ax, t in callouts]
    for i, (ax, box) in enumerate(boxes):
        frame = ax.get_window_extent(renderer)
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1, callouts[i][1].get_text()
        assert frame.y0 <= box.y0 and box.y1 <= frame.y1, callouts[i][1].get_text()
        others = [t for t in ax.texts if not t.get_text().startswith("B = ")]
        for other in [*(b for _, b in boxes[i + 1 :]), *map(extent, others)]:
            assert not box.overlaps(other), callouts[i][1].get_text()
    (legend,) = fig.legends
    assert not any(legend.get_window_extent(renderer).overlaps(b) for _, b in boxes)


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_a_legend_of_long_labels_stays_inside_the_figure(lang):
    """Issue 43's walk: 16 fleet points, each 'mi300x, dtype = fp8, chips = 4: fits up to
    B = 233', were cut at the figure's right edge in three columns."""
    a = analyze_rows([{"name": "dec", "op": "transformer", "model": "llama3-70b",
                       "hardware": "h100|h200|b200|mi300x", "dtype": "bf16|fp8",
                       "chips": "4|8", "shard": "N", "B": "1..64*4", "T": 1, "S": 8192}])  # fmt: skip
    with use_lang(lang):
        fig = model_sweep_figure(model_sweep_data(model_frame(a), "dec"))
    fig.canvas.draw()
    (legend,) = fig.legends
    box = legend.get_window_extent(fig.canvas.get_renderer())
    assert 0 <= box.x0 and box.x1 <= fig.bbox.width  # every label whole
    assert box.y0 >= 0 and box.y1 <= fig.axes[0].get_window_extent().y0  # under the panels
