"""Charts in Korean (DESIGN.md §14, issue 33): every chart kind a run draws, from the shipped
scenarios, plus the chips and calibration charts, built and encoded as PNG in Korean with
matplotlib's warnings as errors (a "Glyph ... missing from font" is a UserWarning), their
titles in Hangul, drawn with the NanumGothic of a Python dependency; English untouched."""

from __future__ import annotations

import re
import warnings

import pytest

import pipeline
from pipeline.calibration.estimate import ERRORS, estimate
from pipeline.calibration.fit import fit
from pipeline.calibration.groups import op_kinds
from pipeline.i18n import current_lang, use_lang
from pipeline.render.charts import figure, plan_charts
from pipeline.render.charts.calibration import (
    calibration_chart_data,
    calibration_figure,
    chart_labels,
)
from pipeline.render.charts.fonts import chart_rc
from pipeline.render.charts.step_sweep_data import model_frame
from pipeline.render.charts.style import png_bytes
from pipeline.summary.grids import chart_frame
from pipeline.summary.turns import sweep_lines
from tests.helpers import ROOT, analyze_file, analyze_rows, assert_png, figure_texts

HANGUL = re.compile("[\uac00-\ud7a3]")
SCENARIOS = ["q1-q5.csv", "collectives.csv", "models.csv", "fleet.csv"]
# the title each kind has in Korean (a word of it)
TITLE_WORDS = {"summary": "병목", "fleet": "칩", "model": "스텝 시간", "roofline": "루프라인",
               "network": "네트워크 루프라인", "sweep": "에 따른"}  # fmt: skip


def title_of(fig) -> str:
    """The chart's title: its largest figure text."""
    return max(fig.texts, key=lambda t: t.get_fontsize()).get_text()


def korean_png(build) -> tuple[object, bytes]:
    """`build()`'s Figure and its PNG, in Korean, any warning an error."""
    with use_lang("ko"), warnings.catch_warnings():
        warnings.simplefilter("error")
        fig = build()
        return fig, png_bytes(fig)


def planned(analysis):
    s = analysis.summary
    frame = chart_frame(analysis)
    return plan_charts(frame, list(analysis.hardware), s.per_hardware, s.overrides,
                       fleet=s.fleet, curves=s.fleet_curves, steps=model_frame(analysis),
                       roofs=s.roofs, lines=sweep_lines(frame))  # fmt: skip


@pytest.mark.parametrize("name", SCENARIOS)
def test_every_chart_a_run_draws_renders_in_korean_without_a_missing_glyph(name):
    analysis = analyze_file(ROOT / "scenarios" / name)
    with use_lang("ko"):
        charts = planned(analysis)
    assert charts
    kinds = set()
    for p in charts:
        assert HANGUL.search(p.chart.title), p.chart.title  # the report's name of it, too
        with use_lang("ko"):  # a run builds a chart's data in its language too
            data = p.build()
        if data is None:
            continue
        fig, png = korean_png(lambda data=data: figure(data))
        assert_png(png, (400, 300))
        drawn = figure_texts(fig)
        title = title_of(fig)
        assert TITLE_WORDS[p.chart.kind] in title, (p.chart.path, title)
        assert sum(bool(HANGUL.search(t)) for t in drawn) >= 3, (p.chart.path, drawn)
        kinds.add(p.chart.kind)
    if name == "q1-q5.csv":
        assert kinds == {"summary", "roofline", "network", "sweep"}
    if name == "fleet.csv":
        assert "fleet" in kinds
    if name == "models.csv":
        assert "model" in kinds


def test_the_chips_and_calibration_charts_render_in_korean():
    fig, png = korean_png(lambda: pipeline.charts.chips(["h100", "tpu-v5e", "b200"]))
    assert_png(png)
    assert title_of(fig) == "bf16 루프라인: 칩 3개"
    measured = analyze_file(ROOT / "scenarios" / "measured.csv").results
    fitted = fit(measured)
    t_estimate, _ = estimate(measured, fitted)
    errors = {k: getattr(fitted, k) for k in ERRORS}
    labels = chart_labels(measured, op_kinds(measured))

    def calibration():
        return calibration_figure(calibration_chart_data(measured, t_estimate, labels, errors))

    fig, png = korean_png(calibration)
    assert_png(png)
    assert title_of(fig) == "예측 시간 대 측정 시간"
    assert "보정 전: 루프라인 하한" in figure_texts(fig)


def test_lang_on_the_chart_functions_and_english_untouched(book):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        korean = pipeline.charts.roofline(book, "tpu-v5e", lang="ko")
        assert current_lang() == "en"  # only while the chart is built
        english = pipeline.charts.roofline(book, "tpu-v5e")
        korean_png_bytes = png_bytes(korean)  # drawn later, outside use_lang: still Korean
    assert title_of(korean).startswith("tpu-v5e 루프라인: 시나리오 ")
    assert title_of(english).startswith("tpu-v5e roofline: ")
    assert not any(HANGUL.search(t) for t in figure_texts(english))
    assert korean_png_bytes != png_bytes(english)
    assert "연산 병목" in " ".join(figure_texts(korean)) and "compute-bound" in " ".join(
        figure_texts(english)
    )
    assert not hasattr(english, "chart_rc") and chart_rc("en") == {}
    rejected = analyze_rows([{"name": "x", "op": "matmul", "B": 1, "D": 1, "F": 1,
                              "hardware": "nope"}])  # fmt: skip
    fig, png = korean_png(lambda: pipeline.charts.summary(rejected))
    assert "차트에 그릴 시나리오 없음: 행 1개 거부됨 (.problems 참고)" in figure_texts(fig)
