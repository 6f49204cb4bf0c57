"""Which charts a run draws, in which order, under which safe, unique file names."""

from __future__ import annotations

import re

import pandas as pd
import pytest

import pipeline
from pipeline.render.charts import left_out_notice, plan_charts
from pipeline.render.charts.plan import safe_stem
from pipeline.render.charts.serving_data import ServingData
from pipeline.run.write import Options, _charts
from tests.helpers import chart_rows, planned_charts, serving_frames

BOOK_PATHS = [
    "plots/summary.png",
    "plots/roofline-h100.png",
    "plots/roofline-tpu-v5e.png",
    "plots/roofline-tpu-v6e.png",
    "plots/network-tpu-v5e.png",
    "plots/sweep-tpu-v5e-b.png",
]


def test_book_plan_has_one_chart_of_each_kind(book):
    charts = [p.chart for p in planned_charts(book)]
    assert [c.path for c in charts] == BOOK_PATHS
    assert [c.kind for c in charts] == ["summary", "roofline", "roofline", "roofline",
                                        "network", "sweep"]  # fmt: skip
    sweep = charts[-1]
    assert (sweep.hardware, sweep.series) == ("tpu-v5e", ("q3_D1024", "q3_D4096"))
    assert sweep.title == "tpu-v5e: attainable FLOP/s vs B"
    assert pipeline.charts.planned(book) == charts


def test_hostile_hardware_names_give_safe_unique_file_names(book):
    v5e = next(h for h in book.hardware if h["name"] == "tpu-v5e")
    rows = chart_rows(book, "tpu-v5e")
    rows = rows[rows["chips"] == 1]
    hostile = ["../../etc/passwd", "a/b", "a-b", r"$\alpha$ chip", "..", "CON\n"]
    results = pd.concat([rows.head(3).assign(hardware=h) for h in hostile], ignore_index=True)
    per_hardware = pd.DataFrame({"compute": 3, "memory": 0, "network": 0, "not_fitting": 0,
                                 "total": 3}, index=sorted(hostile))  # fmt: skip
    charts = [p.chart for p in plan_charts(results, [{**v5e, "name": h} for h in hostile],
                                           per_hardware, {})]  # fmt: skip
    files = [c.path.removeprefix("plots/") for c in charts]
    assert len(files) == len(set(files)) == len(hostile) + 1
    assert all(re.fullmatch(r"[a-z0-9][a-z0-9._-]*\.png", f) for f in files), files
    assert "roofline-etc-passwd.png" in files and "roofline-a-b-2.png" in files


@pytest.mark.parametrize(
    "text, stem",
    [
        ("tpu-v5e", "tpu-v5e"),
        ("../../etc/passwd", "etc-passwd"),
        ("a/b\\c", "a-b-c"),
        ("..", "x"),
        ("", "x"),
        ("Ünïcode Chip", "unicode-chip"),
        ("a..b", "a.b"),
        ("A" * 70, "a" * 60),  # cut at 60 characters
        ("a" * 59 + "-b", "a" * 59),  # and no '-' left at the cut
    ],
)
def test_safe_stem(text, stem):
    assert safe_stem(text) == stem


def test_left_out_notice_names_what_the_cap_dropped(book):
    planned = planned_charts(book)
    assert left_out_notice(planned[2:], 2, len(planned)) == (
        "Drew 2 of 6 charts (chart limit 2, --max-charts); left out 2 rooflines, 1 network "
        "roofline and 1 sweep chart (roofline-tpu-v5e.png, roofline-tpu-v6e.png, "
        "network-tpu-v5e.png, sweep-tpu-v5e-b.png)."
    )


def test_more_than_ten_sweep_lines_continue_on_a_second_chart(catalog):
    rows = [{"name": f"s{i:02d}", "op": "matmul", "B": "1|2|4", "D": 128 * (i + 1), "F": 128,
             "hardware": "v5e"} for i in range(12)]  # fmt: skip
    analysis = pipeline.analyze(rows, hardware=catalog)
    sweeps = [p.chart for p in planned_charts(analysis) if p.chart.kind == "sweep"]
    assert [c.path for c in sweeps] == [
        "plots/sweep-tpu-v5e-b-1.png",
        "plots/sweep-tpu-v5e-b-2.png",
    ]
    assert [len(c.series) for c in sweeps] == [10, 2]
    assert sweeps[1].title == "tpu-v5e: attainable FLOP/s vs B (2 of 2)"


def test_no_results_no_charts(book):
    assert plan_charts(chart_rows(book).head(0), [], book.summary.per_hardware.head(0), {}) == []


