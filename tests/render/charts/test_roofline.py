"""Drawing a roofline: log-log axes, a slope and a ceiling per peak, each ridge said, points
by bound (counts in the legend), names placed; big runs as a density map; derated roofs
dashed; rows the roofs do not describe said in a note."""

from __future__ import annotations

from pipeline.render.charts.data import network_data, roofline_data
from pipeline.render.charts.roofline import roofline_figure
from tests.helpers import analyze_rows, chart_rows, chip


def texts(fig) -> list[str]:
    return [t.get_text() for ax in fig.axes for t in ax.texts] + [t.get_text() for t in fig.texts]


def legend(fig) -> list[str]:
    return [t.get_text() for t in fig.axes[0].get_legend().get_texts()]


def test_v5e_roofline_draws_the_books_roofs_ridges_and_counts(book):
    data = roofline_data(
        chart_rows(book, "tpu-v5e"), chip(book, "tpu-v5e"), book.summary.roofs["tpu-v5e"].hbm, 1
    )
    fig = roofline_figure(data)
    (ax,) = fig.axes
    assert ax.get_xscale() == ax.get_yscale() == "log"
    assert ax.get_xlabel() == data.x_label and ax.get_ylabel() == data.y_label
    shown = texts(fig)
    for text in (
        "HBM 820 GB/s",
        "bf16 peak 197 TFLOP/s",
        "int8 peak 394 TFLOP/s",
        "ridge 240 FLOP/byte (bf16)",
        "ridge 480 FLOP/byte (int8)",
        data.title,
    ):
        assert text in shown, text  # fmt: skip
    assert "1 row gives its own peak, HBM or link numbers" in " ".join(shown)
    assert legend(fig)[:3] == ["compute-bound (666)", "memory-bound (365)", "network-bound (1)"]
    assert legend(fig)[-1] == "sweep: q3_D4096, q3_D1024"
    assert {"dot_product", "q4_batched_int8"} <= set(shown)  # named points
    lo, hi = ax.get_xlim()
    assert lo < min(data.points.x) and max(data.points.x) < hi  # every point on the chart
    ylo, yhi = ax.get_ylim()
    assert ylo < min(data.points.y) and 1.97e14 * 2 < yhi  # room for the ceiling labels


def test_network_roofline_has_the_link_slope(book):
    data = network_data(
        chart_rows(book, "tpu-v5e"), chip(book, "tpu-v5e"), book.summary.roofs["tpu-v5e"].network
    )
    fig = roofline_figure(data)
    assert "ICI 45.0 GB/s one-way" in texts(fig)
    assert fig.axes[0].get_xlabel() == data.x_label != "Arithmetic intensity (FLOP/byte)"


def test_many_points_render_as_a_density_map():
    rows = [{"name": "wide", "op": "matmul", "B": "1..6000", "D": 98304, "F": 98304,
             "hardware": "v5e"}]  # fmt: skip
    a = analyze_rows(rows)
    fig = roofline_figure(
        roofline_data(chart_rows(a, "tpu-v5e"), chip(a, "tpu-v5e"), a.summary.roofs["tpu-v5e"].hbm)
    )
    collections = [type(c).__name__ for ax in fig.get_axes() for c in ax.collections]
    assert "QuadMesh" in collections  # binned density, not 20,000 markers
    assert legend(fig)[-1] == "lighter = fewer scenarios"
    assert any(t.startswith("does not fit in HBM (") for t in legend(fig))


def test_derated_roof_is_dashed_and_collective_rows_are_said(mix):
    data = roofline_data(
        chart_rows(mix, "tpu-v5e"), chip(mix, "tpu-v5e"), mix.summary.roofs["tpu-v5e"].hbm
    )
    fig = roofline_figure(data)
    dashed = [ln for ln in fig.axes[0].get_lines() if ln.get_linestyle() == "--"]
    assert len(dashed) == 2  # the derated slope and its one ceiling
    (peak,) = {float(y) for y in dashed[1].get_ydata()}
    assert peak == 0.9 * 1.97e14
    notes = " ".join(texts(fig))
    assert "(1 row)" in notes and "7 collective rows not on a roofline" in notes
