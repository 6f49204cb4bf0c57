"""Roofline chart data: the roofs, ridges, points and labels each roofline draws, against the
book; collective rows left out, derated roofs added."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.render.charts.data import network_data, roofline_data
from tests.helpers import analyze_rows, chart_rows, chip


def test_v5e_roofline_data(book):
    data = roofline_data(
        chart_rows(book, "tpu-v5e"), chip(book, "tpu-v5e"), book.summary.roofs["tpu-v5e"].hbm, 1
    )
    assert [(s.bandwidth, s.label) for s in data.slopes] == [(8.2e11, "HBM 820 GB/s")]
    assert [(c.family, c.peak, c.label) for c in data.ceilings] == [
        ("bf16", 1.97e14, "bf16 peak 197 TFLOP/s"),
        ("int8", 3.94e14, "int8 peak 394 TFLOP/s"),
    ]
    ridges = {r.family: r.x for r in data.ridges}
    assert ridges["bf16"] == pytest.approx(240.24, abs=0.01)  # book: 1.97e14 / 8.2e11 = 240
    assert ridges["int8"] == pytest.approx(480.49, abs=0.01)
    # Q3 sweeps: D=F=4096 compute-bound from B=137 (376 of 512 rows), D=F=1024 from B=227
    # (286); plus two_chip_D9216, q1 twice and q2. Memory: the rest of the sweeps (136 + 226),
    # v5e_critical_intensity, dot_product, q4. Network: two_chip_D8192.
    assert data.counts == {"compute": 666, "memory": 365, "network": 1}
    p = data.points
    assert [int((p.bound == k).sum()) for k in range(3)] == [666, 365, 1]
    assert len(p.x) == len(p.y) == 1032 and p.hidden == 0
    assert data.not_fitting == 0 and data.overridden == 1
    assert sorted(lb.text for lb in data.labels) == [
        "dot_product", "q1_int8_book_constants", "q1_int8_catalog", "q2_int8_weights_bf16",
        "q4_batched_int8", "two_chip_D8192", "two_chip_D9216", "v5e_critical_intensity",
    ]  # fmt: skip
    assert sorted(t.text for t in data.trails) == ["q3_D1024", "q3_D4096"]


def test_points_sit_on_or_under_the_roofs(book):
    data = roofline_data(
        chart_rows(book, "tpu-v6e"), chip(book, "tpu-v6e"), book.summary.roofs["tpu-v6e"].hbm
    )
    (ceiling,) = data.ceilings
    assert ceiling.peak == 9.2e14 and data.ridges[0].x == pytest.approx(575)
    p = data.points
    roof = np.minimum(ceiling.peak, p.x * data.slopes[0].bandwidth)
    assert np.all(p.y <= roof * (1 + 1e-12))


def test_h100_ridge_is_the_book_critical_intensity(book):
    data = roofline_data(
        chart_rows(book, "h100"), chip(book, "h100"), book.summary.roofs["h100"].hbm
    )
    assert data.ridges[0].x == pytest.approx(295.2, abs=0.1)  # 9.89e14 / 3.35e12
    assert data.counts == {"compute": 2, "memory": 0, "network": 0}
    assert (
        network_data(
            chart_rows(book, "h100"), chip(book, "h100"), book.summary.roofs["h100"].network
        )
        is None
    )


def test_network_roofline_shows_the_d_8755_boundary(book):
    data = network_data(
        chart_rows(book, "tpu-v5e"), chip(book, "tpu-v5e"), book.summary.roofs["tpu-v5e"].network
    )
    assert [(s.bandwidth, s.label) for s in data.slopes] == [(4.5e10, "ICI 45.0 GB/s one-way")]
    (ridge,) = data.ridges
    assert ridge.x == pytest.approx(4377.8, abs=0.1)  # book: D/2 > 1.97e14 / 4.5e10 = 4377
    p = data.points
    order = np.argsort(p.x)
    assert p.x[order] == pytest.approx([4096, 4608])  # D/2 for D = 8192 and 9216
    assert [int(b) for b in p.bound[order]] == [2, 0]  # network-bound, then compute-bound
    assert data.counts == {"compute": 1, "memory": 0, "network": 1}


@pytest.mark.parametrize(("singles", "labelled"), [(20, 20), (21, 0)])
def test_past_twenty_named_points_none_is_labelled(singles, labelled):
    rows = [{"name": f"r{i}", "op": "matmul", "B": i + 1, "D": 4096, "F": 4096,
             "hardware": "v5e"} for i in range(singles)]  # fmt: skip
    a = analyze_rows(rows)
    data = roofline_data(
        chart_rows(a, "tpu-v5e"), chip(a, "tpu-v5e"), a.summary.roofs["tpu-v5e"].hbm
    )
    assert len(data.labels) == labelled and data.counts["memory"] == singles


@pytest.mark.parametrize(("points", "trails"), [(5_000, 1), (5_001, 0)])
def test_a_sweep_past_the_scatter_limit_has_no_trail(points, trails):
    rows = [{"name": "wide", "op": "matmul", "B": f"1..{points}", "D": 4096, "F": 4096,
             "hardware": "v5e"}]  # fmt: skip
    a = analyze_rows(rows)
    data = roofline_data(
        chart_rows(a, "tpu-v5e"), chip(a, "tpu-v5e"), a.summary.roofs["tpu-v5e"].hbm
    )
    assert len(data.trails) == trails and data.labels == ()
    assert sum(data.counts.values()) == points


def test_roofline_leaves_out_collective_rows_and_draws_the_derated_roof(mix):
    data = roofline_data(
        chart_rows(mix, "tpu-v5e"), chip(mix, "tpu-v5e"), mix.summary.roofs["tpu-v5e"].hbm
    )
    assert len(data.points.x) == 2 and data.collectives == 7
    (roof,) = data.derated
    assert roof.bandwidth == pytest.approx(0.85 * 8.2e11)
    assert roof.peaks == pytest.approx((0.9 * 1.97e14,))
    assert roof.rows == 1 and "compute 90.0%, HBM 85.0%" in roof.label
    assert roof.ridges == (roof.peaks[0] / roof.bandwidth,)  # where its dashed lines meet
    assert data.title.endswith("2 scenarios")


def test_a_fleet_series_draws_one_trail_per_dtype_and_chip_count():
    """A series over bf16|fp8 is two trails on a chip's roofline, each through its own roof,
    not one zig-zagging between the two (issue 30)."""
    rows = [{"name": "s", "op": "matmul", "B": "1..4096*2", "D": 8192, "F": 8192,
             "hardware": "h100", "dtype": "bf16|fp8"}]  # fmt: skip
    a = analyze_rows(rows)
    data = roofline_data(chart_rows(a, "h100"), chip(a, "h100"), a.summary.roofs["h100"].hbm)
    assert [t.text for t in data.trails] == ["s (bf16)", "s (fp8)"]
    for t in data.trails:
        assert len(t.x) == 13 and np.all(np.diff(t.x) > 0)  # each its own 13 batch sizes
