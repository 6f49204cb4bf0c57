"""An analysis as HTML in a notebook (Jupyter shows `Analysis._repr_html_`): the bottom line
and the series table first (render/text/answer.py, as the report and the workbook; before it the
Serving table when the run has serve rows: render/text/serving_table.py, the Training table
when it has train rows: render/text/training.py, and the Models table
when it has transformer steps: render/text/steps_table.py), each fleet
series' answer in one sentence (render/text/fleet.py), then the run in one line and the bound
counts per chip, through the report's Jinja environment (autoescaped)."""

from __future__ import annotations

from pipeline.i18n import _
from pipeline.record import Record
from pipeline.render import format as fmt
from pipeline.render.templates import environment
from pipeline.render.text.answer import (
    bottom_line,
    calibration_sentence,
    scenarios_text,
    series_rows,
)
from pipeline.render.text.fleet import first_sentences
from pipeline.render.text.serving import serving_sentences
from pipeline.render.text.serving_table import serving_tables
from pipeline.render.text.steps_table import models_table
from pipeline.render.text.training import training_sentences, training_tables

NOTEBOOK_TEMPLATE = "notebook.html.j2"
NOTEBOOK_SERIES = 20  # series lines a cell shows (the rest: .summary.lines)
NOTEBOOK_STEPS = 20  # model steps a cell shows (the rest: .results, op transformer)
NOTEBOOK_SERVING = (5, 10)  # serve series a cell shows, configurations each (.summary.serving)
NOTEBOOK_TRAINING = (5, 10)  # train series a cell shows, configurations each (.summary.training)
# the per_hardware columns shown (headings: columns())
COLUMNS = ("compute", "memory", "network", "not_fitting", "total")


def columns() -> dict[str, str]:
    """Per per_hardware column of COLUMNS, its heading in the current language."""
    return {
        "compute": _("compute-bound"),
        "memory": _("memory-bound"),
        "network": _("network-bound"),
        "not_fitting": _("not fitting in HBM"),
        "total": _("scenarios"),
    }


def notebook_data(record: Record) -> dict:
    """What the notebook template shows, as plain values."""
    s = record.summary
    per_hardware = s.per_hardware
    chips = [
        {"name": str(name), **{c: int(row[c]) for c in COLUMNS}}
        for name, row in per_hardware.iterrows()
    ]
    rejected = (
        fmt.counted(s.rejected_rows, _("{n} rejected row (see .problems)"),
                    _("{n} rejected rows (see .problems)"))
        if s.rejected_rows
        else _("{n} rejected rows", n=fmt.count(0))
    )  # fmt: skip
    chips_text = fmt.counted(len(chips), _("{n} chip"), _("{n} chips"))
    headline = ", ".join([
        _("{scenarios} on {chips}", scenarios=scenarios_text(s.scenarios), chips=chips_text),
        rejected,
        fmt.counted(len(record.warnings), _("{n} warning"), _("{n} warnings")),
    ])  # fmt: skip
    lines = series_rows(record, NOTEBOOK_SERIES)
    fleet = first_sentences(s.fleet)
    return {
        "source": record.source,
        "answer": bottom_line(s.bottom),
        "calibration": calibration_sentence(s.calibration),  # which one, its error; or None
        "serving_answer": serving_sentences(s.serving),  # per serve series and model
        "training_answer": training_sentences(s.training),  # per train series
        "estimated": any(r.get("estimate") for r in lines),
        # per serve series its configurations, before the steps
        "serving": serving_tables(s.serving, *NOTEBOOK_SERVING),
        "training": training_tables(s.training, *NOTEBOOK_TRAINING),  # after serving
        "models": models_table(record, NOTEBOOK_STEPS),  # per step, before the series
        "series": lines,
        "more_series": max(0, len(s.lines) - len(lines)),
        "fleet": fleet,  # (series, sentence): which chip, dtype, chip count is fastest
        "more_fleet": int(s.fleet["series"].nunique()) - len(fleet) if fleet else 0,
        "headline": headline,
        "chips": chips,
        "columns": columns(),
    }


def render_analysis_html(record: Record) -> str:
    """The analysis as an HTML fragment for a notebook cell's output."""
    return environment().get_template(NOTEBOOK_TEMPLATE).render(**notebook_data(record))
