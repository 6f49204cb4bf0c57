"""changes.html: what changed between two runs (pipeline.changes.compare),
the HTML page a pure function of the Changes: counts first, then the changes grouped by
series and cause as people read them (the scenario edits first: the comparison's groups), then
the detail: bound flips, the largest time changes, fit and critical-batch changes, added and
removed. One page may hold several inputs of two whole runs (render_changes_sections)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from pipeline.changes.compare import KINDS, Changes
from pipeline.i18n import _
from pipeline.render import format as fmt
from pipeline.render.report.changes import SOMETIMES
from pipeline.render.templates import environment
from pipeline.render.text.answer import bound_word
from pipeline.render.text.changes import group_lines, kind_word

CHANGES_TEMPLATE = "changes.html.j2"
SHOWN_ROWS = 200  # rows per section of the page; changes.csv has every one
SHOWN_GROUPS = 200  # lines of the grouped summary
Section = tuple[str, Changes, str, str]  # input name, its changes, baseline and new labels


def _rows(frame: pd.DataFrame, times: bool = False) -> list[dict]:
    """The shown rows of a section: changes.csv's values (a bound's also as its word, and
    the kind of change as its word, in the current language), times formatted."""
    rows = []
    for r in frame.head(SHOWN_ROWS).itertuples(index=False):
        old, new = r.old, r.new
        if times:
            old, new = fmt.seconds(_number(old)), fmt.seconds(_number(new))
        rows.append(
            {
                "name": r.name,
                "hardware": r.hardware,
                "change": r.change,
                "change_word": kind_word(r.change),
                "old": old or fmt.DASH,
                "new": new or fmt.DASH,
                "old_word": bound_word(old or fmt.DASH),
                "new_word": bound_word(new or fmt.DASH),
                "ratio": fmt.ratio(r.ratio),
                "causes": r.causes,
            }
        )
    return rows


def change_size(ratio) -> np.ndarray:
    """How far each new/old ratio is from 1 either way, |log ratio|; infinite for a ratio
    with no logarithm (a zero, negative or missing time on one side): those come first.
    Computed without numpy's warnings."""
    ratio = np.asarray(ratio, dtype=float)
    size = np.full(ratio.shape, np.inf)
    positive = ratio > 0  # NaN is not
    size[positive] = np.abs(np.log(ratio[positive]))
    return size


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return float("nan")


def _section(frame: pd.DataFrame, times: bool = False) -> dict:
    return {"rows": _rows(frame, times), "total": len(frame),
            "more": max(0, len(frame) - SHOWN_ROWS)}  # fmt: skip


def _counts(changes: Changes) -> list[dict]:
    return [{"kind": k, "label": kind_word(k), "n": changes.counts[k],
             "shown": fmt.count(changes.counts[k])}
            for k in KINDS if k not in SOMETIMES or changes.counts[k]]  # fmt: skip


def _detail(section: Section, order: np.ndarray) -> dict:
    """One input's records: its labels and counts, and its changes by kind, each in reading
    order (`order`: its table's rows as the grouped summary reads them), the time changes
    the largest first."""
    name, changes, old_label, new_label = section
    table = changes.table.iloc[order]
    kind = table["change"].to_numpy(dtype=object)
    times = table[np.isin(kind, ("t_lower", "t_estimate"))]
    if len(times):
        times = times.iloc[np.argsort(-change_size(times["ratio"]), kind="stable")]
    return {
        "name": name,
        "old_label": old_label,
        "new_label": new_label,
        "compared": fmt.count(changes.compared),
        "threshold": fmt.percent(changes.threshold),
        "skipped": list(changes.skipped),
        "counts": _counts(changes),
        "bound": _section(table[kind == "bound"]),
        "times": _section(times, times=True),
        "other": _section(table[np.isin(kind, ("fits", "critical_batch"))]),
        "presence": _section(table[np.isin(kind, ("added", "removed"))]),
    }


def render_changes_sections(
    merged: Changes, sections: Sequence[Section], title: str, runs: tuple[str, str] | None = None
) -> str:
    """One self-contained page comparing several inputs (each (input name, Changes, baseline
    label, new label); `merged`: theirs as one, changes.compare.merge_changes): the counts and
    the changes grouped by series and cause over all of them first (the inputs' scenario
    edits before any hardware number's), then a section per input with its detail. `runs`:
    the two whole runs' labels (baseline, new), shown first."""
    if not sections:
        raise ValueError("render_changes_sections needs at least one section")
    single = len(sections) == 1
    grouped = merged.groups
    ends = np.cumsum([len(s[1].table) for s in sections])
    details = []  # each input's rows of the merged table: one after another
    for section, start, end in zip(sections, np.r_[0, ends[:-1]], ends, strict=True):
        own = grouped.order[(grouped.order >= start) & (grouped.order < end)]
        details.append(_detail(section, own - start))
    page = {
        "title": title,
        "runs": runs,
        "single": single,
        "changed": merged.changed,
        "compared": fmt.count(merged.compared),
        "counts": _counts(merged),
        "summary": group_lines(grouped, SHOWN_GROUPS),
        "sections": details,
    }
    return environment().get_template(CHANGES_TEMPLATE).render(**page)


def render_changes_html(changes: Changes, old_label: str, new_label: str) -> str:
    """The self-contained changes.html page of one comparison."""
    title = _("Changes: {old} → {new}", old=old_label, new=new_label)
    return render_changes_sections(changes, [("", changes, old_label, new_label)], title)
