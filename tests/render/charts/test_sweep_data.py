"""Sweep chart data: which sweeps make a chart, their lines and pages, where each line turns
compute-bound (the book's Q3 figure) or leaves a collective's latency floor (its knee)."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.render.charts.sweep_data import pages, sweep_data
from pipeline.summary.turns import sweep_lines
from tests.helpers import analyze_rows, chart_rows, chip, planned_charts


def book_sweep(book):
    (((_, dim), lines),) = [(k, v) for k, v in sweep_lines(chart_rows(book)).items()]
    (page,) = pages(lines)
    return sweep_data(
        chart_rows(book), chip(book, "tpu-v5e"), book.summary.roofs["tpu-v5e"], dim, page, 1, 1
    )


def test_q3_sweep_matches_the_book_figure(book):
    """Book Q3: both reach peak 1.97e14; D = F = 1024 needs almost twice the batch."""
    data = book_sweep(book)
    assert data.dim == "B" and data.log_x is False
    assert [c.peak for c in data.ceilings] == [1.97e14]
    lines = {ln.series: ln for ln in data.lines}
    assert set(lines) == {"q3_D1024", "q3_D4096"}
    for ln in lines.values():
        assert list(ln.x) == list(range(1, 513))
        assert ln.y.max() == pytest.approx(1.97e14)
        assert np.all(np.diff(ln.y) >= -1e-9 * ln.y.max())  # never falls as B grows
    big, small = lines["q3_D4096"].critical, lines["q3_D1024"].critical
    assert (big, small) == (137, 227)
    assert 1.5 < small / big < 2.0  # "almost doubles the critical batch size"
    assert lines["q3_D4096"].critical_y == pytest.approx(1.97e14)


def test_two_dim_sweep_gives_one_line_per_other_value():
    rows = [{"name": "grid", "op": "matmul", "B": "1|2|4", "D": "128|256", "F": 64,
             "hardware": "v5e"}]  # fmt: skip
    a = analyze_rows(rows)
    results = chart_rows(a)
    (lines,) = sweep_lines(results).values()
    data = sweep_data(results, chip(a, "tpu-v5e"), a.summary.roofs["tpu-v5e"], "B", lines, 1, 1)
    assert [ln.label for ln in data.lines] == ["grid (D=128)", "grid (D=256)"]
    assert all(list(ln.x) == [1, 2, 4] for ln in data.lines)


def test_more_than_ten_sweep_lines_make_pages():
    rows = [{"name": f"s{i:02d}", "op": "matmul", "B": "1|2|4", "D": 128 * (i + 1), "F": 128,
             "hardware": "v5e"} for i in range(12)]  # fmt: skip
    a = analyze_rows(rows)
    results = chart_rows(a)
    (lines,) = sweep_lines(results).values()
    assert [len(p) for p in pages(lines)] == [10, 2]


def test_message_size_sweep_marks_the_v5e_knee_at_45_kB_per_chip(mix):
    lines = sweep_lines(chart_rows(mix))
    assert set(lines) == {("tpu-v5e", "bytes"), ("h100", "bytes")}
    (page,) = pages(lines[("tpu-v5e", "bytes")])
    data = sweep_data(
        chart_rows(mix), chip(mix, "tpu-v5e"), mix.summary.roofs["tpu-v5e"], "bytes", page, 1, 1
    )
    assert data.measure == "time" and data.log_x
    (line,) = data.lines
    # book: under 4.5e10 * 1e-6 = 45 kB per chip is latency-bound; 16 chips: V = 720 kB
    assert line.critical / 16 == pytest.approx(45e3, rel=1e-9)
    assert line.critical_y == pytest.approx(8e-6, rel=1e-12)  # 1 us x 16 / 2
    assert "45.0 kB per chip" in line.reach
    assert list(line.x) == [10.0**k for k in range(3, 10)]


def test_h100_allreduce_knee_uses_the_nvlink_latency_and_two_phases(mix):
    (page,) = pages(sweep_lines(chart_rows(mix))[("h100", "bytes")])
    (line,) = sweep_data(
        chart_rows(mix), chip(mix, "h100"), mix.summary.roofs["h100"], "bytes", page, 1, 1
    ).lines
    floor = 2 * 0.6e-6 * 8 / 2  # two phases of 600 ns x N / 2
    assert line.critical_y == pytest.approx(floor, rel=1e-12)
    # past the floor: 2 V (N - 1) / (N W) = floor
    assert line.critical == pytest.approx(floor * 8 * 450e9 / (2 * 7), rel=1e-9)


def test_a_sweep_that_never_reaches_the_peak_has_no_critical_value():
    rows = [{"name": "thin", "op": "matmul", "B": "1|2|4", "D": 64, "F": 64, "hardware": "v5e"}]
    a = analyze_rows(rows)
    results = chart_rows(a)
    (lines,) = sweep_lines(results).values()
    (line,) = sweep_data(
        results, chip(a, "tpu-v5e"), a.summary.roofs["tpu-v5e"], "B", lines, 1, 1
    ).lines
    assert line.critical is None
    assert set(results["bound"]) == {"memory"}


def test_sweep_marks_the_exact_critical_batch():
    """A B sweep in powers of two turns compute-bound between 256 and 512: the chart marks the
    rows' exact critical batch (319 for an 8192 x 8192 bf16 matmul on an H100), not 512."""
    rows = [
        {"name": "d2", "op": "matmul", "B": "1..1024*2", "D": 8192, "F": 8192, "hardware": "h100"}
    ]
    a = analyze_rows(rows)
    assert set(a.results["critical_batch"]) == {319}
    (line,) = planned_sweep_line(a)
    assert line.critical == 319
    # on the drawn segment between the swept 256 and 512 (straight on a log B axis and a
    # linear FLOP/s axis), not at the roof above it: the marker sits on its curve (issue 30)
    at = np.searchsorted(line.x, 319)
    (x0, x1), (y0, y1) = line.x[at - 1 : at + 1], line.y[at - 1 : at + 1]
    on_segment = np.interp(np.log(319), np.log([x0, x1]), [y0, y1])
    assert (x0, x1) == (256, 512) and y0 < line.critical_y < y1
    assert line.critical_y == pytest.approx(on_segment)


