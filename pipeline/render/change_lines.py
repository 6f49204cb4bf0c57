"""The grouped changes (pipeline.model.change_groups) worded once, as plain records that
changes.html, the report's "Since the baseline" and the workbook's Changes sheet all show:
origins, in reading order, each holding cause blocks, each holding its series' lines, each
line its parts ("memory → compute", "time 0.911× – 0.947×") with how many scenarios and
which stretch of the sweep. Numbers are formatted by render.format."""

from __future__ import annotations

import numpy as np

from pipeline.model.change_groups import ChangeGroups
from pipeline.render import format as fmt

ORIGIN_TITLES = {
    "edit": "Edits to the scenarios",
    "catalog": "Hardware numbers (the catalog or a --hardware file)",
    "calibration": "The calibration (--calibration): the estimates only",
    "model": "No input differs (the model or its version changed)",
    "added": "Added",
    "removed": "Removed",
}
FIT = {"True": "fits", "False": "does not fit", "": fmt.DASH}


def group_lines(grouped: ChangeGroups, limit: int | None = None) -> dict:
    """The records of the first `limit` groups (None: all): {'origins': [{origin, title,
    blocks: [{chip, inputs, cause, scenarios, series, lines}]}], 'groups', 'shown',
    'more'}; each line {input, series, hardware, scenarios, span, example, parts, text}."""
    groups = grouped.groups if limit is None else grouped.groups.head(limit)
    parts = grouped.parts[grouped.parts["group"] < len(groups)]
    worded = _worded_parts(parts)
    starts = np.searchsorted(parts["group"].to_numpy(), np.arange(len(groups) + 1))
    origins: list[dict] = []
    for at, g in enumerate(groups.itertuples(index=False)):
        own = worded[starts[at] : starts[at + 1]]
        for part in own:
            part["where"] = _where(part, g.scenarios)
        line = {
            "input": g.input,
            "series": g.series,
            "hardware": g.hardware if g.chips_named == 1 else fmt.plural(g.chips_named, "chip"),
            "scenarios": int(g.scenarios),
            "span": g.span,
            "example": g.example if g.scenarios == 1 and g.example != g.series else "",
            "parts": own,
        }
        line["text"] = "; ".join(
            p["text"] + (f" ({p['where']})" if p["where"] else "") for p in own
        )
        if not origins or origins[-1]["origin"] != g.origin:
            origins.append({"origin": g.origin, "title": ORIGIN_TITLES[g.origin], "blocks": []})
        blocks = origins[-1]["blocks"]
        if not blocks or blocks[-1]["block"] != g.block:
            blocks.append(_block(g))
        blocks[-1]["lines"].append(line)
    total = len(grouped.groups)
    return {"origins": origins, "groups": total, "shown": len(groups),
            "more": total - len(groups)}  # fmt: skip


def _block(g) -> dict:
    """A cause shared by series: what differs, on which chip, how many scenarios and series."""
    chip = g.hardware if g.origin == "catalog" else ""
    inputs = g.causes if g.origin in ("edit", "catalog", "calibration") else ""
    return {
        "block": int(g.block),
        "origin": g.origin,
        "chip": chip,  # whose numbers moved
        "inputs": inputs,  # the inputs that differ, old → new
        "cause": " ".join(filter(None, (chip, inputs))),  # the two in one text
        "scenarios": fmt.plural(int(g.block_scenarios), "scenario"),
        "series": f"{fmt.count(int(g.block_series))} series",  # one series, two series
        "lines": [],
    }


def _where(part: dict, scenarios: int) -> str:
    """'14 of 512: B = 123…136' for a part that moved some of its series' scenarios only."""
    if part["scenarios"] == scenarios:
        return ""
    some = f"{fmt.count(part['scenarios'])} of {fmt.count(scenarios)}"
    return f"{some}: {part['span']}" if part["span"] else some


def _worded_parts(parts) -> list[dict]:
    """Each part as a record: its kind, old and new (a state's), its count and span, and its
    words: 'memory → compute', 'time 4.45 ms → 2.57 ms (0.579×)', 'critical batch 137 → 123'."""
    return [
        {
            "kind": p.change,
            "old": p.old or fmt.DASH,
            "new": p.new or fmt.DASH,
            "scenarios": int(p.scenarios),
            "span": p.span,
            "text": _words(p),
        }
        for p in parts.itertuples(index=False)
    ]


def _words(p) -> str:
    arrow = " \u2192 "
    if p.change == "bound":
        return f"{p.old or fmt.DASH}{arrow}{p.new or fmt.DASH}"
    if p.change == "fits":
        return f"{FIT.get(p.old, p.old)}{arrow}{FIT.get(p.new, p.new)}"
    if p.change in ("t_lower", "t_estimate"):
        what = "time" if p.change == "t_lower" else "estimate"
        if p.scenarios == 1:
            return f"{what} {fmt.seconds(p.old_min)}{arrow}{fmt.seconds(p.new_min)} " + (
                f"({fmt.ratio(p.ratio_min)})"
            )
        return f"{what} {_range(p.ratio_min, p.ratio_max, fmt.ratio)}"
    if p.change == "critical_batch":
        old, new = _range(p.old_min, p.old_max), _range(p.new_min, p.new_max)
        return f"critical batch {old}{arrow}{new}"
    return p.change  # added, removed


def _range(low: float, high: float, shown=fmt.count) -> str:
    """'137', '137 – 227' (one value when both ends read the same), '—' when missing."""
    if np.isnan(low):
        return fmt.DASH
    a, b = shown(low), shown(high)
    return a if a == b else f"{a} \u2013 {b}"
