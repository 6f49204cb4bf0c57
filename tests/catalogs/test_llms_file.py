"""Reading a models file (pipeline/catalogs/llms_file.py): CSV and TOML cells with their lines,
column names matched exactly then in any case, DataFrames as text."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from pipeline.catalogs.llms import COLUMNS, MODELS
from pipeline.catalogs.llms_file import (
    InvalidModelFile,
    canonical_columns,
    read_model_frame,
)
from pipeline.catalogs.table_file import read_file


def test_csv_cells_and_lines_skip_comments_and_blank_lines():
    data = b"# a comment\nname,d,K,k\n\nm,64,2,1\n# more\nn,32,4,\n"
    cells, lines = read_file(Path("m.csv"), data, MODELS)
    assert list(cells.columns) == ["name", "D", "K", "k"]
    assert cells.to_dict("list") == {"name": ["m", "n"], "D": ["64", "32"], "K": ["2", "4"],
                                     "k": ["1", ""]}  # fmt: skip
    assert lines == [4, 6]


def test_two_names_for_one_column_are_an_error():
    with pytest.raises(InvalidModelFile, match=r"columns 'd' \(column 2\) and 'D' \(column 3\)"):
        canonical_columns(["name", "d", "D"], COLUMNS, "m.csv:1")
    assert canonical_columns(["Heads"], COLUMNS, "x") == ["Heads"]  # unknown: as written


def test_a_row_longer_than_the_header_and_a_nul_byte_are_errors():
    with pytest.raises(InvalidModelFile, match=r"m.csv:2: 3 fields but the header has 2"):
        read_file(Path("m.csv"), b"name,D\nm,1,2\n", MODELS)
    with pytest.raises(InvalidModelFile, match=r"m.csv:2: NUL byte"):
        read_file(Path("m.csv"), b"name,D\nm,\x00\n", MODELS)


def test_toml_tables_are_rows_on_their_header_lines():
    data = b'# mine\n[tiny]\naliases = ["t", "T1"]\nD = 64\ntied = true\n\n[other]\nd = 32\n'
    cells, lines = read_file(Path("m.toml"), data, MODELS)
    assert lines == [2, 7]
    assert cells.loc[0, ["name", "aliases", "D", "tied"]].tolist() == ["tiny", "t;T1", "64", "true"]
    assert cells.loc[1, "D"] == "32"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"D = 4\n", r"top-level key 'D' must be a table like \[D\] naming a model"),
        (b"[m]\nD = \n", "not valid TOML"),
        (b"[m]\nname = 'other'\n", "differs from the table's name"),
    ],
)
def test_toml_errors_say_what_to_do(data, message):
    with pytest.raises(InvalidModelFile, match=message):
        read_file(Path("m.toml"), data, MODELS)


def test_a_frame_indexed_by_name_reads_as_text():
    frame = pd.DataFrame({"D": pd.array([64, None], dtype="Int64"), "tied": [True, False]},
                         index=pd.Index(["a", "b"], name="name"))  # fmt: skip
    cells, lines = read_model_frame(frame, "<model rows 1>", COLUMNS)
    assert cells.to_dict("list") == {"name": ["a", "b"], "D": ["64", ""],
                                     "tied": ["true", "false"]}  # fmt: skip
    assert lines == [2, 3]