def planned_sweep_line(analysis):
    frame = chart_rows(analysis)
    (lines,) = sweep_lines(frame).values()
    roofs = analysis.summary.roofs["h100"]
    return sweep_data(frame, {"name": "h100", "peak_bf16": 9.89e14}, roofs, "B", lines, 1, 1).lines


def test_a_line_that_is_a_whole_series_marks_its_series_lines_turn(book):
    """The chart reads the rule the series lines use (summary.turns): the Q3 lines turn where
    Summary.lines says, B = 137 and B = 227, and nowhere else."""
    data = book_sweep(book)
    lines = book.summary.lines
    for ln in data.lines:
        assert ln.critical == lines.at[ln.series, "change_at"]
        assert lines.at[ln.series, "change_dim"] == data.dim


def test_a_line_without_a_turn_is_not_marked_and_says_why():
    """Compute-bound throughout (B from 512, past the critical batch 319): no turn to mark;
    a D sweep turning compute-bound is mixed, as its series line says (D is no batch dim)."""
    rows = [
        {"name": "all_compute", "op": "matmul", "B": "512..2048*2", "D": 8192, "F": 8192,
         "hardware": "h100"},
        {"name": "d_sweep", "op": "matmul", "B": 1024, "D": "64..8192*2", "F": 1024,
         "hardware": "h100"},
    ]  # fmt: skip
    a = analyze_rows(rows)
    frame = chart_rows(a)
    drawn = {}
    for (_, dim), lines in sweep_lines(frame).items():
        (line,) = sweep_data(
            frame, chip(a, "h100"), a.summary.roofs["h100"], dim, lines, 1, 1
        ).lines
        drawn[line.series] = line
    assert (drawn["all_compute"].critical, drawn["all_compute"].reach) == (
        None, "compute-bound throughout",
    )  # fmt: skip
    assert drawn["d_sweep"].critical is None
    assert drawn["d_sweep"].reach == "mixed: 4 compute, 4 memory"
    assert list(a.summary.lines["bound"]) == ["compute", "mixed"]
    assert (a.summary.lines["change_dim"] == "").all()