# a fleet series and a swept transformer step, each with a chart of its own, beside a sweep
OWN_CHARTS = [
    {"name": "fleet", "op": "matmul", "B": "1|8|64", "D": 4096, "F": 4096,
     "hardware": "h100|b200", "dtype": "bf16|fp8"},
    {"name": "decode", "op": "transformer", "model": "llama3-8b", "hardware": "h100",
     "B": "1|8|64", "T": 1, "S": 2048},
    {"name": "q3", "op": "matmul", "B": "1|8|64", "D": 4096, "F": 4096, "hardware": "h100"},
]  # fmt: skip


def test_a_series_with_a_chart_of_its_own_is_on_no_sweep_chart():
    """One chart per question: the fleet chart draws a fleet series, the model chart a swept
    step (its ops with it); the sweep charts draw the rest; every=True plans them all."""
    analysis = pipeline.analyze(OWN_CHARTS)
    charts = pipeline.charts.planned(analysis)
    assert [c.path for c in charts if c.kind in ("fleet", "model", "sweep")] == [
        "plots/fleet-fleet.png",
        "plots/model-decode.png",
        "plots/sweep-h100-b.png",
    ]
    assert charts[-1].series == ("q3",)
    every = pipeline.charts.planned(analysis, every=True)
    sweeps = [c for c in every if c.kind == "sweep"]
    assert {s for c in sweeps for s in c.series} >= {"fleet", "decode", "decode/q_proj", "q3"}
    assert [c for c in every if c.kind != "sweep"] == [c for c in charts if c.kind != "sweep"]


def test_the_dearest_charts_are_handed_out_first():
    """The workers take the charts dearest first (plan.KIND_COST), so that the last one drawn,
    which the workbook and the report wait for, is a cheap one: the model and fleet charts
    (0.3-0.6 s each) before the rooflines, the summary last; equal costs in plan order."""
    planned = _charts(pipeline.analyze(OWN_CHARTS), Options())  # as a run plans them
    order = [p.chart.path for p in sorted(planned, key=lambda p: -p.cost)]
    assert order[:2] == ["plots/model-decode.png", "plots/fleet-fleet.png"]
    assert order[-1] == "plots/summary.png"
    rooflines = [p.chart.path for p in planned if p.chart.kind == "roofline"]
    assert [p for p in order if p in rooflines] == rooflines


def test_a_roofline_takes_its_counts_and_density_from_the_whole_runs_grid():
    """One way for both engines: the local run's roofline, like a Dask run's, draws its
    counts and (past SCATTER_LIMIT points) its density from the whole run's grid."""
    analysis = pipeline.analyze([{"name": "a", "op": "matmul", "B": "1..6000", "D": 1024,
                                  "F": 1024, "hardware": "h100"}])  # fmt: skip
    assert analysis.summary.grids is not None
    (roofline,) = [p for p in planned_charts(analysis) if p.chart.kind == "roofline"]
    data = roofline.build()
    assert data.points.weight is not None and data.points.weight.sum() == 6000
    assert sum(data.counts.values()) == 6000 and data.title == "h100 roofline: 6,000 scenarios"


def test_a_serve_series_gets_its_serving_chart_after_the_summary(book):
    rows, s = chart_rows(book), book.summary
    serving, curves = serving_frames()
    args = (rows, list(book.hardware), s.per_hardware, s.overrides)
    planned = plan_charts(*args, serving=serving, serving_curves=curves)
    charts = [p.chart for p in planned]
    assert [c.path for c in charts[:3]] == [
        "plots/summary.png", "plots/serving-llama3-70b.png", "plots/serving-mixtral-8x7b.png"
    ]  # fmt: skip
    assert (charts[1].kind, charts[1].series) == ("serving", ("llama3-70b",))
    assert charts[1].title == "llama3-70b: tokens/s per chip against tokens/s per user"
    data = planned[1].build()
    assert isinstance(data, ServingData) and not data.cost
    # priced: a cost chart beside each serving chart
    serving, curves = serving_frames(prices={"h100": 2.5, "h200": 3.5, "b200": 5.0,
                                             "mi300x": 3.0})  # fmt: skip
    priced = plan_charts(*args, serving=serving, serving_curves=curves)
    assert [p.chart.path for p in priced[1:5]] == [
        "plots/serving-llama3-70b.png", "plots/serving-cost-llama3-70b.png",
        "plots/serving-mixtral-8x7b.png", "plots/serving-cost-mixtral-8x7b.png",
    ]  # fmt: skip
    assert priced[2].build().cost
    # no serve series: the plan as before
    empty = plan_charts(*args, serving=serving.iloc[:0], serving_curves=curves.iloc[:0])
    assert [p.chart for p in empty] == [p.chart for p in plan_charts(*args)]
    assert "1 serving chart" in left_out_notice(planned[1:2], 1, 2)
