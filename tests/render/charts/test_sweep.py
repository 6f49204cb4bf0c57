"""Drawing a sweep chart: the book's Q3 figure (a line per series, where each turns
compute-bound marked and said in the legend), a collective's time against its bytes (log-log,
its latency knee), points that do not fit in HBM hollow."""

from __future__ import annotations

import numpy as np

from pipeline.render.charts.style import ROOF_COLOR, rgb
from pipeline.render.charts.sweep import sweep_figure
from pipeline.render.charts.sweep_data import pages, sweep_data
from pipeline.summary.turns import sweep_lines
from tests.helpers import analyze_rows, chart_rows, chip


def drawn(analysis, hardware: str, dim: str):
    """The first page of the chip's sweep of `dim`, drawn."""
    rows = chart_rows(analysis)
    (page, *_) = pages(sweep_lines(rows)[(hardware, dim)])
    return sweep_figure(
        sweep_data(
            rows, chip(analysis, hardware), analysis.summary.roofs[hardware], dim, page, 1, 1
        )
    )


def legend_of(fig) -> list[str]:
    (legend,) = fig.legends
    return [t.get_text() for t in legend.get_texts()]


def texts_of(ax) -> list[str]:
    return [t.get_text() for t in ax.texts]


def test_q3_figure_marks_where_each_line_turns_compute_bound(book):
    fig = drawn(book, "tpu-v5e", "B")
    (ax,) = fig.axes
    assert ax.get_xscale() == "linear" and ax.get_ylim()[0] == 0
    assert sorted(legend_of(fig)) == [
        "q3_D1024: compute-bound from B = 227",
        "q3_D4096: compute-bound from B = 137",
    ]
    assert {"B = 137", "B = 227", "bf16 peak 197 TFLOP/s"} <= set(texts_of(ax))
    dashed = [ln for ln in ax.get_lines() if ln.get_linestyle() == "--"]
    assert [tuple(ln.get_ydata()) for ln in dashed] == [(1.97e14, 1.97e14)]  # the ceiling
    assert dashed[0].get_color() == ROOF_COLOR
    series = [ln for ln in ax.get_lines() if ln.get_label() in legend_of(fig)]
    assert sorted(len(ln.get_xdata()) for ln in series) == [512, 512]


def test_collective_time_sweep_is_log_log_with_its_knee(mix):
    fig = drawn(mix, "tpu-v5e", "bytes")
    (ax,) = fig.axes
    assert ax.get_yscale() == "log" and ax.get_xscale() == "log"
    assert legend_of(fig) == ["ag: latency-bound below 720 kB (45.0 kB per chip)"]
    assert "knee 720 kB" in texts_of(ax)
    (line,) = [ln for ln in ax.get_lines() if ln.get_label() == legend_of(fig)[0]]
    x = np.asarray(line.get_xdata())
    assert 720e3 in x  # the corner of max(floor, V / W) drawn, not cut by the 10x steps


def test_points_that_do_not_fit_are_hollow_and_said():
    rows = [{"name": "huge", "op": "matmul", "B": "1|2|4", "D": 98304, "F": 98304,
             "hardware": "v5e"}]  # fmt: skip
    a = analyze_rows(rows)
    assert not a.results["fits"].any()  # 98304^2 bf16 weights: 19.3 GB, over 16 GB
    fig = drawn(a, "tpu-v5e", "B")
    assert legend_of(fig)[-1] == "does not fit in HBM"
    (ax,) = fig.axes
    hollow = [c for c in ax.collections if len(c.get_offsets())]
    assert len(hollow) == 1 and len(hollow[0].get_offsets()) == 3
    assert hollow[0].get_facecolors().size == 0  # unfilled
    assert tuple(hollow[0].get_edgecolors()[0][:3]) == rgb("#0072B2")  # the line's colour
