"""The report's fleet answer (docs/outputs.md#the-fleet-answer): per fleet series its sentence
and its table (one line per fleet point, one column per chosen point of its sweep), worded by
render.text.fleet; here only the headings and the counts the template needs."""

from __future__ import annotations

import pandas as pd

from pipeline.i18n import _
from pipeline.model.roofline import BOUNDS
from pipeline.render.text.fleet import FLEET_SERIES, fits_reading, fleet_answers


def column_heading(column: dict) -> tuple[str, str]:
    """A chosen point as a table heading's two lines: ('B = 256', 'critical batch'); a series
    of fleet axes alone has one point and no swept value: ('t_lower', '')."""
    at, point = column["at"], column["point"]
    if not at:
        return "t_lower", ""
    words = {"first": _("first"), "critical batch": _("critical batch"), "last": _("last")}
    return at, "" if point == "only" else words.get(point, point)


def fleet_context(
    fleet: pd.DataFrame, limit: int = FLEET_SERIES, charts: dict | None = None
) -> dict:
    """The fleet section's variables: the first `limit` fleet series' answers (each column
    with its heading, and its fleet chart from `charts`, series -> chart record, if drawn),
    the bounds their cells show, how many fleet series there are and what the Fits in HBM
    column counts."""
    charts = charts or {}
    answers = [
        {
            **a,
            "columns": [{**c, "heading": column_heading(c)} for c in a["columns"]],
            "chart": charts.get(a["series"]),
        }
        for a in fleet_answers(fleet, limit)
    ]
    shown = {c["bound"] for a in answers for r in a["rows"] for c in r["cells"] if c}
    total = int(fleet["series"].nunique()) if not fleet.empty else 0
    return {
        "series": answers,
        "bounds": [b for b in BOUNDS if b in shown],
        "total": total,
        "more": total - len(answers),
        "fits_reading": fits_reading(),  # what the Fits in HBM column counts
    }
