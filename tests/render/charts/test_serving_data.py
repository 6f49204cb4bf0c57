"""The data of a serving chart (render.charts.serving_data): a line per configuration in the
ranking's order over B, the TPOT target as 1 / tpot_target tokens/s per user, the front of
the meeting points (none beats it on both axes), the cost chart cheapest first, the cap."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.render.charts import serving_data as module
from pipeline.render.charts.serving_data import priced, serving_data, serving_series
from tests.helpers import serving_frames

PRICES = {"h100": 2.5, "h200": 3.5, "b200": 5.0, "mi300x": 3.0}


@pytest.fixture(scope="module")
def frames():
    return serving_frames(prices=PRICES)


def test_a_line_per_configuration_in_ranking_order(frames):
    serving, curves = frames
    assert serving_series(serving) == ["llama3-70b", "mixtral-8x7b"]
    assert serving_series(serving.iloc[:0]) == [] and serving_series(None) == []
    data = serving_data(serving, curves, "llama3-70b")
    assert data.title == "llama3-70b: tokens/s per chip against tokens/s per user"
    assert data.subtitle == "2,048 in / 256 out · TTFT ≤ 60.0 ms, TPOT ≤ 15.0 ms"
    assert [ln.label for ln in data.lines][:3] == ["1. b200 fp8 ×4", "2. b200 fp8 ×8",
                                                  "3. mi300x fp8 ×4"]  # fmt: skip
    assert data.lines[-1].label == "h200 bf16 ×4" and data.lines[-1].best == "misses at every B"
    first = data.lines[0]
    assert first.best == "16,181/chip at B = 512"
    assert list(first.B) == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
    # x is 1 / TPOT, y B / (TPOT · chips), point by point
    tpot = (70.6e9 + first.B * 163_840 * 2176) / (4 * 8e12)
    np.testing.assert_allclose(first.x, 1 / tpot, rtol=1e-12)
    np.testing.assert_allclose(first.y, first.B / (tpot * 4), rtol=1e-12)
    assert first.meets.all() and first.fits.all()
    # a colour per chip, a style per precision and chip count: the two b200 fp8 lines differ
    assert first.color == data.lines[1].color and first.style != data.lines[1].style
    assert data.target == pytest.approx(1 / 0.015)
    assert data.target_label == "TPOT ≤ 15.0 ms: 66.7 tokens/s per user and more"


def test_the_front_is_the_meeting_points_none_beats_on_both_axes(frames):
    serving, curves = frames
    data = serving_data(serving, curves, "llama3-70b")
    mine = curves[(curves["series"] == "llama3-70b") & curves["meets_target"] & curves["fits"]]
    x = mine["tokens_per_second_per_user"].to_numpy()
    y = mine["tokens_per_second_per_chip"].to_numpy()
    assert len(data.front_x) >= 2 and np.all(np.diff(data.front_x) > 0)
    for fx, fy in zip(data.front_x, data.front_y, strict=True):  # no meeting point beats it
        assert not np.any((x >= fx) & (y >= fy) & ((x > fx) | (y > fy)))
    dominated = (x[:, None] <= data.front_x) & (y[:, None] <= data.front_y)
    assert dominated.any(axis=1).all()  # and every meeting point is at or under the front
    assert data.front_B[-1] == 1  # the fastest for each user: one request at a time


def test_the_cost_chart_draws_dollars_cheapest_first(frames):
    serving, curves = frames
    assert priced(curves) and not priced(curves.drop(columns="usd_per_million_tokens"))
    data = serving_data(serving, curves, "llama3-70b", cost=True)
    assert data.cost and data.y_label == "USD per million tokens (cheaper below)"
    assert data.lines[0].label == "1. mi300x fp8 ×4"
    assert data.lines[0].best == r"\$0.0777 per M tokens at B = 512"  # never mathtext
    # the same configuration keeps its colour and style on both charts
    by_label = {ln.label.split(". ")[-1]: (ln.color, ln.style)
                for ln in serving_data(serving, curves, "llama3-70b").lines}  # fmt: skip
    assert all(by_label[ln.label.split(". ")[-1]] == (ln.color, ln.style) for ln in data.lines)
    # the front keeps the cheapest point at each speed: lower to the left
    assert np.all(np.diff(data.front_y) > 0)


def test_the_cap_counts_the_configurations_left_out(frames, monkeypatch):
    serving, curves = frames
    monkeypatch.setattr(module, "SERVING_LINES", 5)
    data = serving_data(serving, curves, "mixtral-8x7b")
    assert len(data.lines) == 5
    assert data.more == "… and 11 more configurations; see the Serving sheet"


def test_no_target_no_target_line(frames):
    serving, curves = frames
    serving = serving.assign(tpot_target=float("nan"))
    data = serving_data(serving, curves, "llama3-70b")
    assert data.target is None and data.target_label == ""
