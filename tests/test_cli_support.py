"""The command line's helpers that are not click: escaping, output names, summary lines."""

from __future__ import annotations

from pathlib import Path

from pipeline.cli_support import escaped, output_names


def test_escaped_keeps_line_breaks_between_lines_only():
    assert escaped("a\x1b[31m\nb\r") == "a\\x1b[31m\nb\\r"


def test_output_names_are_unique_stems():
    paths = [Path("a/s.csv"), Path("b/s.xlsx"), Path("S.csv"), Path("x/My Plan.xlsx")]
    assert output_names(paths) == ["s", "s-2", "s-3", "my-plan"]
