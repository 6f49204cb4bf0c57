"""The report's Serving table (docs/outputs.md#the-serving-table-and-chart): per serve series
its configurations at their best batch (render.text.serving_table), each with its serving
charts beside it; here only what the template needs besides the records."""

from __future__ import annotations

import pandas as pd

from pipeline.render.text.serving_table import SERVING_SERIES, serving_tables


def serving_context(
    serving: pd.DataFrame, charts: dict | None = None, limit: int = SERVING_SERIES
) -> dict:
    """The Serving section's variables: the first `limit` serve series' tables, each with its
    charts from `charts` (series -> chart records, the serving chart first), whether any line
    is an estimate, and how many series are left out."""
    charts = charts or {}
    tables = serving_tables(serving, limit)
    series = [{**s, "charts": charts.get(s["series"], [])} for s in tables["series"]]
    return {
        **tables,
        "series": series,
        "estimated": any(s["estimated"] for s in series),
        "targets": any(s["targets"] for s in series),
    }
