"""The one exception hierarchy, and the escaping every value echoed in a message gets."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.errors import (
    QUOTED_LIMIT,
    InvalidHardwareFile,
    InvalidScenarios,
    OutputError,
    PipelineError,
    RowProblem,
    ScenarioFileError,
    UnknownHardware,
    described,
    printable,
    quoted,
)


@pytest.mark.parametrize(
    "error",
    [ScenarioFileError, UnknownHardware, InvalidHardwareFile, InvalidScenarios, OutputError],
)
def test_every_error_is_caught_as_a_pipeline_error(error):
    with pytest.raises(PipelineError, match="^what went wrong$"):
        raise error("what went wrong")


def test_invalid_scenarios_carries_every_problem_and_warning():
    problem = RowProblem("s.csv", 3, "a", "B", "'x' is not a positive integer")
    err = InvalidScenarios("2 rows rejected", problems=(problem,), warnings=("careful",))
    assert err.problems == [problem] and err.warnings == ["careful"]
    assert str(err) == "2 rows rejected"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain text, ünïcode ✓", "plain text, ünïcode ✓"),
        ("a\nb\rc\td", "a\\nb\\rc\\td"),
        ("nul\x00 esc\x1b[2J del\x7f c1\x85", "nul\\x00 esc\\x1b[2J del\\x7f c1\\x85"),
        ("line\u2028para\u2029", "line\\u2028para\\u2029"),
        ("h100\u202etxt.exe", "h100\\u202etxt.exe"),  # would show as 'h100exe.txt'
        (42, "42"),
    ],
)
def test_printable_writes_control_characters_as_escapes(text, shown):
    assert printable(text) == shown


def test_quoted_shortens_long_values_and_says_their_length():
    assert quoted("h10\n") == "'h10\\n'"
    long = quoted("x" * 500)
    assert long == "'" + "x" * (QUOTED_LIMIT - 1) + "…' (500 characters)"
    assert quoted("x" * QUOTED_LIMIT) == "'" + "x" * QUOTED_LIMIT + "'"


def test_described_gives_repr_and_type():
    assert described("5") == "'5' (str)"
    assert described(5.0) == "5.0 (float)"
    assert described(None) == "None (NoneType)"
    assert described(b"x" * 300).endswith("… (bytes)")
    assert described(np.int64(3)).endswith("(numpy.int64)")


def test_a_row_problem_is_one_line_in_the_editor_format():
    problem = RowProblem("s.csv", 7, "a", "hardware", "unknown hardware 'h10\nfake:1: x'")
    assert str(problem) == "s.csv:7: column hardware: unknown hardware 'h10\\nfake:1: x'"
    assert "\n" not in str(RowProblem("a\nb.csv", 1, "n", "c", "r"))


def test_text_list_takes_one_str_or_a_list_of_them():
    from pipeline.errors import text_list

    assert text_list("h100", "names must be chip names", "a chip name") == ["h100"]
    assert text_list(("a", "b"), "names must be chip names", "a chip name") == ["a", "b"]
    with pytest.raises(TypeError, match=r"names must be chip names \(a list of str\), not 5"):
        text_list(5, "names must be chip names", "a chip name")
    with pytest.raises(TypeError, match="a chip name is a str, not"):
        text_list(["a", 1], "names must be chip names", "a chip name")
