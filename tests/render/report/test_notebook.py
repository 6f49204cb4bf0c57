"""What a notebook shows, through IPython's display formatter (what Jupyter calls on a cell's
value): an Analysis as an escaped HTML table, each chart as the PNG a run writes."""

from __future__ import annotations

import dataclasses
import io
import re

import markupsafe
import pytest
from IPython.core.formatters import DisplayFormatter
from matplotlib.figure import Figure

import pipeline
from pipeline.render import format as fmt
from pipeline.render.charts import figure, png
from pipeline.render.report.notebook import NOTEBOOK_STEPS, render_analysis_html
from pipeline.render.text.fleet import FLEET_SERIES, first_sentences
from pipeline.render.text.serving import serving_sentences
from tests.helpers import (
    HOSTILE,
    PNG_MAGIC,
    ROOT,
    analyze_rows,
    planned_charts,
    serving_frames,
)


def shown(value) -> tuple[dict, dict]:
    """(data, metadata) by MIME type, as Jupyter gets them for a cell ending in `value`."""
    return DisplayFormatter().format(value)


def test_an_analysis_shows_as_html(book):
    data, _ = shown(book)
    assert data["text/html"] == render_analysis_html(book)
    assert data["text/plain"] == repr(book)  # a terminal still gets the one line
    html = data["text/html"]
    assert "<strong>Analysis of <code>scenarios/q1-q5.csv</code></strong>" in html
    assert "1,035 scenarios on 3 chips, 0 rejected rows, 0 warnings" in html
    assert (
        '<tr><td style="text-align:left">tpu-v5e</td><td style="text-align:right">666</td>'
        '<td style="text-align:right">365</td><td style="text-align:right">1</td>'
        '<td style="text-align:right">0</td><td style="text-align:right">1,032</td></tr>'
    ) in html
    # the answer first: the bottom line and the series table (as the report and workbook)
    assert "13 series (1,035 scenarios) on 3 chips" in html
    assert html.index("13 series") < html.index("q3_D4096") < html.index("1,035 scenarios on")
    assert "memory below B = 137, compute from B = 137" in html
    assert html.count("<tr>") == (1 + 13) + (1 + 3)  # series: heading + 13; chips: heading + 3


def test_counts_in_plural_and_rejected_rows_pointed_to():
    rows = [
        {"name": "one", "op": "matmul", "B": 1, "D": 2, "F": 3, "hardware": "v5e"},
        {"name": "typo", "op": "matmul", "B": 1, "D": 2, "F": 3, "hardware": "h10"},
    ]
    html = render_analysis_html(analyze_rows(rows))
    assert "1 scenario on 1 chip, 1 rejected row (see .problems), 0 warnings" in html


def test_no_scenario_shows_no_table():
    rows = [{"name": "typo", "op": "matmul", "B": 1, "D": 2, "F": 3, "hardware": "h10"}]
    html = render_analysis_html(analyze_rows(rows))
    assert "0 scenarios on 0 chips, 1 rejected row (see .problems)" in html
    assert "<table" not in html


@pytest.mark.parametrize("text", HOSTILE)
def test_untrusted_text_stays_text(text):
    rows = [{"name": text, "op": "matmul", "B": 1, "D": 2, "F": 3, "hardware": "v5e"}]
    html = render_analysis_html(pipeline.analyze(rows, name=text))  # the label is shown
    assert text not in html and f"<code>{markupsafe.escape(text)}</code>" in html


def test_every_chart_of_the_api_shows_as_its_png(book):
    figures = [
        pipeline.charts.summary(book),
        pipeline.charts.roofline(book, "tpu-v5e"),
        pipeline.charts.network(book, "tpu-v5e"),
        pipeline.charts.sweep(book, "v5e", "B"),
    ]
    for fig in figures:
        data, metadata = shown(fig)
        assert data["image/png"].startswith(PNG_MAGIC)
        assert data["image/png"] == fig._repr_png_()[0]
        assert metadata["image/png"] == {"width": round(fig.get_figwidth() * 100)}


def test_the_png_shown_is_the_png_a_run_writes(book):
    for chart in planned_charts(book):
        data = chart.build()
        assert figure(data)._repr_png_()[0] == png(data), chart.chart.path


def test_a_chart_is_still_a_matplotlib_figure(book):
    fig = pipeline.charts.sweep(book, "v5e", "B")
    assert isinstance(fig, Figure)
    out = io.BytesIO()
    fig.savefig(out, format="png")
    assert out.getvalue().startswith(PNG_MAGIC)


def test_a_plain_figure_shows_no_image():
    """Why the charts carry their own PNG: without pyplot no formatter knows a Figure."""
    fig = Figure()
    fig.subplots()
    assert "image/png" not in shown(fig)[0]


def test_each_fleet_series_answers_in_one_sentence_after_the_series_table():
    analysis = pipeline.analyze(ROOT / "scenarios" / "fleet.csv")
    html = render_analysis_html(analysis)
    pairs = first_sentences(analysis.summary.fleet)
    assert len(pairs) == 7
    at = [html.index(f"<li><strong>{name}</strong>: {sentence}</li>") for name, sentence in pairs]
    assert html.index("</table>") < html.index("Which chip, precision and chip count") < at[0]
    assert at == sorted(at) and at[-1] < html.index("418 scenarios on")
    assert "<code>.summary.fleet</code> has the ranking)" in html  # every fleet series shown


