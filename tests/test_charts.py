"""pipeline.charts: each chart of an analysis as a matplotlib Figure for a notebook, chips named
by any alias, and what is missing said when a chart cannot be drawn."""

from __future__ import annotations

import pytest
from matplotlib.figure import Figure

import pipeline
from tests.helpers import analyze_rows


def test_chart_functions_return_figures(book):
    for fig in (
        pipeline.charts.summary(book),
        pipeline.charts.roofline(book, "tpu-v5e"),
        pipeline.charts.roofline(book, "V5E"),  # an alias, any case
        pipeline.charts.network(book, "tpu-v5e"),
        pipeline.charts.sweep(book, "tpu-v5e"),
        pipeline.charts.sweep(book, "tpu-v5e", "b"),
    ):
        assert isinstance(fig, Figure) and fig.get_axes()


def test_chart_functions_say_what_is_missing(book):
    with pytest.raises(pipeline.UnknownHardware, match="did you mean 'h100'"):
        pipeline.charts.roofline(book, "h10")
    with pytest.raises(pipeline.UnknownHardware, match="no scenario on h100 sends data"):
        pipeline.charts.network(book, "h100")
    with pytest.raises(pipeline.UnknownHardware, match="no sweep on tpu-v5e varies D"):
        pipeline.charts.sweep(book, "tpu-v5e", "D")
    with pytest.raises(pipeline.UnknownHardware, match="no sweep runs on h100"):
        pipeline.charts.sweep(book, "h100")


def test_a_chip_with_only_collectives_has_no_roofline_but_a_time_sweep(mix):
    charts = pipeline.charts.planned(mix)
    kinds = {(c.kind, c.hardware) for c in charts}
    assert ("roofline", "h100") not in kinds and ("roofline", "tpu-v5e") in kinds
    assert not any(c.kind == "network" for c in charts)  # no op with FLOPs communicates
    titles = [c.title for c in charts if c.kind == "sweep"]
    assert titles == ["h100: collective time vs bytes", "tpu-v5e: collective time vs bytes"]
    with pytest.raises(pipeline.UnknownHardware, match="collectives only"):
        pipeline.charts.roofline(mix, "h100")
    assert pipeline.charts.sweep(mix, "h100", "BYTES").axes[0].get_yscale() == "log"


def test_sweep_pages_hold_ten_lines_each():
    rows = [{"name": f"s{i:02d}", "op": "matmul", "B": "1|2|4", "D": 128 * (i + 1), "F": 128,
             "hardware": "v5e"} for i in range(12)]  # fmt: skip
    a = analyze_rows(rows)

    def legend(fig):
        return [t.get_text() for t in fig.legends[0].get_texts()]

    first, second = (
        legend(pipeline.charts.sweep(a, "v5e")),
        legend(pipeline.charts.sweep(a, "v5e", "B", 2)),
    )
    assert len(first) == 10 and len(second) == 2
    assert second[0].startswith("s10") and second[1].startswith("s11")
    with pytest.raises(ValueError, match="page must be 1 to 2, not 3"):
        pipeline.charts.sweep(a, "v5e", "B", 3)
