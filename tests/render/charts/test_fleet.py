"""Drawing a fleet chart: time against the swept dim, log-log, a line per fleet point with its
legend in ranking order and the critical batch guided; bars of the ranking for a series of
fleet axes alone, fastest on top; readable with 16 points and more."""

from __future__ import annotations

import pytest

from pipeline.render.charts import png
from pipeline.render.charts.fleet import fleet_figure
from pipeline.render.charts.fleet_data import fleet_data
from tests.helpers import ROOT, analyze_file, analyze_rows, assert_png


@pytest.fixture(scope="module")
def fleet():
    return analyze_file(ROOT / "scenarios" / "fleet.csv").summary


def drawn(summary, series: str):
    return fleet_figure(fleet_data(summary.fleet, summary.fleet_curves, series))


def legend_of(fig) -> list[str]:
    (legend,) = fig.legends
    return [t.get_text() for t in legend.get_texts()]


def test_lines_of_time_with_the_legend_in_ranking_order(fleet):
    fig = drawn(fleet, "mlp_fp8")
    (ax,) = fig.axes
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    legend = legend_of(fig)
    assert legend[0] == "1. mi355x  30.5 µs (1.00×)"
    # b200 and b300 tie (the same fp8 peak and HBM): one rank
    assert [int(t.split(".")[0]) for t in legend[:8]] == [1, 2, 2, 4, 5, 6, 7, 8]
    assert legend[8:] == ["compute-bound at a ranked point", "memory-bound at a ranked point"]
    assert "B = 256: critical batch, ranked here" in [t.get_text() for t in ax.texts]
    assert ax.yaxis.get_major_formatter()(1e-4, 0) == "100 µs"
    drawn_lines = [ln for ln in ax.get_lines() if ln.get_label() in legend]
    assert len(drawn_lines) == 8
    texts = [t.get_text() for t in fig.texts]
    assert texts[0] == "mlp_fp8: 8 chips compared as B grows"


def test_bars_fastest_on_top_tinted_by_bound(fleet):
    fig = drawn(fleet, "tp")
    (ax,) = fig.axes
    ticks = sorted(ax.get_yticklabels(), key=lambda t: -t.get_position()[1])
    assert [t.get_text() for t in ticks][:3] == ["1. b200 4 chips", "2. b200 2 chips",
                                                 "3. b200 8 chips"]  # fmt: skip
    labels = [t.get_text() for t in ax.texts]
    assert labels[:2] == ["1.00×  391 µs", "1.09×  428 µs"]
    assert legend_of(fig) == ["compute-bound", "network-bound"]
    colors = {tuple(b.get_facecolor()) for b in ax.patches}
    assert len(colors) == 2


def test_a_long_subtitle_breaks_at_its_semicolon(fleet):
    fig = drawn(fleet, "decode_fp4")
    texts = [t.get_text() for t in fig.texts]
    assert (
        texts[1]
        == "At B = 256 gb300 fp4 and mi355x fp4 tie as the fastest, 15.3 µs (memory-bound);"
    )
    assert texts[2].startswith("b200 fp4 is 1.04× slower")


def test_sixteen_points_and_more_stay_readable():
    chips = "h100|h200|b200|b300|mi300x|mi325x|mi355x|gaudi3|tpu-v5e|tpu-v6e"
    rows = [{"name": "many", "op": "matmul", "B": "1..1024*2", "D": 8192, "F": 8192,
             "hardware": chips, "dtype": "bf16|fp8"}]  # fmt: skip
    s = analyze_rows(rows).summary
    fig = drawn(s, "many")
    (ax,) = fig.axes
    (legend,) = fig.legends
    assert legend._ncols == 2 and len(legend_of(fig)) >= 20
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    below = legend.get_window_extent(renderer).y1
    assert below < ax.get_tightbbox(renderer).y0  # the legend under the axes, not on them
    assert_png(png(fleet_data(s.fleet, s.fleet_curves, "many")), (1200, 1000))
