"""Chart labels: untrusted text stays plain text on a chart; points close together share a
label; placed labels stay on the axes and apart."""

from __future__ import annotations

import numpy as np
from matplotlib.text import Text

from pipeline.render.charts.labels import chart_text, cluster_labels, place_labels


def test_chart_text_is_one_bounded_line_without_mathtext():
    assert chart_text("a\nb\tc") == "a b c"
    assert chart_text("$\\alpha$ cost") == r"\$\alpha\$ cost"  # never rendered as mathtext
    long = chart_text("x" * 100, limit=10)
    assert long == "x" * 9 + "…" and len(long) == 10


def test_characters_the_font_cannot_draw_become_a_box():
    assert chart_text("rocket 🚀 run") == "rocket \u25a1 run"
    assert chart_text("µs → 1…2") == "µs → 1…2"  # the chart font has these


def axes():
    from pipeline.render.charts.style import new_figure

    fig = new_figure()
    ax = fig.subplots()
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(1, 1e4)
    ax.set_ylim(1e10, 1e15)
    return fig, ax


def test_points_a_few_pixels_apart_share_one_label():
    _, ax = axes()
    near = [{"text": f"p{i}", "x": 100 * (1 + i * 1e-4), "y": 1e13} for i in range(5)]
    far = {"text": "alone $x$", "x": 10, "y": 1e11}
    labels = cluster_labels(ax, [far, *near])
    assert labels == [
        {"text": "alone \\$x\\$", "x": 10, "y": 1e11},
        {"text": "p0\np1\np2\n+2 more", "x": 100, "y": 1e13},
    ]


def test_placed_labels_stay_inside_the_axes_and_apart():
    fig, ax = axes()
    items = [{"text": f"scenario_{i}", "x": 50 * 1.3**i, "y": 1e13 * 1.2**i} for i in range(8)]
    ax.plot([it["x"] for it in items], [it["y"] for it in items], "o")
    place_labels(fig, ax, items, [], [], np.empty((0, 2)))
    fig.canvas.draw()  # annotations take their place when drawn
    renderer = fig.canvas.get_renderer()
    boxes = [Text.get_window_extent(t, renderer) for t in ax.texts]  # the text, not its leader
    assert sorted(t.get_text() for t in ax.texts) == sorted(it["text"] for it in items)
    frame = ax.get_window_extent(renderer)
    for i, box in enumerate(boxes):
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1, box
        assert frame.y0 <= box.y0 and box.y1 <= frame.y1, box
        assert not any(box.overlaps(other) for other in boxes[i + 1 :])
