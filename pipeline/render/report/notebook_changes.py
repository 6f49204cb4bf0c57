"""A comparison as HTML in a notebook (Jupyter shows `Comparison._repr_html_`): the counts
per kind of change, the changes grouped and worded as changes.html words them
(the comparison's groups, pipeline.render.text.changes: per origin, cause and series),
then the first bound flips, through the report's Jinja environment (autoescaped). A few
groups and flips only: `.table` has every change."""

from __future__ import annotations

from pipeline.changes.compare import Changes
from pipeline.i18n import _
from pipeline.render.report.changes import KINDS, LABELS
from pipeline.render.templates import environment
from pipeline.render.text.answer import bound_word
from pipeline.render.text.changes import group_lines

NOTEBOOK_CHANGES_TEMPLATE = "notebook_changes.html.j2"
NOTEBOOK_GROUPS = 12  # groups (a series and a cause each) a cell shows
NOTEBOOK_FLIPS = 10  # bound flips a cell shows


def comparison_data(changes: Changes, old_label: str, new_label: str) -> dict:
    """What the notebook template shows of a comparison, as plain values."""
    counts = [{"kind": k, "label": LABELS[k], "n": int(changes.counts.get(k, 0))} for k in KINDS]
    flips = changes.table.iloc[changes.groups.order]  # in reading order, as the groups
    flips = flips[flips["change"] == "bound"]
    return {
        "old": old_label,
        "new": new_label,
        "compared": int(changes.compared),
        "total": sum(c["n"] for c in counts),
        "counts": counts,
        "groups": group_lines(changes.groups, NOTEBOOK_GROUPS),
        "flips": [
            {
                "name": r.name,
                "hardware": r.hardware,
                "old": bound_word(r.old),
                "new": bound_word(r.new),
                "cause": r.causes or _("no input differs"),
            }
            for r in flips.head(NOTEBOOK_FLIPS).itertuples(index=False)
        ],  # fmt: skip
        "more_flips": max(0, len(flips) - NOTEBOOK_FLIPS),
        "skipped": list(changes.skipped),
    }


def render_comparison_html(changes: Changes, old_label: str, new_label: str) -> str:
    """The comparison as an HTML fragment for a notebook cell's output."""
    template = environment().get_template(NOTEBOOK_CHANGES_TEMPLATE)
    return template.render(**comparison_data(changes, old_label, new_label))
