"""cli_lines.py: the lines `run` and `validate` print for an input count the rejected rows
alike: each row with a problem once, those with valid scenarios too said partly."""

from __future__ import annotations

import numpy as np

from pipeline.cli_lines import input_line, partly_rejected, rejected_text
from pipeline.errors import RowProblem
from pipeline.i18n import use_lang


def _problem(line: int) -> RowProblem:
    return RowProblem("s.csv", line, "a", "B", "bad")


def test_a_row_with_valid_and_refused_scenarios_is_rejected_and_said_partly():
    problems = (_problem(3), _problem(4), _problem(4))
    assert partly_rejected(problems, np.array([2, 2, 3])) == 1  # line 3: a valid point too
    assert partly_rejected((), np.array([2])) == 0
    assert rejected_text(2, 1) == "2 rejected rows (1 partly)"
    assert rejected_text(1) == "1 rejected row" and rejected_text(0) == "0 rejected rows"
    with use_lang("ko"):
        assert rejected_text(1, 1) == "거부된 행 1개 (그중 1개는 일부만)"


def test_the_run_line_says_the_partly_rejected_rows():
    bounds = {"compute": 1, "memory": 2, "network": 0}
    line = input_line("s.csv", 3, bounds, 1, "out/s", "results.csv", partly=1)
    assert line == ("s.csv: 3 scenarios (compute-bound 1, memory-bound 2, network-bound 0), "
                    "1 rejected row (1 partly) -> out/s/ [results.csv]")  # fmt: skip
    dask = input_line("s.csv", 3, bounds, 0, "out/s", "results.csv", 2)
    assert "3 scenarios in 2 partitions (" in dask and dask.endswith(
        ", 0 rejected rows -> out/s/ [results.csv]"
    )
