"""OUTPUT_DIR/index.html, the batch index page: one line per run, with its headline counts
and a relative link to its report (docs/outputs.md#several-inputs-indexhtml)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from urllib.parse import quote

from pipeline.errors import PipelineError
from pipeline.i18n import _
from pipeline.model.roofline import BOUNDS
from pipeline.render import format as fmt
from pipeline.render.report.changes import KINDS, count_text
from pipeline.render.templates import INDEX_TEMPLATE, environment

COUNTED = ("scenarios", *BOUNDS, "not_fitting", "rejected")  # an input's counts, summed
INDEX_KEYS = ("run_name", "input_path", "report_href", *COUNTED, "status")


def _relative_href(href: str) -> str:
    """A link to a run's report: relative paths only, URL-quoted (nothing external, no scheme)."""
    text = str(href).replace("\\", "/")
    if text.startswith(("/", "//")) or re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", text):
        raise PipelineError(f"index link '{href}' must be a relative path to a report")
    return quote(text, safe="/#")


def since_text(changes: dict) -> str:
    """A run's changes since its baseline in a few words, the kinds that changed alone:
    '2,220 changes: 160 bound flips, 2,060 time changes'; '0 changes'."""
    total, counts = int(changes.get("total", 0)), changes.get("counts", {})
    if not total:
        return _("0 changes")
    kinds = ", ".join(count_text(k, int(counts[k])) for k in KINDS if counts.get(k))
    return (_("{n} change: {kinds}") if total == 1 else _("{n} changes: {kinds}")).format(
        n=fmt.count(total), kinds=kinds
    )


def render_index(runs: list[dict], others: Sequence[dict] = ()) -> str:
    """OUTPUT_DIR/index.html: one line per run with its headline counts and report link;
    below them `others` (run.index.folder_entries: earlier runs and pages in the folder)."""
    rows = []
    for run in runs:
        missing = [k for k in INDEX_KEYS if k not in run]
        if missing:
            raise PipelineError(f"index entry {run.get('run_name', '?')!r} lacks {missing}")
        rec = {k: run[k] for k in INDEX_KEYS}
        rec["report_href"] = _relative_href(run["report_href"])
        rec["communication"] = run["memory"] + run["network"]
        rec["changes"] = run.get("changes")  # with a baseline: manifest.json's "changes"
        rec["since"] = since_text(rec["changes"]) if rec["changes"] is not None else None
        rows.append(rec)
    totals = {k: sum(int(r[k]) for r in rows) for k in COUNTED}
    totals["communication"] = totals["memory"] + totals["network"]
    compared = any(r["changes"] is not None for r in rows)
    also = [{**o, "href": _relative_href(o["href"])} for o in others]
    return (
        environment()
        .get_template(INDEX_TEMPLATE)
        .render(runs=rows, totals=totals, compared=compared, others=also)
    )
