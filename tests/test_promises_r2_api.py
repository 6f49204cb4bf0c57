"""Issue 16, round two of the hostile-user probe: the public API. One test per finding (R6,
R16, R24, R25), each failing on the code before its fix."""

from __future__ import annotations

import json
import pickle
import re
from contextlib import suppress
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

import pipeline
from pipeline.errors import printable, quoted
from pipeline.render.charts import figure
from pipeline.render.charts.style import new_figure
from tests.helpers import fixed, planned_charts

ROWS = [
    {"name": "mm", "op": "matmul", "B": 256, "D": 4096, "F": 4096, "hardware": "v5e"},
    {"name": "bad", "op": "matmul", "B": 1, "D": 2, "F": 3, "hardware": "h10"},
    {"name": "sweep", "op": "matmul", "B": "1|2|4", "D": 128, "F": 128, "hardware": "h100"},
    {"name": "big", "op": "matmul", "B": 8, "D": 2**20, "F": 2**20, "hardware": "v5e"},
    {"name": "ag", "op": "allgather", "bytes": "1024|1e9", "chips": 8, "hardware": "v5e"},
]
REJECTED = [{"name": "typo", "op": "matmul", "B": 1, "D": 2, "F": 3, "hardware": "h10"}]


def _mutate_frame(frame: pd.DataFrame) -> None:
    """Every in-place change a notebook might make to a frame it was handed."""
    numbers = frame.select_dtypes("number").columns
    if len(numbers) and len(frame):
        frame.loc[:, numbers] = -5
    frame.index.name = "changed"
    frame.columns.name = "changed"
    frame.attrs["changed"] = True
    if len(frame.columns):
        del frame[frame.columns[0]]
    frame["changed"] = 1


def _mutate_everything(a: pipeline.Analysis) -> None:
    """Change whatever the public attributes of `a` reach; refusals are fine."""

    def attempts():
        for rec in a.hardware:
            yield lambda r=rec: r.__setitem__("hbm_bandwidth", 1.0)
            yield lambda r=rec: r.update(peak_bf16=1.0, name="changed")
            yield lambda r=rec: r.pop("name")
            yield rec.clear
        s = a.summary
        for table in ("per_hardware", "per_op", "critical_batches", "derated", "series"):
            yield lambda t=table: _mutate_frame(getattr(s, t))
        for mapping in (s.bounds, s.overrides, s.findings, a.timings):
            for key, value in list(mapping.items()):
                if isinstance(value, pd.DataFrame):
                    yield lambda v=value: _mutate_frame(v)
                yield lambda m=mapping, k=key: m.__setitem__(k, -5)
            yield mapping.clear
        for frame in (a.results, a.inputs, a.problems):
            yield lambda f=frame: _mutate_frame(f)
        yield lambda: setattr(s, "scenarios", -5)
        yield lambda: setattr(a, "summary", None)

    for attempt in attempts():
        with suppress(TypeError, AttributeError):
            attempt()


def _state(a: pipeline.Analysis) -> dict:
    """What an analysis says about itself, as plain values."""
    s = a.summary
    return {
        "repr": repr(a),
        "hardware": [dict(r) for r in a.hardware],
        "counts": (s.scenarios, s.rejected_rows, s.problems, dict(s.bounds), dict(s.overrides)),
        "tables": [getattr(s, t).to_json() for t in ("per_hardware", "per_op", "series")],
        "critical": s.critical_batches.astype(str).to_json(),
        "findings": {k: _plain(v) for k, v in s.findings.items()},
        "results": a.results.to_json(),
        "inputs": a.inputs.to_json(),
        "timings": dict(a.timings),
    }


def _plain(value):
    return value.to_json() if isinstance(value, pd.DataFrame) else value


def _written(a: pipeline.Analysis, folder) -> tuple[str, dict]:
    a.write(folder, plots=False, workbook=False)
    manifest = json.loads((folder / "manifest.json").read_text())
    for key in ("files", "timings_seconds"):
        manifest.pop(key)
    return (folder / "report.html").read_text(), manifest


def test_r06_nothing_reachable_from_an_analysis_changes_it(tmp_path):
    kept, changed = fixed(pipeline.analyze(ROWS)), fixed(pipeline.analyze(ROWS))
    before = _state(changed)
    _mutate_everything(changed)
    assert _state(changed) == before
    assert _written(changed, tmp_path / "a" / "run") == _written(kept, tmp_path / "b" / "run")
    # still a value: pickles, copies of its records are plain dicts to change
    again = pickle.loads(pickle.dumps(changed))
    assert _state(again) == before
    record = dict(changed.hardware[0])
    record["hbm_bandwidth"] = 1.0
    with pytest.raises(TypeError, match="read-only"):
        changed.hardware[0]["hbm_bandwidth"] = 1.0


