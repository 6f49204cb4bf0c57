"""The summary chart: its data (bound counts per hardware) and the stacked bars drawn from it;
with nothing computed, a figure saying so."""

from __future__ import annotations

from matplotlib.colors import to_hex

from pipeline.render.charts.style import BOUND_COLORS
from pipeline.render.charts.summary import summary_figure
from pipeline.render.charts.summary_data import SummaryData, summary_data


def test_summary_data_counts_bounds_per_hardware(book):
    data = summary_data(book.summary.per_hardware)
    assert data.hardware == ("h100", "tpu-v5e", "tpu-v6e")
    assert data.counts == {"compute": (2, 666, 1), "memory": (0, 365, 0), "network": (0, 1, 0)}
    assert data.title == "Which limit binds: 1,035 scenarios by hardware"


def test_bars_stack_each_chips_bounds_in_their_colours(book):
    data = summary_data(book.summary.per_hardware)
    fig = summary_figure(data)
    (ax,) = fig.axes
    assert [t.get_text() for t in ax.get_yticklabels()] == list(data.hardware)
    bars = ax.patches
    assert len(bars) == 3 * len(data.hardware)  # a segment per bound and chip
    for i, bound in enumerate(("compute", "memory", "network")):
        segments = bars[3 * i : 3 * i + 3]
        assert [round(b.get_width()) for b in segments] == list(data.counts[bound])
        assert {to_hex(b.get_facecolor()).lower() for b in segments} == {
            BOUND_COLORS[bound].lower()
        }
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == ["compute-bound (669)", "memory-bound (365)", "network-bound (1)"]
    assert data.title in [t.get_text() for t in fig.texts]
    totals = {t.get_text() for t in ax.texts}
    assert {"1,032", "2", "1"} <= totals  # each bar's total beside it


def test_long_chip_names_are_cut_on_the_axis():
    name = "a-chip-with-a-very-long-name-indeed"
    data = SummaryData(title="t", hardware=(name,), counts={"compute": (3,), "memory": (1,),
                                                            "network": (0,)})  # fmt: skip
    (label,) = summary_figure(data).axes[0].get_yticklabels()
    assert len(label.get_text()) == 28 and label.get_text().endswith("…")


def test_nothing_computed_gives_a_figure_saying_so():
    data = SummaryData(title="Which limit binds: 0 scenarios by hardware", hardware=(),
                       counts={"compute": (), "memory": (), "network": ()},
                       note="no scenarios to chart: 2 rows rejected")  # fmt: skip
    fig = summary_figure(data)
    assert fig.axes == []
    assert [t.get_text() for t in fig.texts] == [data.title, data.note]
