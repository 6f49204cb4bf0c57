"""The data of a fleet chart: a fleet series' points in ranking order (fastest at the critical
batch first), each with its curve from Summary.fleet_curves and the ranking's chosen points
on it; a series of its fleet axes alone as the bars of its one ranking."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.render.charts.fleet_data import fleet_data, fleet_series
from pipeline.render.text.fleet import point_labels
from tests.helpers import ROOT, analyze_file


@pytest.fixture(scope="module")
def fleet():
    return analyze_file(ROOT / "scenarios" / "fleet.csv").summary


def test_a_line_per_fleet_point_in_ranking_order_with_the_curves_values(fleet):
    data = fleet_data(fleet.fleet, fleet.fleet_curves, "mlp_fp8")
    ranking = fleet.fleet[fleet.fleet["series"] == "mlp_fp8"]
    lead = ranking[ranking["point"] == "critical batch"].sort_values("rank")
    assert [p.label for p in data.points] == list(point_labels(lead))
    assert [p.rank for p in data.points] == [1, 2, 2, 4, 5, 6, 7, 8]  # b200, b300 tie
    assert [p.ratio for p in data.points] == pytest.approx(list(lead["ratio"]))
    assert [ln.point for ln in data.lines] == list(range(8))  # the legend's order
    curves = fleet.fleet_curves[fleet.fleet_curves["series"] == "mlp_fp8"]
    for ln, (_, row) in zip(data.lines, lead.iterrows(), strict=True):
        own = curves[curves["hardware"] == row["hardware"]].sort_values("line_value")
        np.testing.assert_array_equal(ln.x, own["line_value"].to_numpy())
        np.testing.assert_array_equal(ln.y, own["t_lower"].to_numpy())
    assert data.dim == "B" and data.guide == 256
    assert data.guide_label == "B = 256: critical batch, ranked here"
    assert data.title == "mlp_fp8: 8 chips compared as B grows"
    assert data.subtitle.startswith("At B = 256 the fastest is mi355x")


def test_the_chosen_points_sit_on_their_lines(fleet):
    data = fleet_data(fleet.fleet, fleet.fleet_curves, "mlp_fp8")
    for ln in data.lines:
        assert ln.marks == ("first", "critical batch", "last")
        np.testing.assert_array_equal(ln.mark_x, [1, 256, 4096])
        np.testing.assert_allclose(ln.mark_y, np.interp(ln.mark_x, ln.x, ln.y))
    assert data.lines[0].mark_bound == ("memory", "memory", "compute")


def test_a_series_of_fleet_axes_alone_is_its_ranking_as_bars(fleet):
    data = fleet_data(fleet.fleet, fleet.fleet_curves, "tp")
    ranking = fleet.fleet[fleet.fleet["series"] == "tp"]
    assert data.lines == () and data.guide is None
    assert [p.label for p in data.points] == list(point_labels(ranking))
    assert [p.t_lower for p in data.points] == sorted(p.t_lower for p in data.points)
    assert data.points[0].label == "b200 4 chips" and data.points[0].ratio == 1.0
    assert data.title == "tp: 4 chips × 4 chip counts ranked by time"


def test_a_colour_per_chip_and_a_style_per_precision(fleet):
    data = fleet_data(fleet.fleet, fleet.fleet_curves, "decode_fp4")
    looks = {p.label: (p.color, p.style) for p in data.points}
    assert looks["gb300 fp4"][0] == looks["gb300 bf16"][0] != looks["b200 fp4"][0]
    assert looks["gb300 fp4"][1] == looks["b200 fp4"][1] != looks["b200 bf16"][1]
    assert data.title == "decode_fp4: 4 chips × 3 precisions compared as B grows"


def test_fleet_series_in_file_order(fleet):
    assert fleet_series(fleet.fleet) == ["mlp_bf16", "mlp_fp8", "decode_fp4", "tp", "allreduce",
                                         "allreduce_rack", "allreduce_dcn"]  # fmt: skip
    assert fleet_series(fleet.fleet.head(0)) == []
