"""The workbook's Changes sheet: the title and counts, the changes grouped by series and
cause (the edits first), then one line per change in the groups' order with new/old a
number, capped with a notice."""

from __future__ import annotations

from types import SimpleNamespace

import openpyxl
import pandas as pd

from pipeline.changes.compare import compare_results
from pipeline.render.workbook.changes import GROUP_HEADER, GROUPS_ROW, write_changes
from pipeline.render.workbook.styles import Styles
from pipeline.render.workbook.xlsx_backend import rx

OLD = pd.DataFrame({"name": ["a", "b", "c"], "hardware": "h100", "bound": "memory",
                    "t_lower": [1.0, 1.0, 1.0], "D": [8754, 1, 1]})  # fmt: skip
NEW = pd.DataFrame({"name": ["a", "b", "d"], "hardware": "h100", "bound": ["compute", "memory",
                    "memory"], "t_lower": [1.0, 2.0, 1.0], "D": [8756, 1, 1]})  # fmt: skip
DETAIL = ["name", "series", "hardware", "change", "old", "new", "new / old", "causes"]


def _sheet(tmp_path, max_rows: int):
    baseline = SimpleNamespace(path="old/run", changes=compare_results(OLD, NEW))
    book = rx.Workbook(str(tmp_path / "w.xlsx"))
    notices = write_changes(book.add_worksheet("Changes"), Styles(), baseline, max_rows)
    book.close()
    sheet = openpyxl.load_workbook(tmp_path / "w.xlsx")["Changes"]
    return notices, [[c.value for c in row] for row in sheet.iter_rows()]


def _detail_header(rows) -> int:
    return next(i for i, r in enumerate(rows) if r[: len(DETAIL)] == DETAIL)


def test_changes_sheet_groups_then_lists_every_change(tmp_path):
    notices, rows = _sheet(tmp_path, 100)
    assert notices == []
    assert rows[0][0] == "Since the baseline old/run"
    assert rows[1][0].startswith("2 scenarios compared by name: 1 bound flip,")
    assert rows[GROUPS_ROW + 1][: len(GROUP_HEADER)] == list(GROUP_HEADER)
    titles = [r[0] for r in rows[GROUPS_ROW + 2 :] if r[0] and r[1] is None]
    assert titles[:4] == ["Edits to the scenarios", "No input differs (the model or its "
                          "version changed)", "Added", "Removed"]  # fmt: skip
    edit = rows[GROUPS_ROW + 3]
    assert edit[:6] == ["D 8754 → 8756", "a", "h100", 1, None, "memory → compute"]
    header = _detail_header(rows)
    body = [r for r in rows[header + 1 :] if r[0]]
    assert [(r[0], r[3]) for r in body] == [("a", "bound"), ("b", "t_lower"), ("d", "added"),
                                            ("c", "removed")]  # fmt: skip
    assert body[0][4:6] == ["memory", "compute"] and body[0][7] == "D 8754 → 8756"
    assert body[0][1] == "a"  # its own series
    assert body[1][6] == 2.0  # a number, shown as 2.00×


def test_changes_sheet_is_capped_with_a_notice(tmp_path):
    notices, rows = _sheet(tmp_path, 2)
    assert len(rows) == _detail_header(rows) + 1 + 2
    assert notices == ["Changes sheet holds the first 2 of 4 changes; changes.csv has them all."]
