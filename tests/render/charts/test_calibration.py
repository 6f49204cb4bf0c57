"""Drawing the calibration chart: predicted against measured time, the roofline floor
(before) and the calibrated estimate (after) side by side on the same log-log axes with the
line predicted = measured, a colour per chip x op kind, each panel's mean error."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_hex

from pipeline.calibration.estimate import estimate, op_kinds, relative_errors
from pipeline.calibration.fit import fit
from pipeline.render.charts.calibration import (
    OTHER_COLOR,
    SHOWN_GROUPS,
    calibration_chart_data,
    calibration_figure,
)
from pipeline.render.charts.style import png_bytes
from tests.helpers import analyze_rows, assert_png


def measured_rows() -> list[dict]:
    """Matmuls and custom ops on h100 and tpu-v5e, a spread of sizes, and one AllGather on
    h100: a group too small to fit, so its row is not calibrated."""
    rows = []
    for hw in ("h100", "tpu-v5e"):
        for b in np.unique(np.geomspace(1, 8192, 16).astype(int)):
            for d in (1024, 8192):
                rows.append({"name": f"mm-{hw}-{b}-{d}", "op": "matmul", "B": int(b), "D": d,
                             "F": 4096, "hardware": hw, "dtype": "bf16"})  # fmt: skip
        for f in np.geomspace(1e6, 1e12, 10):
            for v in (10**5, 10**9):
                rows.append({"name": f"c-{hw}-{f:.0f}-{v}", "op": "custom", "flops": round(f),
                             "bytes": v, "hardware": hw, "dtype": "bf16"})  # fmt: skip
    rows.append({"name": "ag", "op": "all_gather", "bytes": 10**8, "chips": 8,
                 "hardware": "h100", "dtype": "bf16"})  # fmt: skip
    return rows


@pytest.fixture(scope="module")
def measured() -> pd.DataFrame:
    """The rows' results with a synthetic measured time: 80 % of the floor's speed, 2 µs of
    overhead, 2 % noise."""
    results = analyze_rows(measured_rows(), strict=True).results
    noise = 1 + 0.02 * np.random.default_rng(0).standard_normal(len(results))
    return results.assign(measured_seconds=(results["t_lower"] / 0.8 + 2e-6) * noise)


@pytest.fixture(scope="module")
def calibrated(measured):
    calibration = fit(measured)
    t_estimate, _ = estimate(measured, calibration)
    return calibration, t_estimate


@pytest.fixture(scope="module")
def data(measured, calibrated):
    calibration, t_estimate = calibrated
    errors = (calibration.error_before, calibration.error_after)  # the fit's, never redone
    return calibration_chart_data(measured, t_estimate, op_kinds(measured), errors)


def legend_of(fig) -> list[str]:
    (legend,) = fig.legends
    return [t.get_text() for t in legend.get_texts()]


def test_the_data_are_the_rows_their_groups_and_the_errors_of_the_calibration(
    measured, calibrated, data
):
    calibration, t_estimate = calibrated
    assert len(data.measured) == len(measured) and data.left_out == 0
    np.testing.assert_array_equal(data.t_lower, measured["t_lower"].to_numpy())
    assert data.group_names == (
        "h100 matmul", "h100 custom", "h100 all_gather", "tpu-v5e matmul", "tpu-v5e custom"
    )  # fmt: skip
    names = np.array(data.group_names)[data.group]
    expected = measured["hardware"].astype(str).to_numpy() + " " + op_kinds(measured)
    np.testing.assert_array_equal(names, expected.astype(str))
    # the AllGather's group is too small to fit: its row has no estimate
    assert data.not_calibrated == 1 and np.isnan(data.t_estimate[names == "h100 all_gather"]).all()
    # the errors the calibration states, over the rows drawn as calibrated
    done = np.isfinite(t_estimate)
    mean = relative_errors(t_estimate[done], measured["measured_seconds"].to_numpy()[done]).mean()
    assert data.error_after == pytest.approx(mean)
    assert 0.15 < data.error_before and data.error_after < 0.03
    assert "from 32.9% to 1.4%" in data.subtitle


@pytest.mark.filterwarnings("error")
def test_before_and_after_on_the_same_log_log_axes_with_the_line_and_the_errors(data):
    fig = calibration_figure(data)
    before, after = fig.axes
    for ax in (before, after):
        assert ax.get_xscale() == ax.get_yscale() == "log"
        assert ax.get_xlim() == ax.get_ylim() == before.get_xlim()
        (line,) = [ln for ln in ax.get_lines() if ln.get_label() == "predicted = measured"]
        assert line.get_linestyle() == "--"
        np.testing.assert_allclose(line.get_xdata(), ax.get_xlim())
        np.testing.assert_allclose(line.get_ydata(), ax.get_ylim())
        assert ax.xaxis.get_major_formatter()(1e-4, 0) == "100 µs"
        assert ax.yaxis.get_major_formatter()(1e-3, 0) == "1 ms"
    assert before.get_title(loc="left") == "Before: the roofline floor"
    assert after.get_title(loc="left") == "After: the calibrated estimate"
    before_error = f"mean error {data.error_before * 100:.1f}% over the 100 calibrated rows"
    assert [t.get_text() for t in before.texts] == [before_error]
    after_error = f"mean error {data.error_after * 100:.1f}%; 1 row not calibrated"
    assert [t.get_text() for t in after.texts] == [after_error]
    assert [t.get_text() for t in fig.texts][:2] == [data.title, data.subtitle]
    assert legend_of(fig) == [
        "predicted = measured",
        "h100 matmul: 30 rows",
        "h100 custom: 20 rows",
        "h100 all_gather: 1 row",
        "tpu-v5e matmul: 30 rows",
        "tpu-v5e custom: 20 rows",
    ]
    out = io.BytesIO()
    fig.savefig(out, format="png")
    assert_png(out.getvalue(), (1500, 900))


def points(ax) -> dict[str, int]:
    """The points drawn on a panel, counted per colour."""
    lines = [ln for ln in ax.get_lines() if ln.get_marker() == "o"]
    return {to_hex(ln.get_color()): len(ln.get_xdata()) for ln in lines}


def test_points_are_coloured_per_group_and_the_uncalibrated_left_out_after(data):
    before, after = calibration_figure(data).axes
    drawn = points(before)
    assert sorted(drawn.values()) == [1, 20, 20, 30, 30] and len(drawn) == 5
    assert points(after) == {k: v for k, v in drawn.items() if v != 1}
    # every point of the After panel is on the line within a few percent
    for ln in after.get_lines():
        if ln.get_marker() == "o":
            x, y = np.asarray(ln.get_xdata()), np.asarray(ln.get_ydata())
            assert np.all(np.abs(y / x - 1) < 0.1)


def test_the_largest_groups_get_a_colour_and_the_rest_are_counted():
    n, groups = 2_000, 12
    rng = np.random.default_rng(3)
    hardware = np.array([f"chip{k:02d}" for k in range(groups)])[np.arange(n) % groups]
    hardware[:400] = "chip00"  # the largest group: 533 rows, the others 133 or 134
    t_lower = 10 ** rng.uniform(-6, -2, n)
    results = pd.DataFrame({"hardware": hardware, "t_lower": t_lower,
                            "measured_seconds": t_lower * 1.3})  # fmt: skip
    t_estimate = np.where(hardware == "chip11", np.nan, t_lower * 1.25)
    data = calibration_chart_data(results, t_estimate, np.full(n, "custom", dtype=object),
                                  (0.3 / 1.3, 0.04))  # fmt: skip
    fig = calibration_figure(data)
    legend = legend_of(fig)
    assert len(legend) == 1 + SHOWN_GROUPS + 1
    # the 8 largest (chip04-07 have a row more than chip01-03, chip08-11), in name order
    assert legend[1:3] == ["chip00 custom: 533 rows", "chip01 custom: 133 rows"]
    assert [t.split()[0] for t in legend[1:-1]] == [f"chip{k:02d}" for k in range(8)]
    assert legend[-1] == f"and {groups - SHOWN_GROUPS} more groups: 532 rows"
    drawn = points(fig.axes[0])
    assert len(drawn) == SHOWN_GROUPS + 1 and drawn[OTHER_COLOR] == 532
    assert data.not_calibrated == 133


def test_rows_without_a_measurement_are_left_out_and_no_calibration_is_said():
    results = pd.DataFrame({"hardware": ["h100"] * 4, "t_lower": [1e-6, 2e-6, 3e-6, 4e-6],
                            "measured_seconds": [2e-6, np.nan, 0.0, 5e-6]})  # fmt: skip
    data = calibration_chart_data(results, np.full(4, np.nan), np.full(4, "custom", dtype=object),
                                  (0.5, np.nan))  # fmt: skip
    assert data.left_out == 2 and data.not_calibrated == 2 and np.isnan(data.error_after)
    fig = calibration_figure(data)
    before, after = fig.axes
    assert [t.get_text() for t in after.texts] == ["no row calibrated"]
    assert points(after) == {}
    assert_png(png_bytes(fig), (1500, 900))


@pytest.mark.filterwarnings("error")
def test_100000_points_draw_into_a_small_png_rasterized():
    n = 100_000
    rng = np.random.default_rng(1)
    t_lower = 10 ** rng.uniform(-7, -2, n)
    results = pd.DataFrame({
        "hardware": pd.Categorical(np.array(["h100", "b200", "tpu-v5e"])[rng.integers(0, 3, n)]),
        "t_lower": t_lower,
        "measured_seconds": (t_lower / 0.8 + 2e-6) * np.exp(rng.normal(0, 0.05, n)),
    })  # fmt: skip
    kinds = np.array(["matmul", "custom", "all_gather"], dtype=object)[rng.integers(0, 3, n)]
    t_estimate = t_lower / 0.8 + 2e-6
    png_bytes(calibration_figure(calibration_chart_data(results[:100], t_estimate[:100],
                                                        kinds[:100], (0.2, 0.05))))  # fmt: skip
    fig = calibration_figure(calibration_chart_data(results, t_estimate, kinds, (0.2, 0.05)))
    data = png_bytes(fig)  # its time: benchmarks/bench_calibration.py, never a test
    assert_png(data, (1500, 900))
    assert len(data) < 400_000
    (before, after) = fig.axes
    assert all(ln.get_rasterized() for ln in before.get_lines() if ln.get_marker() == "o")
    assert sum(points(before).values()) == n


def test_a_long_chip_name_is_cut_and_keeps_its_kind():
    results = pd.DataFrame({"hardware": ["my-$lab-accelerator-with-a-very-long-name"] * 3,
                            "t_lower": [1e-6, 2e-6, 3e-6],
                            "measured_seconds": [2e-6, 3e-6, 4e-6]})  # fmt: skip
    data = calibration_chart_data(results, np.full(3, np.nan), np.full(3, "custom", dtype=object),
                                  (0.3, np.nan))  # fmt: skip
    assert data.group_names == (r"my-\$lab-accelerator-with-a-… custom",)
    assert legend_of(calibration_figure(data))[1] == r"my-\$lab-accelerator-with-a-… custom: 3 rows"


def test_the_errors_said_are_the_calibrations_never_worked_out_again(measured, calibrated):
    """The chart draws the errors it is given (the fit's: calibration.fit), over
    whatever rows the fit counted, not the mean of the points it draws."""
    data = calibration_chart_data(measured, calibrated[1], op_kinds(measured), (0.5, 0.25))
    assert (data.error_before, data.error_after) == (0.5, 0.25)
    assert "from 50.0% to 25.0%" in data.subtitle
    fig = calibration_figure(data)
    assert [t.get_text() for t in fig.axes[1].texts] == ["mean error 25.0%; 1 row not calibrated"]
