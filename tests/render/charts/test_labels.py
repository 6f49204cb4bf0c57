"""Chart label helpers: untrusted text stays plain text on a chart."""

from __future__ import annotations

from pipeline.render.charts.labels import chart_text


def test_chart_text_is_one_bounded_line_without_mathtext():
    assert chart_text("a\nb\tc") == "a b c"
    assert chart_text("$\\alpha$ cost") == r"\$\alpha\$ cost"  # never rendered as mathtext
    long = chart_text("x" * 100, limit=10)
    assert long == "x" * 9 + "…" and len(long) == 10


def test_characters_the_font_cannot_draw_become_a_box():
    assert chart_text("rocket 🚀 run") == "rocket \u25a1 run"
    assert chart_text("µs → 1…2") == "µs → 1…2"  # the chart font has these
