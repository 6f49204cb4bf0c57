"""scenarios/refused.py: rows the model refused after computing move to the problems."""

from __future__ import annotations

import pandas as pd

from pipeline.errors import RowProblem
from pipeline.scenarios import load_records
from pipeline.scenarios.refused import refuse_rows, refused_problems

ROWS = [
    {"name": "a", "op": "matmul", "B": "8", "D": "8", "F": "8", "hardware": "v5e"},
    {"name": "s", "op": "matmul", "B": "1|2|3", "D": "8", "F": "8", "hardware": "v5e",
     "hbm_efficiency": "1e-300"},
    {"name": "bad", "op": "matmul", "B": "8", "D": "8", "F": "8", "hardware": "h10"},
    {"name": "c", "op": "matmul", "B": "8", "D": "8", "F": "8", "hardware": "v5e",
     "peak_flops": "1e300"},
]  # fmt: skip


def loaded_and_results(catalog):
    loaded = load_records(ROWS, catalog)
    results = loaded.frame[["line", "name", "series"]]  # what refuse_rows reads of the results
    return loaded, results


def test_nothing_refused_changes_nothing(catalog):
    loaded, results = loaded_and_results(catalog)
    none = pd.DataFrame(columns=["column", "reason"])
    after, kept = refuse_rows(loaded, results, none)
    assert after is loaded and kept is results


def test_refused_lines_leave_the_results_once_each(catalog):
    loaded, results = loaded_and_results(catalog)
    assert results["name"].tolist() == ["a", "s[B=1]", "s[B=2]", "s[B=3]", "c"]
    refused = pd.DataFrame(
        {"column": ["hbm_efficiency", "hbm_efficiency", "hbm_bandwidth"],
         "reason": ["too slow", "too slow", "too fast"]},
        index=[2, 3, 4],
    )  # fmt: skip
    after, kept = refuse_rows(loaded, results, refused)
    assert kept["name"].tolist() == after.frame["name"].tolist() == ["a"]
    assert kept.index.tolist() == [0]
    assert [(p.line, p.name, p.column, p.reason) for p in after.problems] == [
        (3, "s", "hbm_efficiency", "too slow (at 's[B=2]')"),  # its first refused point
        (4, "bad", "hardware", "unknown hardware 'h10' (did you mean 'h100'?)"),
        (5, "c", "hardware", "too fast"),  # hbm_bandwidth came from the chip
    ]
    assert after.table is loaded.table and after.source == loaded.source


def test_refused_problems_blame_the_column_only_when_the_row_gave_it(catalog):
    loaded, results = loaded_and_results(catalog)
    refused = pd.DataFrame({"column": ["peak_flops"], "reason": ["inf"]}, index=[4])
    keep, problems = refused_problems(
        "<rows>", loaded.table, loaded.lines, results["line"].to_numpy(), results, refused
    )
    assert keep.tolist() == [True, True, True, True, False]
    assert problems == [RowProblem("<rows>", 5, "c", "peak_flops", "inf")]
