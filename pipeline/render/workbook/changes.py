"""The workbook's Changes sheet (run --baseline): what changed since the baseline, the counts
first, then the changes grouped by series and cause as the report and changes.html group
them (render.text.changes: the edits to the scenarios first), then one line per change as in
changes.csv (name, series, hardware, change, old, new, new/old, causes), filterable, in the
groups' order, the first `max_rows` of them."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.i18n import _
from pipeline.render.format import EXCEL, count
from pipeline.render.report.changes import changes_summary
from pipeline.render.workbook.styles import Styles

# the detail's columns are changes.csv's, in English whatever the run's language (its schema)
COLUMNS = (("name", 28), ("series", 22), ("hardware", 12), ("change", 15), ("old", 14),
           ("new", 14), ("ratio", 10), ("causes", 60))  # fmt: skip
# the grouped lines share the detail's columns: cause (A) to what changed (F, spilling right);
# their headers are `group_header()`, in the run's language
GROUP_HEADER = ("cause", "series", "hardware", "scenarios", "swept", "what changed")
GROUPS_ROW = 3  # the title, the counts, a blank row, then the groups


def group_header() -> list[str]:
    """GROUP_HEADER as the sheet shows it, in the run's language."""
    return [_("cause"), _("series"), _("hardware"), _("scenarios"), _("swept"),
            _("what changed")]  # fmt: skip


def write_changes(sheet, styles: Styles, baseline, max_rows: int) -> list[str]:
    """The Changes sheet of a run compared with `baseline` (run.baseline.Baseline); returns
    the notice of what its row cap leaves out."""
    since = changes_summary(baseline, limit=max_rows)
    table = baseline.changes.table
    sheet.write(0, 0, _("Since the baseline {baseline}", baseline=since["baseline"]), styles.title)
    counts = since["line"] if since["total"] else _("no changes")
    compared = (
        _("1 scenario compared by name: {counts}", counts=counts)
        if since["compared"] == 1
        else _(
            "{n} scenarios compared by name: {counts}", n=count(since["compared"]), counts=counts
        )
    )
    sheet.write(1, 0, compared, styles.text)
    for col, (_name, width) in enumerate(COLUMNS):
        sheet.set_column_width(col, width)
    row = write_groups(sheet, styles, since["grouped"], GROUPS_ROW) + 1
    sheet.write(row, 0, _("Every change, one a line (as changes.csv)"), styles.section)
    header = row + 1
    shown = table.iloc[since["order"][:max_rows]]
    ratio = styles.column(EXCEL["ratio"], False)
    for col, (name, _width) in enumerate(COLUMNS):
        sheet.write(header, col, "new / old" if name == "ratio" else name, styles.header)
    values = {
        name: shown[name].to_numpy() if name in shown else np.full(len(shown), None)
        for name, _width in COLUMNS
    }
    ratios = pd.to_numeric(pd.Series(values["ratio"]), errors="coerce").to_numpy(dtype=float)
    for i in range(len(shown)):
        row = header + 1 + i
        for col, (name, _width) in enumerate(COLUMNS):
            if name == "ratio":
                if np.isfinite(ratios[i]):
                    sheet.write(row, col, float(ratios[i]), ratio)
                continue
            value = values[name][i]
            if value is not None and not (isinstance(value, float) and np.isnan(value)):
                sheet.write(row, col, str(value), styles.text)
    sheet.autofilter(header, 0, header + len(shown), len(COLUMNS) - 1)
    sheet.set_landscape()
    if len(table) > len(shown):
        return [
            _(
                "Changes sheet holds the first {shown} of {total} changes; changes.csv has them "
                "all.",
                shown=count(len(shown)),
                total=count(len(table)),
            )
        ]
    return []


def write_groups(sheet, styles: Styles, grouped: dict, top: int) -> int:
    """The grouped lines (render.text.changes records) from row `top`: a heading, each origin's
    title, then a row per series with its cause on its block's first; returns the next row."""
    if not grouped["origins"]:
        return top
    sheet.write(top, 0, _("Grouped by series and cause, the edits to the scenarios first"),
                styles.section)  # fmt: skip
    for col, name in enumerate(group_header()):
        sheet.write(top + 1, col, name, styles.header)
    row = top + 2
    for origin in grouped["origins"]:
        sheet.write(row, 0, origin["title"], styles.label)
        row += 1
        for block in origin["blocks"]:
            cause = block["cause"]
            for i, line in enumerate(block["lines"]):
                if i == 0 and cause:
                    sheet.write(row, 0, cause, styles.text)
                sheet.write(row, 1, line["series"], styles.text)
                sheet.write(row, 2, line["hardware"], styles.text)
                sheet.write(row, 3, line["scenarios"], styles.integer)
                if line["span"]:
                    sheet.write(row, 4, line["span"], styles.text)
                sheet.write(row, 5, line["text"], styles.text)
                row += 1
    if grouped["more"]:
        sheet.write(row, 0, _("and {n} more groups", n=count(grouped["more"])), styles.label)
        row += 1
    return row
