"""The report's Training table (docs/outputs.md#training): per train series its configurations,
the fewest days first (render.text.training), each with its training chart under it, and the
training answer's sentences the first screen says; here only what the template needs besides
the records."""

from __future__ import annotations

import pandas as pd

from pipeline.render.text.training import TRAINING_SERIES, training_sentences, training_tables


def training_context(
    training: pd.DataFrame, charts: dict | None = None, limit: int = TRAINING_SERIES
) -> dict:
    """The Training section's variables: the first `limit` train series' tables, each with its
    charts from `charts` (series -> chart records), whether any line is an estimate, how many
    series are left out, and `answer`: a sentence per train series for the first screen."""
    charts = charts or {}
    tables = training_tables(training, limit)
    series = [{**s, "charts": charts.get(s["series"], [])} for s in tables["series"]]
    return {
        **tables,
        "series": series,
        "estimated": any(s["estimated"] for s in series),
        "answer": training_sentences(training),
    }
