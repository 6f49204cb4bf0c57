"""The chips chart (`pipeline.charts.chips`): one roof line per chip on log-log axes, its
ridge point marked at the line's corner and labelled, a legend of chip names, the dtype in the
title, the chips without that peak left out with a note; read from the Figure's artists."""

from __future__ import annotations

import pytest

import pipeline
from pipeline.render.charts.chips import chips_figure
from pipeline.render.charts.chips_data import ChipRoof, ChipsData
from pipeline.render.charts.style import ChartFigure, axis_points, png_bytes
from tests.helpers import assert_png

CHIPS = ["h100", "h200", "b200", "tpu-v6e"]


def roofs(fig) -> dict[str, tuple[float, float]]:
    """Each chip's roof line (by its gid) -> the (intensity, FLOP/s) of its ridge corner."""
    (ax,) = fig.axes
    found = {}
    for line in ax.get_lines():
        gid = line.get_gid() or ""
        if gid.startswith("roof:"):
            x, y = line.get_xydata()[line.get_markevery()[0]]
            found[gid.removeprefix("roof:")] = (float(x), float(y))
    return found


def legend_of(fig):
    """The legend: inside the axes, or under them (figure-level) when it would hide a line."""
    return fig.axes[0].get_legend() or fig.legends[0]


def ridge_labels(fig) -> dict[str, str]:
    (ax,) = fig.axes
    return {t.get_gid().removeprefix("ridge:"): t.get_text() for t in ax.texts}


def test_one_line_per_chip_with_its_ridge_point():
    fig = pipeline.charts.chips(CHIPS)
    assert isinstance(fig, ChartFigure)
    (ax,) = fig.axes
    assert ax.get_xscale() == ax.get_yscale() == "log"
    assert len(ax.get_lines()) == len(CHIPS)
    catalog = pipeline.catalog()
    found = roofs(fig)
    assert list(found) == CHIPS
    for chip in CHIPS:
        peak, bandwidth = catalog.at[chip, "peak_bf16"], catalog.at[chip, "hbm_bandwidth"]
        assert found[chip] == pytest.approx((peak / bandwidth, peak), rel=1e-12)
    assert ridge_labels(fig)["h100"] == "295"  # 989 TFLOP/s / 3.35 TB/s, the book's Q5
    assert ridge_labels(fig)["h200"] == "206"


def test_the_roof_is_the_hbm_slope_then_the_peak():
    fig = pipeline.charts.chips(["h100"])
    (line,) = fig.axes[0].get_lines()
    (x0, y0), (x1, y1), (x2, y2) = line.get_xydata()
    assert y0 / x0 == pytest.approx(3.35e12) and y1 / x1 == pytest.approx(3.35e12)
    assert y1 == y2 == 9.89e14 and x0 < x1 < x2
    assert x0 <= 1.0  # low intensities (decode) are on the chart


def test_legend_names_the_chips_and_the_title_the_dtype():
    fig = pipeline.charts.chips(CHIPS, dtype="bfloat16")
    legend = [t.get_text() for t in legend_of(fig).get_texts()]
    assert [text.split(":")[0] for text in legend] == CHIPS
    assert legend[0] == "h100: 989 TFLOP/s, HBM 3.35 TB/s, ridge 295 FLOP/byte"
    assert fig.texts[0].get_text() == "bf16 rooflines: 4 chips"


def test_a_chip_without_the_dtype_is_left_out_with_a_note():
    fig = pipeline.charts.chips(CHIPS, dtype="fp8")
    assert list(roofs(fig)) == ["h100", "h200", "b200"]
    assert fig.texts[0].get_text() == "fp8 rooflines: 3 chips"
    notes = [t.get_text() for t in fig.texts]
    assert "not drawn: tpu-v6e (has no fp8 peak in the catalog)" in notes
    assert not any("not drawn" in t.get_text() for t in pipeline.charts.chips(CHIPS).texts)


