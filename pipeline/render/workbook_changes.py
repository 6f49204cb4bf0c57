"""The workbook's Changes sheet (run --baseline): what changed since the baseline, the counts
first, then one line per change as in changes.csv (name, hardware, change, old, new, new/old,
causes), filterable, the first `max_rows` of them."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.render.format import EXCEL, count, plural
from pipeline.render.report_changes import changes_summary
from pipeline.render.workbook_styles import Styles

COLUMNS = (("name", 28), ("hardware", 12), ("change", 15), ("old", 14), ("new", 14),
           ("ratio", 10), ("causes", 70))  # fmt: skip
HEADER_ROW = 3  # the title, the counts, a blank row, then the table


def write_changes(sheet, styles: Styles, baseline, max_rows: int) -> list[str]:
    """The Changes sheet of a run compared with `baseline` (run.baseline.Baseline); returns
    the notice of what its row cap leaves out."""
    since = changes_summary(baseline)
    table = baseline.changes.table
    shown = table.iloc[:max_rows]
    sheet.write(0, 0, f"Since the baseline {since['baseline']}", styles.title)
    counts = since["line"] if since["total"] else "no changes"
    sheet.write(
        1, 0, f"{plural(since['compared'], 'scenario')} compared by name: {counts}", styles.text
    )
    ratio = styles.column(EXCEL["ratio"], False)
    for col, (name, width) in enumerate(COLUMNS):
        sheet.set_column_width(col, width)
        sheet.write(HEADER_ROW, col, "new / old" if name == "ratio" else name, styles.header)
    values = {
        name: shown[name].to_numpy() if name in shown else np.full(len(shown), None)
        for name, _ in COLUMNS
    }
    ratios = pd.to_numeric(pd.Series(values["ratio"]), errors="coerce").to_numpy(dtype=float)
    for i in range(len(shown)):
        row = HEADER_ROW + 1 + i
        for col, (name, _) in enumerate(COLUMNS):
            if name == "ratio":
                if np.isfinite(ratios[i]):
                    sheet.write(row, col, float(ratios[i]), ratio)
                continue
            value = values[name][i]
            if value is not None and not (isinstance(value, float) and np.isnan(value)):
                sheet.write(row, col, str(value), styles.text)
    sheet.freeze_panes(HEADER_ROW + 1, 1)
    sheet.autofilter(HEADER_ROW, 0, HEADER_ROW + len(shown), len(COLUMNS) - 1)
    sheet.set_landscape()
    if len(table) > len(shown):
        return [
            f"Changes sheet holds the first {count(len(shown))} of {count(len(table))} changes; "
            "changes.csv has them all."
        ]
    return []
