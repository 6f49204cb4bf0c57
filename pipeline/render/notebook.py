"""An analysis as HTML in a notebook (Jupyter shows `Analysis._repr_html_`): the run in one
line and the bound counts per chip, through the report's Jinja environment (autoescaped)."""

from __future__ import annotations

from pipeline.record import Record
from pipeline.render import format as fmt
from pipeline.render.templates import environment

NOTEBOOK_TEMPLATE = "notebook.html.j2"
# per_hardware column -> its heading
COLUMNS = {
    "compute": "compute-bound",
    "memory": "memory-bound",
    "network": "network-bound",
    "not_fitting": "not fitting in HBM",
    "total": "scenarios",
}


def notebook_data(record: Record) -> dict:
    """What the notebook template shows, as plain values."""
    s = record.summary
    per_hardware = s.per_hardware
    chips = [
        {"name": str(name), **{c: int(row[c]) for c in COLUMNS}}
        for name, row in per_hardware.iterrows()
    ]
    rejected = fmt.plural(s.rejected_rows, "rejected row")
    headline = ", ".join(
        [
            f"{fmt.plural(s.scenarios, 'scenario')} on {fmt.plural(len(chips), 'chip')}",
            rejected + (" (see .problems)" if s.rejected_rows else ""),
            fmt.plural(len(record.warnings), "warning"),
        ]
    )
    return {"source": record.source, "headline": headline, "chips": chips, "columns": COLUMNS}


def render_analysis_html(record: Record) -> str:
    """The analysis as an HTML fragment for a notebook cell's output."""
    return environment().get_template(NOTEBOOK_TEMPLATE).render(**notebook_data(record))
