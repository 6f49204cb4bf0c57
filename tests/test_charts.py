"""pipeline.charts: each chart of an analysis as a matplotlib Figure for a notebook, chips named
by any alias, and what is missing said when a chart cannot be drawn."""

from __future__ import annotations

import dataclasses

import pytest
from matplotlib.figure import Figure

import pipeline
from pipeline.errors import UnknownSeries
from pipeline.render.charts import png
from pipeline.render.charts.serving_data import serving_data
from tests.helpers import ROOT, analyze_file, analyze_rows, assert_png, serving_frames


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


@pytest.fixture(scope="module")
def fleet_analysis():
    from tests.helpers import ROOT, analyze_file

    return analyze_file(ROOT / "scenarios" / "fleet.csv")


def test_fleet_chart_of_a_series_and_what_is_missing(fleet_analysis, book):
    assert isinstance(pipeline.charts.fleet(fleet_analysis, "mlp_bf16"), Figure)
    assert isinstance(pipeline.charts.fleet(fleet_analysis, "tp"), Figure)  # bars
    with pytest.raises(UnknownSeries, match=r"no series 'mlp_bf1' \(did you mean 'mlp_bf16'\?\); "
                       "fleet series: mlp_bf16, mlp_fp8, decode_fp4, tp, allreduce"):  # fmt: skip
        pipeline.charts.fleet(fleet_analysis, "mlp_bf1")
    with pytest.raises(UnknownSeries, match="'q3_D1024' is not a fleet series .*there is no fleet"):
        pipeline.charts.fleet(book, "q3_D1024")
    with pytest.raises(TypeError, match="series must be a series' name"):
        pipeline.charts.fleet(fleet_analysis, 3)


def test_a_run_writes_a_fleet_chart_per_fleet_series(fleet_analysis, tmp_path):
    from tests.helpers import assert_png

    charts = [c for c in pipeline.charts.planned(fleet_analysis) if c.kind == "fleet"]
    assert [c.path for c in charts][:2] == ["plots/fleet-mlp_bf16.png", "plots/fleet-mlp_fp8.png"]
    assert charts[0].series == ("mlp_bf16",) and len(charts) == 7
    folder = fleet_analysis.write(tmp_path / "fleet", workbook=False, report=False).folder
    for c in charts:
        assert_png((folder / c.path).read_bytes())


def test_at_most_twenty_fleet_charts_and_a_notice_of_the_rest():
    from pipeline.render.charts import fleet_cap_notice

    rows = [{"name": f"s{i}", "op": "matmul", "B": 64, "D": 1024, "F": 1024,
             "hardware": "h100|b200"} for i in range(21)]  # fmt: skip
    a = analyze_rows(rows)
    fleet = [c for c in pipeline.charts.planned(a) if c.kind == "fleet"]
    assert len(fleet) == 20 and fleet[-1].series == ("s19",)
    assert fleet_cap_notice(a.summary.fleet) == (
        "Drew fleet charts of the first 20 of 21 fleet series (at most 20 a run); every "
        "series' ranking is in summary.json."
    )


@pytest.fixture(scope="module")
def models_analysis():
    from tests.helpers import ROOT, analyze_file

    return analyze_file(ROOT / "scenarios" / "models.csv")


def test_model_chart_of_a_swept_step_and_what_is_missing(models_analysis, book):
    fig = pipeline.charts.model(models_analysis, "llama3_8b_decode_sweep")
    assert isinstance(fig, Figure) and len(fig.get_axes()) == 2
    with pytest.raises(UnknownSeries, match=r"no series 'llama3_8b_decode_swep' \(did you mean "
                       r"'llama3_8b_decode_sweep'\?\); swept steps: llama3_8b_decode_sweep$"):  # fmt: skip
        pipeline.charts.model(models_analysis, "llama3_8b_decode_swep")
    for unswept in ("llama3_8b_decode_h100", "llama3_8b_decode_sweep/q_proj"):
        with pytest.raises(UnknownSeries, match=f"'{unswept}' is not a transformer step swept "
                           "over B or S .*; swept steps: llama3_8b_decode_sweep$"):  # fmt: skip
            pipeline.charts.model(models_analysis, unswept)
    with pytest.raises(UnknownSeries, match="'q3_D1024' is not a .*; there is no swept step$"):
        pipeline.charts.model(book, "q3_D1024")
    with pytest.raises(UnknownSeries, match="^no series 'x'; there is no swept step$"):
        pipeline.charts.model(book, "x")
    with pytest.raises(TypeError, match="series must be a series' name"):
        pipeline.charts.model(models_analysis, 3)
    with pytest.raises(TypeError, match="expected an Analysis"):
        pipeline.charts.model("scenarios/models.csv", "llama3_8b_decode_sweep")


