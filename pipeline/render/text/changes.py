"""The grouped changes (pipeline.changes.groups) worded once, as plain records that
changes.html, the report's "Since the baseline" and the workbook's Changes sheet all show:
origins, in reading order, each holding cause blocks, each holding its series' lines (a
calibration's: one line for every series on its chip, "60 series"), each line its parts
("memory → compute", "time 0.911× – 0.947×") with how many scenarios and which stretch of
the sweep. Numbers are formatted by render.format."""

from __future__ import annotations

import numpy as np

from pipeline.changes.groups import PER_CHIP, ChangeGroups
from pipeline.i18n import _
from pipeline.render import format as fmt
from pipeline.render.text.answer import bound_word


def origin_titles() -> dict[str, str]:
    """What each origin of a change is called, in the current language."""
    return {
        "edit": _("Edits to the scenarios"),
        "catalog": _("Hardware numbers (the catalog or a --hardware file)"),
        "prices": _("Prices (the --prices file): the cost only"),
        "calibration": _("The calibration (--calibration): the estimates only"),
        "model": _("No input differs (the model or its version changed)"),
        "added": _("Added"),
        "removed": _("Removed"),
    }


def fit_words() -> dict[str, str]:
    """changes.csv's fits values ('True', 'False', '') as words, in the current language."""
    return {"True": _("fits"), "False": _("does not fit"), "": fmt.DASH}


def kind_word(kind: str) -> str:
    """A kind of change of the data (changes.csv's `change`: 'bound', 't_lower', ...) as
    shown to people (a card's label, a row's kind), in the current language."""
    words = {
        "bound": _("bound"),
        "fits": _("fits"),
        "critical_batch": _("critical_batch"),
        "t_lower": _("t_lower"),
        "t_estimate": _("t_estimate"),
        "cost": _("cost"),
        "energy": _("energy"),
        "added": _("added"),
        "removed": _("removed"),
    }
    return words.get(kind, kind)


def group_lines(grouped: ChangeGroups, limit: int | None = None) -> dict:
    """The records of the first `limit` groups (None: all): {'origins': [{origin, title,
    blocks: [{chip, inputs, cause, scenarios, series, lines}]}], 'groups', 'shown',
    'more'}; each line {input, series, hardware, scenarios, span, example, parts, text}."""
    groups = grouped.groups if limit is None else grouped.groups.head(limit)
    parts = grouped.parts[grouped.parts["group"] < len(groups)]
    worded = _worded_parts(parts)
    starts = np.searchsorted(parts["group"].to_numpy(), np.arange(len(groups) + 1))
    origins: list[dict] = []
    titles = origin_titles()
    for at, g in enumerate(groups.itertuples(index=False)):
        own = worded[starts[at] : starts[at + 1]]
        for part in own:
            part["where"] = _where(part, g.scenarios)
        chips = fmt.counted(int(g.chips_named), _("{n} chip"), _("{n} chips"))
        line = {
            "input": g.input,
            "series": g.series or _("{n} series", n=fmt.count(int(g.series_named))),
            "hardware": g.hardware if g.chips_named == 1 else chips,
            "scenarios": int(g.scenarios),
            "span": g.span,
            "example": g.example if g.scenarios == 1 and g.example != g.series else "",
            "parts": own,
        }
        line["text"] = "; ".join(
            p["text"] + (f" ({p['where']})" if p["where"] else "") for p in own
        )
        if not origins or origins[-1]["origin"] != g.origin:
            origins.append({"origin": g.origin, "title": titles[g.origin], "blocks": []})
        blocks = origins[-1]["blocks"]
        if not blocks or blocks[-1]["block"] != g.block:
            blocks.append(_block(g))
        blocks[-1]["lines"].append(line)
    total = len(grouped.groups)
    return {"origins": origins, "groups": total, "shown": len(groups),
            "more": total - len(groups)}  # fmt: skip


