"""scenarios/records.py: rows in memory as the text a CSV would hold."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.errors import ScenarioFileError
from pipeline.scenarios.records import records_table


def test_a_frame_becomes_text_cells_with_lines_from_2():
    frame = pd.DataFrame(
        {
            "name": ["a", "b", "c"],
            "B": [8, 16, np.int64(2**53 + 1)],  # an int stays exact, past float64's 2^53
            "D": [8.0, np.nan, 0.1],
            "ok": [True, np.bool_(False), None],
            0: ["x", pd.NA, None],  # a column name that is not a str
        }
    )
    table, lines = records_table(frame, "<rows>")
    assert table.column_names == ["name", "B", "D", "ok", "0"]
    assert table.to_pydict() == {
        "name": ["a", "b", "c"],
        "B": ["8", "16", str(2**53 + 1)],
        "D": ["8.0", "", "0.1"],  # a float as repr() writes it; missing is empty
        "ok": ["True", "False", ""],
        "0": ["x", "", ""],
    }
    assert lines.tolist() == [2, 3, 4]


def test_a_list_of_dicts_with_missing_keys():
    table, lines = records_table([{"name": "a", "B": 1}, {"name": "b", "F": "1..4"}], "<rows>")
    # a column with a gap is float in pandas: its 1 comes as 1.0 (read as the whole number 1)
    assert table.to_pydict() == {"name": ["a", "b"], "B": ["1.0", ""], "F": ["", "1..4"]}
    assert lines.tolist() == [2, 3]


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ("s.csv", "<rows>: scenarios must be a path, a pandas DataFrame or a list of dicts, not str"),
        ([{"name": "a"}, 3], "<rows>: scenarios must be a path, a pandas DataFrame or a list of "
         "dicts, not list"),
        (pd.DataFrame(), "<rows>: no columns and no scenario rows"),
        ([], "<rows>: no columns and no scenario rows"),
        (pd.DataFrame({"name": []}), "<rows>: a header but no scenario rows: nothing to compute"),
    ],
)  # fmt: skip
def test_what_cannot_be_scenarios(rows, message):
    with pytest.raises(ScenarioFileError) as exc:
        records_table(rows, "<rows>")
    assert str(exc.value) == message