def test_each_chip_of_a_fleet_sweep_marks_its_own_turn():
    rows = [{"name": "mlp", "op": "matmul", "B": "1..4096*2", "D": 8192, "F": 28672,
             "hardware": "h100|h200"}]  # fmt: skip
    a = analyze_rows(rows)
    frame = chart_rows(a)
    critical = {}
    for (hw, dim), lines in sweep_lines(frame).items():
        (line,) = sweep_data(frame, chip(a, hw), a.summary.roofs[hw], dim, lines, 1, 1).lines
        critical[hw] = line.critical
    batches = a.results.groupby(a.results["hardware"].astype(str))["critical_batch"].first()
    assert critical == {hw: float(batches[hw]) for hw in ("h100", "h200")}


def test_lines_of_a_sweep_are_in_the_numeric_order_of_their_other_dims_and_fleet_axes():
    """F=2048 before F=16384, and chips 2 before 16, not the order of their text."""
    rows = [{"name": "w", "op": "matmul", "B": "1..64*2", "D": 4096, "F": "16384|2048|8192",
             "hardware": "h100", "chips": "16|2", "shard": "D"}]  # fmt: skip
    frame = chart_rows(analyze_rows(rows))
    ((key, lines),) = sweep_lines(frame).items()
    assert key == ("h100", "B")
    assert [ln.detail for ln in lines] == [
        "F=2048, chips=2", "F=2048, chips=16", "F=8192, chips=2", "F=8192, chips=16",
        "F=16384, chips=2", "F=16384, chips=16",
    ]  # fmt: skip


def test_a_series_with_more_lines_than_a_chart_holds_is_one_chart_of_its_spread():
    """One sweep chart per chip and series: 3 D x 2 F x 2 dtypes = 12 lines on each chip make
    one chart of 10 (not two pages), the corners first: every value of each dim drawn."""
    rows = [{"name": "big", "op": "matmul", "B": "1|8|64|512", "D": "1024|4096|16384",
             "F": "1024|8192", "dtype": "bf16|fp8", "hardware": "h100|b200"}]  # fmt: skip
    a = analyze_rows(rows)
    results = chart_rows(a)
    groups = sweep_lines(results)
    assert set(groups) == {("h100", "B"), ("b200", "B")}
    (page,) = pages(groups[("h100", "B")])
    assert len(page) == 10 and {ln.of for ln in page} == {12}
    details = [ln.detail for ln in page]
    assert details[0] == "D=1024, F=1024, dtype=bf16"  # the first and the last kept
    assert details[-1] == "D=16384, F=8192, dtype=fp8"
    for value in ("D=4096", "F=8192", "dtype=fp8"):  # no dim seen at one value only
        assert any(value in d for d in details)
    data = sweep_data(results, chip(a, "h100"), a.summary.roofs["h100"], "B", page, 1, 1)
    assert data.title.endswith("as B grows (10 of 12 lines)")
    charts = [p.chart for p in planned_charts(a) if p.chart.kind == "sweep"]
    assert [(c.hardware, c.series) for c in charts] == [("b200", ("big",)), ("h100", ("big",))]
    assert charts[0].title == "b200: attainable FLOP/s vs B (10 of 12 lines)"


def test_series_share_a_chart_but_never_span_two():
    """Whole series fill a chart in order: 4 + 4 lines, then 4 more on the next chart."""
    rows = [{"name": f"s{i}", "op": "matmul", "B": "1|2|4", "D": "128|256|512|1024",
             "F": 128, "hardware": "v5e"} for i in range(3)]  # fmt: skip
    (lines,) = sweep_lines(chart_rows(analyze_rows(rows))).values()
    split = pages(lines)
    assert [[ln.series for ln in p] for p in split] == [["s0"] * 4 + ["s1"] * 4, ["s2"] * 4]
    assert all(ln.of == 0 for p in split for ln in p)
