"""The command line's helpers that are not click: escaping, output names, summary lines."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import pipeline
from pipeline.cli_support import (
    Checked,
    baseline_folders,
    escaped,
    input_line,
    output_names,
    validate_line,
    warnings_line,
)
from pipeline.run.baseline import BaselineError
from tests.helpers import HEAD, write_scenarios


def test_escaped_keeps_line_breaks_between_lines_only():
    assert escaped("a\x1b[31m\nb\r") == "a\\x1b[31m\nb\\r"


def test_output_names_are_unique_stems():
    """Inputs whose names meet each get `-` and 6 hex digits of their path's SHA-256 (the same
    whatever the order), unless one alone is already the folder name."""
    paths = [Path("a/s.csv"), Path("b/s.xlsx"), Path("S.csv"), Path("x/My Plan.xlsx")]
    assert output_names(paths) == ["s-352b3a", "s-781cc7", "s-175e53", "my-plan"]
    assert output_names([Path("S.csv"), Path("s.csv")]) == ["s-175e53", "s"]
    assert output_names([Path("s.csv"), Path("s.csv")]) == ["s", "s-2"]  # one path, twice


def test_output_names_name_a_runs_workbook_after_its_run(tmp_path):
    path = write_scenarios(tmp_path, f"{HEAD}\nok,matmul,1,2,3,v5e\n", name="q1.csv")
    pipeline.analyze(path).write(tmp_path / "out" / "q1", plots=False, report=False)
    book = tmp_path / "out" / "q1" / "workbook.xlsx"
    plan = tmp_path / "plan.xlsx"
    plan.write_bytes(book.read_bytes())  # renamed by its user: their name wins
    assert output_names([book, plan, book]) == ["q1-rerun", "plan", "q1-rerun-2"]


def test_baseline_folders_one_per_input_none_where_missing(tmp_path):
    paths = [Path("a.csv"), Path("b.csv")]
    assert baseline_folders(None, paths, ["a", "b"]) == [None, None]
    (tmp_path / "a").mkdir()  # no manifest: paired by its folder's name
    assert baseline_folders(tmp_path, paths, ["a", "b"]) == [tmp_path / "a", None]
    (tmp_path / "x").mkdir()  # a run of b.csv, whatever its folder's name
    manifest = {"tool": "roofline-pipeline", "input_path": "old/b.csv", "files": []}
    (tmp_path / "x" / "manifest.json").write_text(json.dumps(manifest))
    assert baseline_folders(tmp_path, paths, ["a", "b"]) == [tmp_path / "a", tmp_path / "x"]
    with pytest.raises(BaselineError, match="does not exist"):
        baseline_folders(tmp_path / "nowhere", paths[:1], ["a"])


def test_the_input_line_is_one_for_both_engines():
    bounds = {"network": 0, "memory": 1, "compute": 1035}
    local = input_line("q.csv", 1036, bounds, 1, Path("out/q"), "results.csv")
    assert local == (
        "q.csv: 1,036 scenarios (compute-bound 1,035, memory-bound 1, network-bound 0), "
        "1 rejected row -> out/q/ [results.csv]"
    )
    dask = input_line("q.csv", 1, bounds, 0, Path("out/q"), "results/part-*.parquet", 1)
    assert dask.startswith("q.csv: 1 scenario in 1 partition (compute-bound 1,035, ")


def test_the_warnings_line_names_the_files_written_that_list_them():
    folder = Path("out/q")
    every = [folder / n for n in ("results.csv", "workbook.xlsx", "report.html", "manifest.json")]
    assert warnings_line("q.csv", ["w"] * 3, folder, every) == (
        "q.csv: 3 warnings (w; w; …), in out/q/manifest.json, report.html and workbook.xlsx"
    )
    dask = ("results/part-00000.parquet", "report.html", "manifest.json")  # the manifest's names
    long = "q.csv:7: column 'x' is also an output column; it is carried through as 'input_x'"
    assert warnings_line("q.csv", [long], folder, dask) == (
        "q.csv: 1 warning (column 'x' is also an output column; it is carried through…), "
        "in out/q/manifest.json and report.html"
    )
    assert warnings_line("q.csv", [], folder, every) is None  # nothing to say


def test_the_validate_line_counts_each_row_once():
    from pipeline.errors import RowProblem

    def problem(line):
        return RowProblem("s.csv", line, "a", "B", "bad")

    # line 2 valid, line 3 partly (a valid point and a refused one), line 4 rejected
    checked = Checked("s.csv", 3, 40, (problem(3), problem(4), problem(4)), (),
                      np.array([2, 2, 3]))  # fmt: skip
    assert validate_line(checked) == (
        "s.csv: 3 rows read, 40 valid scenarios, 2 rejected rows (1 partly)"
    )
    assert validate_line(checked, dask=True).startswith("s.csv: 3 rows read, 40 valid scenarios "
                                                        "for --engine dask, ")  # fmt: skip
    clean = Checked("s.csv", 1, 2_000_000, (), (), np.array([2]))
    assert validate_line(clean, over=1_000_000) == (
        "s.csv: 1 row read, 2,000,000 valid scenarios, 0 rejected rows: over --max-rows "
        "(1,000,000) for the local engine; valid for --engine dask"
    )