def test_a_run_writes_a_model_chart_per_swept_step(models_analysis, tmp_path):
    from tests.helpers import assert_png

    charts = [c for c in pipeline.charts.planned(models_analysis) if c.kind == "model"]
    assert [(c.path, c.series) for c in charts] == [
        ("plots/model-llama3_8b_decode_sweep.png", ("llama3_8b_decode_sweep",))
    ]
    folder = models_analysis.write(tmp_path / "m", workbook=False, report=False).folder
    assert_png((folder / "plots/model-llama3_8b_decode_sweep.png").read_bytes(), (1400, 700))


def test_serving_chart_of_a_serve_series_and_what_is_missing(book):
    serving, curves = serving_frames(prices={"h100": 2.5, "h200": 3.5, "b200": 5.0,
                                             "mi300x": 3.0})  # fmt: skip
    summary = dataclasses.replace(book.summary._summary, serving=serving, serving_curves=curves)
    served = dataclasses.replace(book, summary=summary)
    fig = pipeline.charts.serving(served, "llama3-70b")
    assert isinstance(fig, Figure) and fig.get_axes()
    assert fig.texts[0].get_text() == "llama3-70b: tokens/s per chip against tokens/s per user"
    cost = pipeline.charts.serving(served, "llama3-70b", cost=True)
    assert cost.axes[0].get_ylabel() == "USD per million tokens (cheaper below)"
    with pytest.raises(UnknownSeries, match=r"no series 'llama3-7b' \(did you mean 'llama3-70b'"
                       r"\?\); serve series: llama3-70b, mixtral-8x7b"):  # fmt: skip
        pipeline.charts.serving(served, "llama3-7b")
    with pytest.raises(UnknownSeries, match="'q3_D1024' is not a serve series .*there is no serve"):
        pipeline.charts.serving(book, "q3_D1024")
    unpriced = dataclasses.replace(
        book, summary=dataclasses.replace(summary, serving_curves=curves.iloc[:, :9])
    )
    with pytest.raises(ValueError, match="cost=True needs prices"):
        pipeline.charts.serving(unpriced, "llama3-70b", cost=True)
    assert [c.path for c in pipeline.charts.planned(served) if c.kind == "serving"][:2] == [
        "plots/serving-llama3-70b.png", "plots/serving-cost-llama3-70b.png"
    ]  # fmt: skip


def test_a_serve_run_draws_a_serving_chart_per_serve_series():
    a = analyze_file(ROOT / "scenarios" / "serving.csv")
    charts = [c for c in pipeline.charts.planned(a) if c.kind == "serving"]
    assert [c.path for c in charts] == ["plots/serving-llama3-70b.png",
                                        "plots/serving-mixtral-8x7b.png",
                                        "plots/serving-llama3-70b-by-batch.png"]  # fmt: skip
    fig = pipeline.charts.serving(a, "mixtral-8x7b")
    (ax,) = fig.axes
    lines = [ln for ln in ax.get_lines() if ln.get_label().split(". ")[0].isdigit()]
    assert len(lines) == len(a.summary.serving.query("series == 'mixtral-8x7b'"))
    s = a.summary
    assert_png(png(serving_data(s.serving, s.serving_curves, "llama3-70b")))


def test_training_chart_of_a_train_series_and_what_is_missing(training, book):
    fig = pipeline.charts.training(training, "fsdp")
    assert isinstance(fig, Figure) and fig.get_axes()
    assert fig.texts[0].get_text() == "fsdp: step time against chips"
    assert pipeline.charts.training(training, "tp").axes[0].get_xlabel() == "Chips"
    with pytest.raises(UnknownSeries, match=r"no series 'fsd' \(did you mean 'fsdp'\?\); "
                       r"train series: fsdp, tp"):  # fmt: skip
        pipeline.charts.training(training, "fsd")
    with pytest.raises(UnknownSeries, match="'q3_D1024' is not a train series .*there is no train"):
        pipeline.charts.training(book, "q3_D1024")
    for chart in (pipeline.charts.training, pipeline.charts.serving):
        with pytest.raises(TypeError, match="series must be a series' name"):
            chart(training, 5)
    assert [c.path for c in pipeline.charts.planned(training) if c.kind == "training"] == [
        "plots/training-fsdp.png"
    ]