def test_a_chip_keeps_its_colour_when_another_is_left_out():
    def colours(fig):
        return {ln.get_gid(): ln.get_color() for ln in fig.axes[0].get_lines()}

    bf16, fp8 = colours(pipeline.charts.chips(CHIPS)), colours(pipeline.charts.chips(CHIPS, "fp8"))
    assert all(fp8[gid] == bf16[gid] for gid in fp8)


def test_a_users_chip_is_drawn_at_its_own_figures(tmp_path):
    mine = tmp_path / "mine.toml"
    mine.write_text("[mychip]\npeak_bf16 = 4e14\nhbm_bandwidth = 1e12\n", encoding="utf-8")
    assert roofs(pipeline.charts.chips(["mychip", "h100"], hardware=mine))["mychip"] == (
        400.0,
        4e14,
    )


def test_nothing_to_draw_and_bad_arguments_are_said():
    with pytest.raises(pipeline.UnknownHardware, match=r"no fp4 peak \(peak_fp4\) on h100, a100"):
        pipeline.charts.chips(["h100", "a100"], dtype="fp4")
    with pytest.raises(pipeline.UnknownHardware, match="did you mean 'h100'"):
        pipeline.charts.chips(["h10"])
    with pytest.raises(ValueError, match="unknown dtype 'bf17'"):
        pipeline.charts.chips(["h100"], dtype="bf17")


def test_ridge_labels_do_not_overlap_each_other_or_the_legend():
    fig = pipeline.charts.chips(list(pipeline.catalog().index))  # every chip: crowded
    (ax,) = fig.axes
    renderer = fig.canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in ax.texts]
    legend = legend_of(fig).get_window_extent(renderer)
    for i, box in enumerate(boxes):
        assert not box.overlaps(legend)
        assert not any(box.overlaps(other) for other in boxes[i + 1 :])


def test_the_chart_is_a_slide_sized_png():
    data = ChipsData("bf16", (ChipRoof("x", 1e15, 2e12, 500.0, 0),), ())
    assert_png(png_bytes(chips_figure(data)), min_size=(1200, 800))


@pytest.mark.parametrize("names", [CHIPS, ["h100", "h200", "b200", "a100"]])
def test_each_ridge_label_is_nearer_its_own_marker_than_any_other(names):
    fig = pipeline.charts.chips(names, dtype="fp8" if "a100" not in names else "bf16")
    (ax,) = fig.axes
    renderer = fig.canvas.get_renderer()
    markers = {name: ax.transData.transform(xy) for name, xy in roofs(fig).items()}
    for text in ax.texts:
        box = text.get_window_extent(renderer)

        def distance(point, box=box):
            dx = max(box.x0 - point[0], 0, point[0] - box.x1)
            dy = max(box.y0 - point[1], 0, point[1] - box.y1)
            return (dx * dx + dy * dy) ** 0.5

        own = text.get_gid().removeprefix("ridge:")
        assert all(distance(markers[own]) < distance(p) for n, p in markers.items() if n != own)


@pytest.mark.parametrize("dtype", ["bf16", "fp8", "int8"])
def test_the_legend_never_hides_a_roof_line(dtype):
    everything = list(pipeline.catalog().index)
    for names in (CHIPS, everything):
        fig = pipeline.charts.chips(names, dtype)
        (ax,) = fig.axes
        box = legend_of(fig).get_window_extent(fig.canvas.get_renderer())
        for line in ax.get_lines():
            pts = axis_points(ax, *line.get_data())
            inside = (pts[:, 0] > box.x0) & (pts[:, 0] < box.x1)
            assert not (inside & (pts[:, 1] > box.y0) & (pts[:, 1] < box.y1)).any(), line
    # a few chips: the legend in the empty corner under the roofs; many: under the axes
    assert pipeline.charts.chips(CHIPS).legends == [] and fig.legends
    assert fig.get_figheight() > pipeline.charts.chips(CHIPS).get_figheight()


def test_many_chips_legend_entries_keep_the_names_whole():
    fig = pipeline.charts.chips(list(pipeline.catalog().index))
    texts = [t.get_text() for t in fig.legends[0].get_texts()]
    assert [t.split(":")[0] for t in texts] == list(pipeline.catalog().index)
