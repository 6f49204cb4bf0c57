"""scenarios/loaded.py: what loading hands on, and the counts read off it."""

from __future__ import annotations

from pipeline.scenarios import load_records

ROWS = [
    {"name": "a", "op": "matmul", "B": "1..4", "D": 8, "F": 8, "hardware": "v5e", "team": "x"},
    {"name": "b", "op": "matmul", "B": 8, "D": 8, "F": 8, "hardware": "h10"},
    {"name": "b", "op": "matmul", "B": 0, "D": 8, "F": 8, "hardware": "v5e"},
]


def test_counts_and_the_rows_as_read(catalog):
    loaded = load_records(ROWS, catalog, source="mine")
    assert loaded.source == "mine" and loaded.data is None
    assert loaded.source_rows == 3 and len(loaded.frame) == 4  # a sweep of 4
    assert len(loaded.problems) == 3 and loaded.rejected_lines == 2  # line 4: two problems
    assert loaded.dims == ("B", "D", "F") and loaded.extras == ("team",)
    inputs = loaded.inputs
    assert list(inputs.columns) == ["line", "name", "op", "B", "D", "F", "hardware", "team"]
    assert inputs["line"].tolist() == [2, 3, 4]
    assert inputs["B"].tolist() == ["1..4", "8", "0"]
    assert inputs is loaded.inputs  # built once
