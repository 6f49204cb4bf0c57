"""The workbook's Changes sheet: the title and counts, then one line per change with new/old
a number, capped with a notice."""

from __future__ import annotations

from types import SimpleNamespace

import openpyxl
import pandas as pd

from pipeline.model.changes import compare_results
from pipeline.render.workbook_changes import HEADER_ROW, write_changes
from pipeline.render.workbook_styles import Styles
from pipeline.render.xlsx_backend import rx

OLD = pd.DataFrame({"name": ["a", "b", "c"], "hardware": "h100", "bound": "memory",
                    "t_lower": [1.0, 1.0, 1.0], "D": [8754, 1, 1]})  # fmt: skip
NEW = pd.DataFrame({"name": ["a", "b", "d"], "hardware": "h100", "bound": ["compute", "memory",
                    "memory"], "t_lower": [1.0, 2.0, 1.0], "D": [8756, 1, 1]})  # fmt: skip


def _sheet(tmp_path, max_rows: int):
    baseline = SimpleNamespace(path="old/run", changes=compare_results(OLD, NEW))
    book = rx.Workbook(str(tmp_path / "w.xlsx"))
    notices = write_changes(book.add_worksheet("Changes"), Styles(), baseline, max_rows)
    book.close()
    sheet = openpyxl.load_workbook(tmp_path / "w.xlsx")["Changes"]
    return notices, [[c.value for c in row] for row in sheet.iter_rows()]


def test_changes_sheet_lists_every_change(tmp_path):
    notices, rows = _sheet(tmp_path, 100)
    assert notices == []
    assert rows[0][0] == "Since the baseline old/run"
    assert rows[1][0].startswith("2 scenarios compared by name: 1 bound flip,")
    assert rows[HEADER_ROW] == ["name", "hardware", "change", "old", "new", "new / old", "causes"]
    body = {(r[0], r[2]): r for r in rows[HEADER_ROW + 1 :]}
    assert set(body) == {("a", "bound"), ("b", "t_lower"), ("d", "added"), ("c", "removed")}
    assert body[("a", "bound")][3:5] == ["memory", "compute"]
    assert body[("a", "bound")][6] == "D 8754 → 8756"
    assert body[("b", "t_lower")][5] == 2.0  # a number, shown as 2.00×


def test_changes_sheet_is_capped_with_a_notice(tmp_path):
    notices, rows = _sheet(tmp_path, 2)
    assert len(rows) == HEADER_ROW + 1 + 2
    assert notices == ["Changes sheet holds the first 2 of 4 changes; changes.csv has them all."]
