"""The report's "Since the baseline" section and the workbook's Changes sheet read the same
plain records, built here from a comparison (pipeline.changes.compare.Changes): the counts per
kind of change, then the changes grouped by series and cause as changes.html groups them
(the comparison's own, worded by render.text.changes: the scenario edits first), a few
groups only: changes.csv has every change. Numbers are formatted by render.format."""

from __future__ import annotations

from pipeline.i18n import _
from pipeline.render import format as fmt
from pipeline.render.text.changes import group_lines

KINDS = ("bound", "fits", "critical_batch", "t_lower", "t_estimate", "cost", "energy", "added",
         "removed")  # fmt: skip
SOMETIMES = ("t_estimate", "cost", "energy")  # counted only when some changed
LABELS = {
    "bound": "bound flip",
    "fits": "fit change",
    "critical_batch": "critical-batch change",
    "t_lower": "time change",
    "t_estimate": "estimate change",
    "cost": "cost rise",
    "energy": "energy rise",
    "added": "added",
    "removed": "removed",
}
MAX_GROUPS = 12  # group lines the report shows; changes.csv has every change


def count_text(kind: str, n: int) -> str:
    """'3 bound flips', '1 fit change', '2 added': `n` changes of `kind`, in the current
    language (the templates word the same texts with the number in bold: _change_groups)."""
    texts = {
        "bound": (_("{n} bound flip"), _("{n} bound flips")),
        "fits": (_("{n} fit change"), _("{n} fit changes")),
        "critical_batch": (_("{n} critical-batch change"), _("{n} critical-batch changes")),
        "t_lower": (_("{n} time change"), _("{n} time changes")),
        "t_estimate": (_("{n} estimate change"), _("{n} estimate changes")),
        "cost": (_("{n} cost rise"), _("{n} cost rises")),
        "energy": (_("{n} energy rise"), _("{n} energy rises")),
        "added": (_("{n} added"),) * 2,
        "removed": (_("{n} removed"),) * 2,
    }
    return fmt.counted(n, *texts[kind])


def changes_summary(baseline, limit: int | None = MAX_GROUPS) -> dict:
    """The records of a comparison (a run.baseline.Baseline: .path and .changes): the counts,
    a line of them, and the first `limit` groups (None: all) as change_lines words them."""
    changes = baseline.changes
    counts = {k: int(changes.counts.get(k, 0)) for k in KINDS}
    for kind in SOMETIMES:  # a run without a calibration (prices) has no estimate (cost) to change
        if not counts[kind]:
            del counts[kind]
    total = sum(counts.values())
    parts = [count_text(k, n) for k, n in counts.items()]
    return {
        "baseline": str(baseline.path),
        "compared": int(changes.compared),
        "total": total,
        "counts": [{"kind": k, "label": LABELS[k], "n": n} for k, n in counts.items()],
        "line": ", ".join(parts),
        "grouped": group_lines(changes.groups, limit),
        "order": changes.groups.order,  # the changes' rows in the groups' reading order
        "skipped": list(changes.skipped),
    }
