"""The report's "Since the baseline" section and the workbook's Changes sheet read the same
plain records, built here from a comparison (pipeline.model.changes.Changes): the counts per
kind of change, then the bound flips and the largest time changes, each grouped by cause
(the same hardware and the same differing inputs), a few groups only: changes.csv has every
change. Numbers are formatted by render.format, never here."""

from __future__ import annotations

import pandas as pd

from pipeline.render import format as fmt
from pipeline.render.changes import change_size

KINDS = ("bound", "fits", "critical_batch", "t_lower", "added", "removed")
LABELS = {
    "bound": "bound flip",
    "fits": "fit change",
    "critical_batch": "critical-batch change",
    "t_lower": "time change",
    "added": "added",
    "removed": "removed",
}
MAX_GROUPS = 6  # groups shown per table; changes.csv has them all
NO_CAUSE = "no input differs (the model or the catalog's other numbers)"


def changes_summary(baseline) -> dict:
    """The records of a comparison (a run.baseline.Baseline: .path and .changes)."""
    changes = baseline.changes
    table = changes.table
    counts = {k: int(changes.counts.get(k, 0)) for k in KINDS}
    total = sum(counts.values())
    parts = [
        fmt.plural(n, LABELS[k]) if k not in ("added", "removed") else f"{fmt.count(n)} {k}"
        for k, n in counts.items()
    ]
    return {
        "baseline": str(baseline.path),
        "compared": int(changes.compared),
        "total": total,
        "counts": [{"kind": k, "label": LABELS[k], "n": n} for k, n in counts.items()],
        "line": ", ".join(parts),
        "flips": bound_flips(table),
        "times": time_changes(table),
        "skipped": list(changes.skipped),
    }


def _cause(text) -> str:
    return str(text) if isinstance(text, str) and text.strip() else NO_CAUSE


def bound_flips(table: pd.DataFrame, limit: int = MAX_GROUPS) -> list[dict]:
    """The bound flips grouped by (hardware, old -> new, cause), the biggest groups first."""
    flips = table[table["change"] == "bound"]
    if flips.empty:
        return []
    keys = [flips["hardware"].astype(str), flips["old"].astype(str), flips["new"].astype(str),
            flips["causes"].map(_cause)]  # fmt: skip
    groups = flips.groupby(keys, sort=False)["name"].agg(["size", "first"])
    groups = groups.sort_values("size", ascending=False, kind="stable").head(limit)
    return [
        {
            "rows": int(n),
            "example": str(first),
            "hardware": hw,
            "old": old,
            "new": new,
            "cause": cause,
        }  # fmt: skip
        for (hw, old, new, cause), (n, first) in zip(
            groups.index, groups.itertuples(index=False), strict=True
        )
    ]


def time_changes(table: pd.DataFrame, limit: int = MAX_GROUPS) -> list[dict]:
    """The t_lower changes grouped by (hardware, cause), the group holding the largest change
    (new/old furthest from 1, either way) first; each with its range of new/old."""
    times = table[table["change"] == "t_lower"]
    if times.empty:
        return []
    ratio = pd.to_numeric(times["ratio"], errors="coerce").to_numpy(dtype=float)
    frame = pd.DataFrame(
        {
            "hardware": times["hardware"].astype(str).to_numpy(),
            "cause": times["causes"].map(_cause).to_numpy(),
            "name": times["name"].astype(str).to_numpy(),
            "old": pd.to_numeric(times["old"], errors="coerce").to_numpy(dtype=float),
            "new": pd.to_numeric(times["new"], errors="coerce").to_numpy(dtype=float),
            "ratio": ratio,
            "size": change_size(ratio),
        }
    )
    frame = frame.sort_values("size", ascending=False, kind="stable", na_position="last")
    grouped = frame.groupby(["hardware", "cause"], sort=False)
    first = grouped.head(1).head(limit)
    stats = grouped["ratio"].agg(["size", "min", "max"])
    rows = []
    for rec in first.itertuples(index=False):
        n, low, high = stats.loc[(rec.hardware, rec.cause)]
        rows.append(
            {
                "rows": int(n),
                "example": rec.name,
                "hardware": rec.hardware,
                "old": rec.old,
                "new": rec.new,
                "ratio": rec.ratio,
                "low": float(low),
                "high": float(high),
                "cause": rec.cause,
            }
        )
    return rows