def test_r16_charts_of_an_analysis_with_nothing_to_draw():
    a = pipeline.analyze(REJECTED)
    fig = pipeline.charts.summary(a)
    assert isinstance(fig, Figure)
    texts = " ".join(t.get_text() for t in fig.texts)
    assert "no scenarios to chart" in texts and "1 row rejected" in texts
    assert pipeline.charts.planned(a) == []
    for chart in (pipeline.charts.roofline, pipeline.charts.network, pipeline.charts.sweep):
        with pytest.raises(pipeline.PipelineError, match="no scenario was computed"):
            chart(a, "h100")
    # a chip of the catalog (or the user's) that no row runs on
    b = pipeline.analyze(ROWS)
    for chart in (pipeline.charts.roofline, pipeline.charts.network, pipeline.charts.sweep):
        with pytest.raises(pipeline.UnknownHardware, match="chips used: h100, tpu-v5e"):
            chart(b, "tpu-v6e")
    # arguments of the wrong type: a clear TypeError, not whatever breaks first
    for call, what in (
        (lambda: pipeline.charts.summary(ROWS), "an Analysis"),
        (lambda: pipeline.charts.roofline(b, 5), "hardware must be"),
        (lambda: pipeline.charts.sweep(b, "h100", 5), "dim must be"),
        (lambda: pipeline.charts.sweep(b, "h100", "B", "2"), "page must be"),
        (lambda: pipeline.charts.sweep(b, "h100", "B", True), "page must be"),
    ):
        with pytest.raises(TypeError, match=what):
            call()
    with pytest.raises(ValueError, match="page must be 1 to 1, not 2"):
        pipeline.charts.sweep(b, "h100", "B", 2)


def test_r24_analyze_checks_its_arguments():
    cases = [
        ({"max_rows": "5"}, TypeError, "max_rows must be a whole number .*not '5' \\(str\\)"),
        ({"max_rows": True}, TypeError, "max_rows must be a whole number .*not True"),
        ({"max_rows": 5.0}, TypeError, "max_rows must be a whole number .*not 5.0"),
        ({"max_rows": None}, TypeError, "max_rows must be a whole number"),
        ({"max_rows": 0}, ValueError, "max_rows must be 1 to 100,000,000, not 0"),
        ({"strict": "yes"}, TypeError, "strict must be True or False, not 'yes'"),
        ({"strict": 1}, TypeError, "strict must be True or False, not 1"),
        ({"name": 5}, TypeError, "name must be a str or None, not 5"),
        ({"name": b"x"}, TypeError, "name must be a str or None"),
    ]
    for kwargs, error, message in cases:
        with pytest.raises(error, match=message):
            pipeline.analyze(ROWS, **kwargs)
    a = pipeline.analyze(ROWS, max_rows=np.int64(100), strict=False, name="sheet")
    assert a.problem_list[0].file == "sheet"


BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"


def test_r25_bidi_controls_are_escaped_in_messages():
    text = "h100\u202e" + "vsc.txt" + BIDI
    shown = printable(text)
    assert not set(BIDI) & set(shown)
    assert shown.startswith("h100\\u202evsc.txt\\u202a\\u202b")
    assert shown.endswith("\\u200e\\u200f\\u061c")
    assert quoted("a\u202eb") == "'a\\u202eb'"
    a = pipeline.analyze([{**REJECTED[0], "hardware": "h1\u202e00"}])
    assert "\\u202e" in str(a.problem_list[0]) and "\u202e" not in str(a.problem_list[0])


def test_r25_long_series_names_are_shortened_to_fit_the_sweep_legend():
    from pipeline.render.charts.labels import fit_text  # new with the fix

    fig = new_figure()
    renderer = fig.canvas.get_renderer()
    long = "s" * 300
    fitted = fit_text(fig, long, ": compute-bound from B = 512", 400, 8.5)
    assert fitted.endswith("…: compute-bound from B = 512") and fitted.startswith("sss")
    probe = fig.text(0, 0, fitted, fontsize=8.5)
    assert probe.get_window_extent(renderer).width <= 400
    assert fit_text(fig, "short", ": tail", 400, 8.5) == "short: tail"
    assert fit_text(fig, "x" * 300, "y" * 300, 200, 8.5).endswith("…")

    name = "very-long-series-" + "x" * 283
    rows = [
        {"name": name, "op": "matmul", "B": "1..512*2", "D": 8192, "F": 8192, "hardware": "h100"},
        {"name": name + "2", "op": "matmul", "B": "1..512*2", "D": "4096|8192", "F": 8192,
         "hardware": "h100"},
        {"name": "short", "op": "matmul", "B": "1..512*2", "D": 1024, "F": 8192,
         "hardware": "h100"},
    ]  # fmt: skip
    a = pipeline.analyze(rows)
    labels = _legend_inside(pipeline.charts.sweep(a, "h100", "B"))
    assert any("…" in t and "(D=4096)" in t for t in labels), labels
    # each line says where it turns compute-bound: its exact critical batch (issue 18)
    assert all(re.search(r": compute-bound from B = (319|332|437)$", t) for t in labels), labels
    # labels longer than the chart text limit (the chart data's own): cut to fit, the line's
    # other dims and where it turns compute-bound kept
    (data,) = [p.build() for p in planned_charts(a) if p.chart.kind == "sweep"]
    lines = [
        replace(ln, label="L" * 300 + (f" ({ln.detail})" * bool(ln.detail))) for ln in data.lines
    ]
    labels = _legend_inside(figure(replace(data, lines=tuple(lines))))
    assert all(t.startswith("LLL") and "L…" in t for t in labels), labels
    assert sorted(t[t.index("…") :] for t in labels) == [
        "… (D=4096): compute-bound from B = 332",
        "… (D=8192): compute-bound from B = 319",
        "…: compute-bound from B = 319",
        "…: compute-bound from B = 437",
    ]


def _legend_inside(fig) -> list[str]:
    """The legend's texts, once checked to lie inside the figure."""
    fig.canvas.draw()
    (legend,) = fig.legends
    box, frame = legend.get_window_extent(fig.canvas.get_renderer()), fig.bbox
    assert frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0, (box, frame)
    return [t.get_text() for t in legend.get_texts()]
