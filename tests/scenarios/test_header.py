"""scenarios/header.py: column names normalized, reserved names renamed, NUL bytes found."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from pipeline.errors import ScenarioFileError
from pipeline.scenarios.header import (
    USER_PREFIX,
    check_columns,
    normalize_headers,
    nul_cells,
    rename_reserved,
)

PATH = Path("s.csv")


def test_normalize_headers_trims_and_cases():
    got = normalize_headers([" Name", "OP ", "b", "d", "HardWare", "X_Dtype", "Team"], PATH)
    assert got == ["name", "op", "B", "D", "hardware", "x_dtype", "team"]


@pytest.mark.parametrize(
    ("columns", "message"),
    [
        (["name", "o\x00p"], "s.csv:1: column 2: the header 'o\\x00p' holds a NUL byte at "
         "character 2; remove it (a scenario file is text)"),
        (["name", "Op", "op ", "b", "B"], "s.csv:1: column names appear twice: 'op' (columns 2 "
         "and 3), 'B' (columns 4 and 5)"),
        (["name", " ", "op"], "s.csv:1: column 2 has an empty header"),
    ],
)  # fmt: skip
def test_normalize_headers_refuses(columns, message):
    with pytest.raises(ScenarioFileError) as exc:
        normalize_headers(columns, PATH)
    assert str(exc.value) == message


def test_nul_cells_reject_the_cell_and_keep_it_visible():
    table = pa.table({"name": ["a", "b\x00", "c"], "notes": ["", "x", "n\x00o\x00"]})
    fixed, problems = nul_cells(table)
    assert problems == [
        (1, "name", "NUL byte at character 2 of 'b\\x00'; remove it (a scenario file is text)"),
        (2, "notes", "NUL byte at character 2 of 'n\\x00o\\x00'; remove it (a scenario file is text)"),
    ]  # fmt: skip
    assert fixed.column("name").to_pylist() == ["a", "b\\x00", "c"]
    assert fixed.column("notes").to_pylist() == ["", "x", "n\\x00o\\x00"]


def test_nul_cells_leave_a_clean_table_alone():
    table = pa.table({"name": ["a"]})
    fixed, problems = nul_cells(table)
    assert fixed is table and problems == []


def test_rename_reserved_keeps_output_names_apart():
    columns = ["name", "bound", "bytes", "input_series", "series", "line"]
    renamed, warnings = rename_reserved(columns, PATH)
    # bytes is an input column; input_series is taken, so series goes one further
    assert renamed == ["name", "input_bound", "bytes", "input_series", "input_input_series",
                       "input_line"]  # fmt: skip
    assert warnings[0] == (
        "s.csv:1: column 'bound' is also an output column; it is carried through as 'input_bound'"
    )
    assert len(warnings) == 3


def test_check_columns_refuses_a_near_miss_at_the_headers_line():
    columns = ["name", "op", "hardware", "dtpye", "team"]
    with pytest.raises(ScenarioFileError) as exc:
        check_columns(columns, ["dtpye", "team"], PATH, line=3)
    assert str(exc.value) == (
        "s.csv:3: column dtpye: unknown column; did you mean dtype? Rename it, or, if the "
        "column is yours, give --keep-column dtpye (keep_columns= in Python) or name it "
        "user_dtpye; nothing computed for this file"
    )


def test_check_columns_names_every_near_miss_a_line_each():
    with pytest.raises(ScenarioFileError) as exc:
        check_columns(["name", "op", "hardware", "dtpye", "chisp"], ["dtpye", "chisp"], PATH)
    lines = str(exc.value).split("\n")
    assert [line.split(": unknown")[0] for line in lines] == [
        "s.csv:1: column dtpye",
        "s.csv:1: column chisp",
    ]


@pytest.mark.parametrize("keep", [["dtpye"], ["DTPYE "], ("team", "dtpye")])
def test_check_columns_carries_a_kept_near_miss(keep):
    assert check_columns(["name", "op", "hardware", "dtpye"], ["dtpye"], PATH, keep=keep) is None


def test_check_columns_carries_user_prefixed_columns_and_far_names():
    columns = ["name", "op", "hardware", "user_dtype", "team"]
    assert check_columns(columns, ["user_dtype", "team"], PATH) is None
    assert USER_PREFIX == "user_"


def test_check_columns_refuses_a_missing_required_column():
    with pytest.raises(ScenarioFileError) as exc:
        check_columns(["name", "op", "hardwre"], ["hardwre"], PATH)
    assert str(exc.value) == (
        "s.csv:1: missing required column(s) 'hardware' (did you mean 'hardwre'?); the header "
        "needs name, op, hardware"
    )


@pytest.mark.parametrize(("sep", "label"), [(";", "semicolons"), ("\t", "tabs"), ("|", "'|'")])
def test_check_columns_names_another_delimiter(sep, label):
    header = sep.join(["name", "op", "hardware"])
    with pytest.raises(ScenarioFileError) as exc:
        check_columns([header], [header], PATH)
    assert str(exc.value).endswith(
        f"the header needs name, op, hardware; the header is separated by {label}, not "
        "commas: save the file as CSV (comma delimited)"
    )
