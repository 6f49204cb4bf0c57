"""Charts of collectives and derated rows: the message-size sweep with its latency knee (the
book's 45 kB per chip on v5e), rooflines without collective rows, dashed derated roofs."""

from __future__ import annotations

import pytest
from matplotlib.figure import Figure

import pipeline
from pipeline.render.charts import figure, png
from pipeline.render.charts.data import roofline_data
from pipeline.render.charts.plan import plan_charts
from pipeline.render.charts.sweep_data import pages, sweep_data, sweep_lines
from tests.render.charts.test_data import chip, rows_of
from tests.render.charts.test_figures import assert_png

MIX = [
    {"name": "mm", "op": "matmul", "B": "4096", "D": "8192", "F": "8192", "hardware": "v5e"},
    {"name": "mm_derated", "op": "matmul", "B": "4096", "D": "8192", "F": "8192",
     "hardware": "v5e", "compute_efficiency": "0.9", "hbm_efficiency": "0.85"},
    {"name": "ag", "op": "all_gather", "bytes": "1000..1000000000*10", "chips": "16",
     "hardware": "v5e"},
    {"name": "ar", "op": "all_reduce", "bytes": "1000..1000000000*10", "chips": "8",
     "hardware": "h100"},
]  # fmt: skip


@pytest.fixture(scope="module")
def mix(catalog):
    analysis = pipeline.analyze(MIX, hardware=catalog)
    assert not analysis.problem_list
    return analysis


def test_message_size_sweep_marks_the_v5e_knee_at_45_kB_per_chip(mix):
    lines = sweep_lines(mix.results)
    assert set(lines) == {("tpu-v5e", "bytes"), ("h100", "bytes")}
    (page,) = pages(lines[("tpu-v5e", "bytes")])
    data = sweep_data(mix.results, chip(mix, "tpu-v5e"), "bytes", page, 1, 1)
    assert data.measure == "time" and data.log_x
    (line,) = data.lines
    # book: under 4.5e10 * 1e-6 = 45 kB per chip is latency-bound; 16 chips: V = 720 kB
    assert line.critical / 16 == pytest.approx(45e3, rel=1e-9)
    assert line.critical_y == pytest.approx(8e-6, rel=1e-12)  # 1 us x 16 / 2
    assert "45.0 kB per chip" in line.reach
    assert list(line.x) == [10.0**k for k in range(3, 10)]


def test_h100_allreduce_knee_uses_the_nvlink_latency_and_two_phases(mix):
    (page,) = pages(sweep_lines(mix.results)[("h100", "bytes")])
    (line,) = sweep_data(mix.results, chip(mix, "h100"), "bytes", page, 1, 1).lines
    floor = 2 * 0.6e-6 * 8 / 2  # two phases of 600 ns x N / 2
    assert line.critical_y == pytest.approx(floor, rel=1e-12)
    # past the floor: 2 V (N - 1) / (N W) = floor
    assert line.critical == pytest.approx(floor * 8 * 450e9 / (2 * 7), rel=1e-9)


def test_roofline_leaves_out_collective_rows_and_draws_the_derated_roof(mix):
    data = roofline_data(rows_of(mix, "tpu-v5e"), chip(mix, "tpu-v5e"))
    assert len(data.points.x) == 2 and data.collectives == 7
    (roof,) = data.derated
    assert roof.bandwidth == pytest.approx(0.85 * 8.2e11)
    assert roof.peaks == pytest.approx((0.9 * 1.97e14,))
    assert roof.rows == 1 and "compute 90.0%, HBM 85.0%" in roof.label
    assert data.title.endswith("2 scenarios")


def test_a_chip_with_only_collectives_has_no_roofline_but_a_time_sweep(mix):
    s = mix.summary
    charts = [p.chart for p in plan_charts(mix.results, list(mix.hardware), s.per_hardware, {})]
    kinds = {(c.kind, c.hardware) for c in charts}
    assert ("roofline", "h100") not in kinds and ("roofline", "tpu-v5e") in kinds
    assert not any(c.kind == "network" for c in charts)  # no op with FLOPs communicates
    titles = [c.title for c in charts if c.kind == "sweep"]
    assert titles == ["h100: collective time vs bytes", "tpu-v5e: collective time vs bytes"]
    with pytest.raises(pipeline.UnknownHardware, match="collectives only"):
        pipeline.charts.roofline(mix, "h100")


def test_time_sweep_and_derated_roofline_render(mix):
    fig = pipeline.charts.sweep(mix, "v5e", "bytes")
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert ax.get_yscale() == "log" and ax.get_xscale() == "log"
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == ["ag: latency-bound below 720 kB (45.0 kB per chip)"]
    roof = roofline_data(rows_of(mix, "tpu-v5e"), chip(mix, "tpu-v5e"))
    fig = figure(roof)
    dashed = [ln for ln in fig.axes[0].get_lines() if ln.get_linestyle() == "--"]
    assert len(dashed) == 2  # the derated slope and its one ceiling
    assert_png(png(roof))
