"""Drawing the calibration chart: predicted against measured time, the roofline floor
(before) and the calibrated estimate (after) side by side on the same log-log axes with the
line predicted = measured, a colour per dtype (a collective's op), each panel's median and
p90 error as the calibration states them."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_hex

from pipeline.calibration.estimate import ERRORS, estimate
from pipeline.calibration.fit import fit
from pipeline.calibration.groups import op_kinds
from pipeline.render.charts.calibration import (
    OTHER_COLOR,
    SHOWN_GROUPS,
    calibration_chart_data,
    calibration_figure,
    chart_labels,
)
from pipeline.render.charts.style import png_bytes
from tests.helpers import analyze_rows, assert_png


def measured_rows() -> list[dict]:
    """bf16 matmuls and fp8 custom ops on h100 and b200, a spread of sizes, and one AllGather
    on h100: a group too small to fit, so its row is not calibrated."""
    rows = []
    for hw in ("h100", "b200"):
        for b in np.unique(np.geomspace(1, 8192, 16).astype(int)):
            for d in (1024, 8192):
                rows.append({"name": f"mm-{hw}-{b}-{d}", "op": "matmul", "B": int(b), "D": d,
                             "F": 4096, "hardware": hw, "dtype": "bf16"})  # fmt: skip
        for f in np.geomspace(1e6, 1e12, 10):
            for v in (10**5, 10**7, 10**9):
                rows.append({"name": f"c-{hw}-{f:.0f}-{v}", "op": "custom", "flops": round(f),
                             "bytes": v, "hardware": hw, "dtype": "fp8"})  # fmt: skip
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
    errors = {k: getattr(calibration, k) for k in ERRORS}  # the fit's, never redone
    return calibration_chart_data(measured, t_estimate, labels(measured), errors)


def labels(results: pd.DataFrame) -> np.ndarray:
    return chart_labels(results, op_kinds(results))


def legend_of(fig) -> list[str]:
    (legend,) = fig.legends
    return [t.get_text() for t in legend.get_texts()]


def test_the_data_are_the_rows_their_dtypes_and_the_errors_of_the_calibration(
    measured, calibrated, data
):
    calibration, t_estimate = calibrated
    assert len(data.measured) == len(measured) and data.left_out == 0
    np.testing.assert_array_equal(data.t_lower, measured["t_lower"].to_numpy())
    assert data.group_names == ("bf16", "fp8", "all_gather")
    names = np.array(data.group_names)[data.group]
    kinds = op_kinds(measured)
    expected = np.where(kinds == "matmul", "bf16", np.where(kinds == "custom", "fp8", kinds))
    np.testing.assert_array_equal(names, expected.astype(str))
    # the AllGather's group is too small to fit: its row has no estimate
    assert data.not_calibrated == 1 and np.isnan(data.t_estimate[names == "all_gather"]).all()
    np.testing.assert_array_equal(data.t_estimate, t_estimate)
    # the errors the calibration states
    assert data.errors == {k: getattr(calibration, k) for k in ERRORS}
    assert 0.15 < data.errors["floor_median"] and data.errors["heldout_median"] < 0.03
    assert "calibrating takes the median error max(t/m, m/t) − 1 from " in data.subtitle


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
    e = {k: f"{v * 100:.1f}%" for k, v in data.errors.items()}
    before_error = (f"median {e['floor_median']}, p90 {e['floor_p90']} over the 120 "
                    "calibrated rows")  # fmt: skip
    assert [t.get_text() for t in before.texts] == [before_error]
    after_error = (f"median {e['median']}, p90 {e['p90']} (held out "
                   f"{e['heldout_median']}, {e['heldout_p90']}); 1 row not calibrated")  # fmt: skip
    assert [t.get_text() for t in after.texts] == [after_error]
    assert [t.get_text() for t in fig.texts][:2] == [data.title, data.subtitle]
    assert legend_of(fig) == [
        "predicted = measured", "bf16: 60 rows", "fp8: 60 rows", "all_gather: 1 row"
    ]  # fmt: skip
    out = io.BytesIO()
    fig.savefig(out, format="png")
    assert_png(out.getvalue(), (1500, 900))


def points(ax) -> dict[str, int]:
    """The points drawn on a panel, counted per colour."""
    lines = [ln for ln in ax.get_lines() if ln.get_marker() == "o"]
    return {to_hex(ln.get_color()): len(ln.get_xdata()) for ln in lines}


def test_points_are_coloured_per_dtype_and_the_uncalibrated_left_out_after(data):
    before, after = calibration_figure(data).axes
    drawn = points(before)
    assert sorted(drawn.values()) == [1, 60, 60] and len(drawn) == 3
    assert points(after) == {k: v for k, v in drawn.items() if v != 1}
    # every point of the After panel is on the line within a few percent
    for ln in after.get_lines():
        if ln.get_marker() == "o":
            x, y = np.asarray(ln.get_xdata()), np.asarray(ln.get_ydata())
            assert np.all(np.abs(y / x - 1) < 0.1)


def errors(floor: float, heldout: float) -> dict[str, float]:
    """ERRORS with these medians, p90s twice them, the fitted as held out."""
    said = {"floor_median": floor, "median": heldout, "heldout_median": heldout}
    return {**said, **{k.replace("median", "p90"): 2 * v for k, v in said.items()}}


def test_the_largest_groups_get_a_colour_and_the_rest_are_counted():
    n, groups = 2_000, 12
    rng = np.random.default_rng(3)
    label = np.array([f"label{k:02d}" for k in range(groups)], dtype=object)[np.arange(n) % groups]
    label[:400] = "label00"  # the largest group: 533 rows, the others 133 or 134
    t_lower = 10 ** rng.uniform(-6, -2, n)
    results = pd.DataFrame({"hardware": "h100", "t_lower": t_lower,
                            "measured_seconds": t_lower * 1.3})  # fmt: skip
    t_estimate = np.where(label == "label11", np.nan, t_lower * 1.25)
    data = calibration_chart_data(results, t_estimate, label, errors(0.3, 0.04))
    fig = calibration_figure(data)
    legend = legend_of(fig)
    assert len(legend) == 1 + SHOWN_GROUPS + 1
    # the 8 largest (label04-07 have a row more than label01-03, label08-11), in name order
    assert legend[1:3] == ["label00: 533 rows", "label01: 133 rows"]
    assert [t.split(":")[0] for t in legend[1:-1]] == [f"label{k:02d}" for k in range(8)]
    assert legend[-1] == f"and {groups - SHOWN_GROUPS} more groups: 532 rows"
    drawn = points(fig.axes[0])
    assert len(drawn) == SHOWN_GROUPS + 1 and drawn[OTHER_COLOR] == 532
    assert data.not_calibrated == 133


def test_a_dtypes_colour_comes_first_and_a_row_without_one_is_its_kind():
    results = pd.DataFrame({"compute_dtype": ["fp8", "", "bf16", "bf16", None]})
    kinds = np.array(["matmul", "custom", "all_reduce", "custom", "matmul"], dtype=object)
    said = chart_labels(results, kinds)
    assert list(said) == ["fp8", "custom", "all_reduce", "bf16", "matmul"]
    assert list(chart_labels(results.drop(columns="compute_dtype"), kinds)) == list(kinds)
    t = np.full(5, 1e-6)
    frame = results.assign(t_lower=t, measured_seconds=t)
    data = calibration_chart_data(frame, t, said, errors(0.1, 0.1))
    assert data.group_names == ("bf16", "fp8", "matmul", "custom", "all_reduce")  # dtypes first


def test_rows_without_a_measurement_are_left_out_and_no_calibration_is_said():
    results = pd.DataFrame({"hardware": ["h100"] * 4, "t_lower": [1e-6, 2e-6, 3e-6, 4e-6],
                            "measured_seconds": [2e-6, np.nan, 0.0, 5e-6]})  # fmt: skip
    data = calibration_chart_data(results, np.full(4, np.nan), np.full(4, "bf16", dtype=object),
                                  errors(0.5, np.nan))  # fmt: skip
    assert data.left_out == 2 and data.not_calibrated == 2
    assert data.subtitle == "2 measured rows; no row calibrated"
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
    dtypes = np.array(["bf16", "fp8", "all_gather"], dtype=object)[rng.integers(0, 3, n)]
    t_estimate = t_lower / 0.8 + 2e-6
    png_bytes(calibration_figure(calibration_chart_data(results[:100], t_estimate[:100],
                                                        dtypes[:100], errors(0.2, 0.05))))  # fmt: skip
    fig = calibration_figure(calibration_chart_data(results, t_estimate, dtypes, errors(0.2, 0.05)))
    data = png_bytes(fig)  # its time: benchmarks/bench_calibration.py, never a test
    assert_png(data, (1500, 900))
    assert len(data) < 400_000
    (before, after) = fig.axes
    assert all(ln.get_rasterized() for ln in before.get_lines() if ln.get_marker() == "o")
    assert sum(points(before).values()) == n


def test_a_long_label_is_cut():
    results = pd.DataFrame({"t_lower": [1e-6, 2e-6, 3e-6], "measured_seconds": [2e-6, 3e-6, 4e-6]})
    label = np.full(3, "my-$lab-accelerator-with-a-very-long-name", dtype=object)
    data = calibration_chart_data(results, np.full(3, np.nan), label, errors(0.3, np.nan))
    assert data.group_names == (r"my-\$lab-accelerator-with-a-…",)
    assert legend_of(calibration_figure(data))[1] == r"my-\$lab-accelerator-with-a-…: 3 rows"


def test_the_errors_said_are_the_calibrations_never_worked_out_again(measured, calibrated):
    """The chart draws the errors it is given (the fit's: calibration.fit), over
    whatever rows the fit counted, not the errors of the points it draws."""
    data = calibration_chart_data(measured, calibrated[1], labels(measured), errors(0.5, 0.25))
    assert data.errors == errors(0.5, 0.25)
    assert "from 50.0% to 25.0% held out (p90 100% to 50.0%)" in data.subtitle
    fig = calibration_figure(data)
    assert [t.get_text() for t in fig.axes[1].texts] == [
        "median 25.0%, p90 50.0% (held out 25.0%, 50.0%); 1 row not calibrated"
    ]
