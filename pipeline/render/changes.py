"""changes.csv and changes.html: what changed between two runs (pipeline.model.changes),
the HTML page a pure function of the Changes: counts first, the causes many rows share, then
bound flips, the largest time changes, fit and critical-batch changes, added and removed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.model.changes import COLUMNS, KINDS, Changes
from pipeline.render import format as fmt
from pipeline.render.tables import write_csv
from pipeline.render.templates import environment

CHANGES_TEMPLATE = "changes.html.j2"
SHOWN_ROWS = 200  # rows per section of the page; changes.csv has every one
GROUPED_OVER = 1  # a cause shared by more rows than this is listed as a group


def write_changes_csv(changes: Changes, path: Path) -> Path:
    """Write the changes table as CSV (the results.csv format, CSV-injection-safe)."""
    table = changes.table.loc[:, list(COLUMNS)]
    # text as Python strings: tables.write_csv takes an Arrow-backed "str" column as a
    # chunked array, which its formula neutralizing cannot splice
    table = table.astype({c: object for c in COLUMNS if c != "ratio"})
    return write_csv(table, Path(path))


def _rows(frame: pd.DataFrame, times: bool = False) -> list[dict]:
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
                "old": old or fmt.DASH,
                "new": new or fmt.DASH,
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


def render_changes_html(changes: Changes, old_label: str, new_label: str) -> str:
    """The self-contained changes.html page."""
    table = changes.table
    by_kind = {k: table[table["change"] == k] for k in KINDS}
    times = by_kind["t_lower"]
    if len(times):
        times = times.iloc[np.argsort(-change_size(times["ratio"]), kind="stable")]
    groups = changes.groups[changes.groups["rows"] > GROUPED_OVER]
    page = {
        "old_label": old_label,
        "new_label": new_label,
        "compared": fmt.count(changes.compared),
        "threshold": fmt.percent(changes.threshold),
        "changed": changes.changed,
        "counts": [
            {"kind": k, "n": changes.counts[k], "shown": fmt.count(changes.counts[k])}
            for k in KINDS
        ],  # fmt: skip
        "skipped": list(changes.skipped),
        "groups": [
            {
                "rows": fmt.plural(int(g.rows), "row"),
                "hardware": g.hardware,
                "causes": g.causes or "no input differs (the model or its version changed)",
            }
            for g in groups.head(SHOWN_ROWS).itertuples(index=False)
        ],  # fmt: skip
        "groups_more": max(0, len(groups) - SHOWN_ROWS),
        "bound": _section(by_kind["bound"]),
        "times": _section(times, times=True),
        "other": _section(pd.concat([by_kind["fits"], by_kind["critical_batch"]])),
        "presence": _section(pd.concat([by_kind["added"], by_kind["removed"]])),
    }
    return environment().get_template(CHANGES_TEMPLATE).render(**page)
