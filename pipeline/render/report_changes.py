"""The report's "Since the baseline" section and the workbook's Changes sheet read the same
plain records, built here from a comparison (pipeline.model.changes.Changes): the counts per
kind of change, then the changes grouped by series and cause as changes.html groups them
(model.change_groups, worded by render.change_lines: the scenario edits first), a few
groups only: changes.csv has every change. Numbers are formatted by render.format."""

from __future__ import annotations

from pipeline.i18n import _
from pipeline.model.change_groups import group_changes
from pipeline.render import format as fmt
from pipeline.render.change_lines import group_lines

KINDS = ("bound", "fits", "critical_batch", "t_lower", "t_estimate", "added", "removed")
LABELS = {
    "bound": "bound flip",
    "fits": "fit change",
    "critical_batch": "critical-batch change",
    "t_lower": "time change",
    "t_estimate": "estimate change",
    "added": "added",
    "removed": "removed",
}
MAX_GROUPS = 12  # group lines the report shows; changes.csv has every change


def count_text(kind: str, n: int) -> str:
    """'3 bound flips', '1 fit change', '2 added': `n` changes of `kind`, in the current
    language (the templates word the same texts with the number in bold: _change_groups)."""
    one = n == 1
    shown = fmt.count(n)
    if kind == "bound":
        return _("{n} bound flip", n=shown) if one else _("{n} bound flips", n=shown)
    if kind == "fits":
        return _("{n} fit change", n=shown) if one else _("{n} fit changes", n=shown)
    if kind == "critical_batch":
        if one:
            return _("{n} critical-batch change", n=shown)
        return _("{n} critical-batch changes", n=shown)
    if kind == "t_lower":
        return _("{n} time change", n=shown) if one else _("{n} time changes", n=shown)
    if kind == "t_estimate":
        return _("{n} estimate change", n=shown) if one else _("{n} estimate changes", n=shown)
    if kind == "added":
        return _("{n} added", n=shown)
    return _("{n} removed", n=shown)


def changes_summary(baseline, limit: int | None = MAX_GROUPS) -> dict:
    """The records of a comparison (a run.baseline.Baseline: .path and .changes): the counts,
    a line of them, and the first `limit` groups (None: all) as change_lines words them."""
    changes = baseline.changes
    counts = {k: int(changes.counts.get(k, 0)) for k in KINDS}
    if not counts["t_estimate"]:  # a run without a calibration has no estimate to change
        del counts["t_estimate"]
    total = sum(counts.values())
    parts = [count_text(k, n) for k, n in counts.items()]
    grouped = group_changes(changes)
    return {
        "baseline": str(baseline.path),
        "compared": int(changes.compared),
        "total": total,
        "counts": [{"kind": k, "label": LABELS[k], "n": n} for k, n in counts.items()],
        "line": ", ".join(parts),
        "grouped": group_lines(grouped, limit),
        "order": grouped.order,  # the changes' rows in the groups' reading order
        "skipped": list(changes.skipped),
    }