def test_fleet_series_names_stay_text_and_the_cap_is_counted():
    rows = [
        {"name": f"{HOSTILE[0]}{i}", "op": "matmul", "B": 8, "D": 64, "F": 64,
         "hardware": "v5e|h100"}
        for i in range(FLEET_SERIES + 1)
    ]  # fmt: skip
    html = render_analysis_html(analyze_rows(rows))
    assert HOSTILE[0] not in html and f"<strong>{markupsafe.escape(HOSTILE[0])}0</strong>" in html
    assert html.count("<li>") == FLEET_SERIES
    assert "; 1 more fleet series is only there" in html


def test_no_fleet_series_no_fleet_answer(book):
    assert "Which chip" not in render_analysis_html(book)


def _models_rows(html: str) -> list[str]:
    table = html[html.index("<strong>Models</strong>") :]
    table = table[: table.index("</table>")]
    return re.findall(r"<tr>(.*?)</tr>", table)[1:]


def test_the_models_table_comes_before_the_series_table():
    analysis = pipeline.analyze(ROOT / "scenarios" / "models.csv")
    html = render_analysis_html(analysis)
    steps = analysis.results[analysis.results["op"] == "transformer"]
    steps = steps.sort_values("t_lower", ascending=False, kind="stable")
    rows = _models_rows(html)
    assert len(rows) == min(len(steps), NOTEBOOK_STEPS)
    for row, (_, step) in zip(rows, steps.iterrows(), strict=False):  # the slowest first
        cells = re.findall(r"<td[^>]*>(.*?)</td>", row)
        assert cells[0] == step["name"]
        assert cells[6:8] == [fmt.seconds(step["t_lower"]), fmt.number(step["tokens_per_second"])]
    assert html.index("<strong>Models</strong>") < html.index(">series</th>")


def test_model_step_names_stay_text():
    step = {"op": "transformer", "model": "llama3-8b", "hardware": "h100", "B": 8, "T": 1,
            "S": 1024}  # fmt: skip
    html = render_analysis_html(analyze_rows([{"name": n, **step} for n in HOSTILE]))
    assert not any(n in html for n in HOSTILE)
    rows = _models_rows(html)
    assert [re.findall(r"<td[^>]*>(.*?)</td>", r)[0] for r in rows] == [
        str(markupsafe.escape(n)) for n in HOSTILE
    ]


def test_no_steps_no_models_table(book):
    assert "<strong>Models</strong>" not in render_analysis_html(book)


def test_a_calibrated_analysis_shows_floor_to_estimate_and_its_calibration(tmp_path):
    from tests.helpers import measured_rows

    path = tmp_path / "m.csv"
    measured_rows(30).to_csv(path, index=False)  # 25 rows a group at least
    pipeline.calibrate(path, tmp_path / "cal.toml")
    html = pipeline.analyze(path, calibration=tmp_path / "cal.toml")._repr_html_()
    assert "time (floor → estimate)" in html and "Times are floor → estimate" in html
    assert "time (t_lower)" in pipeline.analyze(path)._repr_html_()


def test_a_serve_run_shows_its_serving_table_before_the_steps(book):
    serving, curves = serving_frames()
    summary = dataclasses.replace(book.summary._summary, serving=serving, serving_curves=curves)
    html = render_analysis_html(dataclasses.replace(book, summary=summary))
    assert (
        "<p><strong>Serving llama3-70b</strong> (2,048 in / 256 out, TTFT ≤ 60.0 ms, TPOT ≤ "
        "15.0 ms): each configuration at its best batch, the most tokens/s per chip meeting the "
        "targets first</p>"
    ) in html
    assert (
        '<tr><td style="text-align:right">1</td><td style="text-align:left">b200 fp8 ×4</td>'
        '<td style="text-align:right">512</td><td style="text-align:right">16,181</td>'
        '<td style="text-align:right">16.1 ms</td><td style="text-align:right">7.91 ms</td>'
        '<td style="text-align:left">yes</td></tr>'
    ) in html
    # 10 configurations a series, the rest counted
    assert "and 6 more configurations: <code>.summary.serving</code> has them all" in html
    # before the series table: the answer of a serve run first
    assert html.index("Serving llama3-70b") < html.index('<th style="text-align:left">series</th>')
    assert "Serving" not in render_analysis_html(book)


def test_the_serving_answer_follows_the_bottom_line(book):
    serving, curves = serving_frames()
    serving.loc[0, "config"] = "<b>b200</b> fp8 ×4"  # stays text
    record = dataclasses.replace(
        book,
        summary=dataclasses.replace(book.summary._summary, serving=serving, serving_curves=curves),
    )
    html = render_analysis_html(record)
    said = [markupsafe.escape(s) for s in serving_sentences(serving)]
    assert len(said) == 2 and "&lt;b&gt;b200&lt;/b&gt; fp8 ×4 at batch" in said[0]
    at = [html.index(f"<p>{s}</p>") for s in said]
    assert html.index(fmt.count(book.summary.scenarios)) < at[0] < at[1]
    assert "<b>b200</b>" not in html
    assert serving_sentences(book.summary.serving) == []


def test_a_train_run_shows_its_answer_and_training_table(training, book):
    html = render_analysis_html(training)
    said = re.findall(r"<p>(llama3-70b on 15.0T tokens \(fsdp\).*?)</p>", html)
    assert len(said) == 1 and "40.3 days at 45.0% MFU" in said[0]
    assert (
        "<p><strong>Training fsdp</strong> (llama3-70b, 15.0T tokens, 16.0M tokens a step): each "
        "configuration, the fewest days first, those that do not fit in HBM last</p>"
    ) in html
    assert (
        '<tr><td style="text-align:right">1</td><td style="text-align:left">h100 bf16 ×4096 '
        'fsdp=4096</td><td style="text-align:right">40.3</td>'
    ) in html
    assert html.index("Training fsdp") < html.index('<th style="text-align:left">series</th>')
    assert "Training" not in render_analysis_html(book)
