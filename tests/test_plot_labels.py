"""Chart label helpers: untrusted text stays plain text on a chart."""

from __future__ import annotations

from pipeline.plot_labels import chart_text


def test_chart_text_is_one_bounded_line_without_mathtext():
    assert chart_text("a\nb\tc") == "a b c"
    assert chart_text("$\\alpha$ cost") == r"\$\alpha\$ cost"  # never rendered as mathtext
    long = chart_text("x" * 100, limit=10)
    assert long == "x" * 9 + "…" and len(long) == 10
