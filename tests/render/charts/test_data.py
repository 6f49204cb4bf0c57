"""Chart data: the roofs, ridges, points and sweep lines each chart draws, against the book."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import pipeline
from pipeline.render.charts.data import network_data, roofline_data
from pipeline.render.charts.style import BOUND_COLORS
from pipeline.render.charts.summary_data import summary_data
from pipeline.render.charts.sweep_data import pages, sweep_data, sweep_lines, swept_dims

V5E = {"name": "tpu-v5e", "peak_bf16": 1.97e14, "hbm_bandwidth": 8.2e11, "hbm_capacity": 1.6e10}


def chip(analysis, name: str) -> dict:
    return next(h for h in analysis.hardware if h["name"] == name)


def rows_of(analysis, name: str) -> pd.DataFrame:
    results = analysis.results
    return results[results["hardware"] == name]


def book_sweep(book):
    (((_, dim), lines),) = [(k, v) for k, v in sweep_lines(book.results).items()]
    (page,) = pages(lines)
    return sweep_data(book.results, chip(book, "tpu-v5e"), dim, page, 1, 1)


def test_v5e_roofline_data(book):
    data = roofline_data(rows_of(book, "tpu-v5e"), chip(book, "tpu-v5e"), 1)
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
    data = roofline_data(rows_of(book, "tpu-v6e"), chip(book, "tpu-v6e"))
    (ceiling,) = data.ceilings
    assert ceiling.peak == 9.2e14 and data.ridges[0].x == pytest.approx(575)
    p = data.points
    roof = np.minimum(ceiling.peak, p.x * data.slopes[0].bandwidth)
    assert np.all(p.y <= roof * (1 + 1e-12))


def test_h100_ridge_is_the_book_critical_intensity(book):
    data = roofline_data(rows_of(book, "h100"), chip(book, "h100"))
    assert data.ridges[0].x == pytest.approx(295.2, abs=0.1)  # 9.89e14 / 3.35e12
    assert data.counts == {"compute": 2, "memory": 0, "network": 0}
    assert network_data(rows_of(book, "h100"), chip(book, "h100")) is None


def test_network_roofline_shows_the_d_8755_boundary(book):
    data = network_data(rows_of(book, "tpu-v5e"), chip(book, "tpu-v5e"))
    assert [(s.bandwidth, s.label) for s in data.slopes] == [(4.5e10, "ICI 45.0 GB/s one-way")]
    (ridge,) = data.ridges
    assert ridge.x == pytest.approx(4377.8, abs=0.1)  # book: D/2 > 1.97e14 / 4.5e10 = 4377
    p = data.points
    order = np.argsort(p.x)
    assert p.x[order] == pytest.approx([4096, 4608])  # D/2 for D = 8192 and 9216
    assert [int(b) for b in p.bound[order]] == [2, 0]  # network-bound, then compute-bound
    assert data.counts == {"compute": 1, "memory": 0, "network": 1}


def test_q3_sweep_matches_the_book_figure(book):
    """Book Q3: both reach peak 1.97e14; D = F = 1024 needs almost twice the batch."""
    data = book_sweep(book)
    assert data.dim == "B" and data.log_x is False
    assert [c.peak for c in data.ceilings] == [1.97e14]
    lines = {ln.series: ln for ln in data.lines}
    assert set(lines) == {"q3_D1024", "q3_D4096"}
    for ln in lines.values():
        assert list(ln.x) == list(range(1, 513))
        assert ln.y.max() == pytest.approx(1.97e14)
        assert np.all(np.diff(ln.y) >= -1e-9 * ln.y.max())  # never falls as B grows
    big, small = lines["q3_D4096"].critical, lines["q3_D1024"].critical
    assert (big, small) == (137, 227)
    assert 1.5 < small / big < 2.0  # "almost doubles the critical batch size"
    assert lines["q3_D4096"].critical_y == pytest.approx(1.97e14)


def test_summary_data_counts_bounds_per_hardware(book):
    data = summary_data(book.summary.per_hardware)
    assert data.hardware == ("h100", "tpu-v5e", "tpu-v6e")
    assert data.counts == {"compute": (2, 666, 1), "memory": (0, 365, 0), "network": (0, 1, 0)}
    assert data.title == "Which limit binds: 1,035 scenarios by hardware"


def test_bound_colors_are_one_fixed_trio():
    assert set(BOUND_COLORS) == {"compute", "memory", "network"}
    assert len(set(BOUND_COLORS.values())) == 3


@pytest.mark.parametrize(
    "name, series, dims",
    [
        ("q3[B=128]", "q3", ("B",)),
        ("q3[B=128,D=4096]", "q3", ("B", "D")),
        ("a[x][B=1]", "a[x]", ("B",)),
        ("plain", "plain", ()),
        ("q3[b=1]", "q3", ()),
    ],
)
def test_swept_dims(name, series, dims):
    assert swept_dims(name, series) == dims


def test_two_dim_sweep_gives_one_line_per_other_value(catalog):
    rows = [{"name": "grid", "op": "matmul", "B": "1|2|4", "D": "128|256", "F": 64,
             "hardware": "v5e"}]  # fmt: skip
    results = pipeline.analyze(rows, hardware=catalog).results
    (lines,) = sweep_lines(results).values()
    data = sweep_data(results, V5E, "B", lines, 1, 1)
    assert [ln.label for ln in data.lines] == ["grid (D=128)", "grid (D=256)"]
    assert all(list(ln.x) == [1, 2, 4] for ln in data.lines)


def test_more_than_ten_sweep_lines_make_pages(catalog):
    rows = [{"name": f"s{i:02d}", "op": "matmul", "B": "1|2|4", "D": 128 * (i + 1), "F": 128,
             "hardware": "v5e"} for i in range(12)]  # fmt: skip
    results = pipeline.analyze(rows, hardware=catalog).results
    (lines,) = sweep_lines(results).values()
    assert [len(p) for p in pages(lines)] == [10, 2]


def synthetic(n: int, seed: int = 0) -> pd.DataFrame:
    """A results-shaped frame of n single-chip rows on one chip, a tenth not fitting HBM."""
    rng = np.random.default_rng(seed)
    peak, bw = 1.97e14, 8.2e11
    intensity = 10 ** rng.uniform(-1, 5, n)
    attainable = np.minimum(peak, intensity * bw) * np.where(rng.random(n) < 0.05, 0.3, 1.0)
    bound = np.where(intensity * bw > peak, "compute", "memory")
    bound[attainable < np.minimum(peak, intensity * bw) * 0.5] = "network"
    names = [f"s{i}" for i in range(n)]
    return pd.DataFrame(
        {
            "name": names, "series": names, "hardware": "tpu-v5e", "chips": 1,
            "compute_dtype": "bf16", "flops_per_chip": intensity * 1e6, "network_bytes": 0.0,
            "peak_flops": peak, "hbm_bandwidth": bw, "intensity": intensity,
            "attainable_flops": attainable, "bound": bound,
            "fits": pd.array(rng.random(n) > 0.1, dtype="boolean"),
        }
    )  # fmt: skip


def test_many_points_have_no_labels(tmp_path):
    results = synthetic(20_000)
    data = roofline_data(results, V5E)
    assert data.labels == () and data.trails == ()
    assert sum(data.counts.values()) == 20_000
    assert data.not_fitting == int((~results["fits"]).sum())


def test_chip_missing_from_the_catalog_uses_the_rows_numbers():
    results = synthetic(50).assign(hardware="my-chip")
    data = roofline_data(results, {"name": "my-chip", "hbm_bandwidth": None})
    assert data.slopes[0].bandwidth == 8.2e11
    assert data.ceilings[0].peak == 1.97e14 and data.ceilings[0].source == "rows"
