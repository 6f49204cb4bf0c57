"""The command line's helpers that are not click: escaping, output names, summary lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.cli_support import baseline_folders, escaped, input_line, output_names
from pipeline.run.baseline import BaselineError


def test_escaped_keeps_line_breaks_between_lines_only():
    assert escaped("a\x1b[31m\nb\r") == "a\\x1b[31m\nb\\r"


def test_output_names_are_unique_stems():
    paths = [Path("a/s.csv"), Path("b/s.xlsx"), Path("S.csv"), Path("x/My Plan.xlsx")]
    assert output_names(paths) == ["s", "s-2", "s-3", "my-plan"]


def test_baseline_folders_one_per_name_none_where_missing(tmp_path):
    assert baseline_folders(None, ["a", "b"]) == [None, None]
    (tmp_path / "a").mkdir()
    assert baseline_folders(tmp_path, ["a", "b"]) == [tmp_path / "a", None]
    with pytest.raises(BaselineError, match="does not exist"):
        baseline_folders(tmp_path / "nowhere", ["a"])


def test_the_input_line_is_one_for_both_engines():
    bounds = {"network": 0, "memory": 1, "compute": 1035}
    local = input_line("q.csv", 1036, bounds, 1, Path("out/q"), "results.csv")
    assert local == (
        "q.csv: 1,036 scenarios (compute-bound 1,035, memory-bound 1, network-bound 0), "
        "1 rejected row -> out/q/ [results.csv]"
    )
    dask = input_line("q.csv", 1, bounds, 0, Path("out/q"), "results/part-*.parquet", 1)
    assert dask.startswith("q.csv: 1 scenario in 1 partition (compute-bound 1,035, ")