def _block(g) -> dict:
    """A cause shared by series: what differs, on which chip (whose numbers or calibration
    moved), how many scenarios and series."""
    chip = g.hardware if g.origin in PER_CHIP else ""
    inputs = g.causes if g.origin in ("edit", "catalog", "prices", "calibration") else ""
    return {
        "block": int(g.block),
        "origin": g.origin,
        "chip": chip,  # whose numbers moved
        "inputs": inputs,  # the inputs that differ, old → new
        "cause": " ".join(filter(None, (chip, inputs))),  # the two in one text
        "scenarios": fmt.counted(int(g.block_scenarios), _("{n} scenario"), _("{n} scenarios")),
        "series": _("{n} series", n=fmt.count(int(g.block_series))),  # one series, two series
        "lines": [],
    }


def _where(part: dict, scenarios: int) -> str:
    """'14 of 512: B = 123…136' for a part that moved some of its series' scenarios only."""
    if part["scenarios"] == scenarios:
        return ""
    n, total = fmt.count(part["scenarios"]), fmt.count(scenarios)
    if part["span"]:
        return _("{n} of {total}: {span}", n=n, total=total, span=part["span"])
    return _("{n} of {total}", n=n, total=total)


def _worded_parts(parts) -> list[dict]:
    """Each part as a record: its kind, old and new (a state's), its count and span, and its
    words: 'memory → compute', 'time 4.45 ms → 2.57 ms (0.579×)', 'critical batch 137 → 123'
    (old_word and new_word: a bound's old and new as shown, in the current language)."""
    fit = fit_words()
    return [
        {
            "kind": p.change,
            "old": p.old or fmt.DASH,
            "new": p.new or fmt.DASH,
            "old_word": bound_word(p.old or fmt.DASH),
            "new_word": bound_word(p.new or fmt.DASH),
            "scenarios": int(p.scenarios),
            "span": p.span,
            "text": _words(p, fit),
        }
        for p in parts.itertuples(index=False)
    ]


def _words(p, fit: dict[str, str]) -> str:
    arrow = " \u2192 "
    if p.change == "bound":
        return f"{bound_word(p.old or fmt.DASH)}{arrow}{bound_word(p.new or fmt.DASH)}"
    if p.change == "fits":
        return f"{fit.get(p.old, p.old)}{arrow}{fit.get(p.new, p.new)}"
    if p.change == "t_estimate" and np.isnan(p.old_min) != np.isnan(p.new_min):
        # a calibration given or taken away: the estimates there are, not a ratio ('—')
        if np.isnan(p.new_min):
            return _("estimate {old} → none", old=_range(p.old_min, p.old_max, fmt.seconds))
        return _("estimate none → {new}", new=_range(p.new_min, p.new_max, fmt.seconds))
    if p.change in ("t_lower", "t_estimate"):
        if p.scenarios == 1:
            old, new = fmt.seconds(p.old_min), fmt.seconds(p.new_min)
            ratio = fmt.ratio(p.ratio_min)
            if p.change == "t_lower":
                return _("time {old} → {new} ({ratio})", old=old, new=new, ratio=ratio)
            return _("estimate {old} → {new} ({ratio})", old=old, new=new, ratio=ratio)
        ratios = _range(p.ratio_min, p.ratio_max, fmt.ratio)
        if p.change == "t_lower":
            return _("time {ratios}", ratios=ratios)
        return _("estimate {ratios}", ratios=ratios)
    if p.change in ("cost", "energy"):  # a rise: its ratio ('—' where one run has none)
        ratios = _range(p.ratio_min, p.ratio_max, fmt.ratio)
        if p.change == "cost":
            return _("cost {ratios}", ratios=ratios)
        return _("energy {ratios}", ratios=ratios)
    if p.change == "critical_batch":
        old, new = _range(p.old_min, p.old_max), _range(p.new_min, p.new_max)
        return _("critical batch {old} → {new}", old=old, new=new)
    return kind_word(p.change)  # added, removed


def _range(low: float, high: float, shown=fmt.count) -> str:
    """'137', '137 – 227' (one value when both ends read the same), '—' when missing."""
    if np.isnan(low):
        return fmt.DASH
    a, b = shown(low), shown(high)
    return a if a == b else f"{a} \u2013 {b}"
