"""A user's hardware file (CSV, TOML) or DataFrame read into text cells with each chip's line,
and the checks that need those lines: duplicate columns and keys, a chip given twice, control
characters, NUL bytes, an empty file."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from pipeline.catalogs.hardware_file import (
    HARDWARE,
    clash_problems,
    control_problems,
    read_frame_table,
    toml_lines,
)
from pipeline.catalogs.table_file import file_text, read_file
from pipeline.errors import InvalidHardwareFile

CSV = Path("mine.csv")
TOML = Path("mine.toml")


def at(i: int) -> str:
    return f"mine.csv:{i + 2}"


def test_hardware_text_refuses_an_empty_file_and_nul_bytes():
    assert file_text(CSV, b"\xef\xbb\xbfname\n", HARDWARE) == "name\n"
    with pytest.raises(InvalidHardwareFile, match="^mine.csv: the hardware file is empty"):
        file_text(CSV, b" \n\n", HARDWARE)
    with pytest.raises(InvalidHardwareFile, match="^mine.csv:2: NUL byte at character 4;"):
        file_text(CSV, b"name\nabc\x00\n", HARDWARE)
    with pytest.raises(InvalidHardwareFile, match=r"^mine.csv:1: not UTF-8 \(looks like Latin-1"):
        file_text(CSV, b"min\xe9\n", HARDWARE)


def test_csv_cells_under_a_lower_case_header_with_their_lines():
    cells, lines = read_file(
        CSV, b"# mine\nName,HBM_Bandwidth,source\n\nh100,1e12\nb,2,x\n", HARDWARE
    )
    assert list(cells.columns) == ["name", "hbm_bandwidth", "source"]
    assert cells.to_dict("records") == [
        {"name": "h100", "hbm_bandwidth": "1e12", "source": ""},  # a short row: blanks
        {"name": "b", "hbm_bandwidth": "2", "source": "x"},
    ]
    assert lines == [4, 5]


def test_csv_row_with_more_fields_than_the_header_is_refused():
    with pytest.raises(InvalidHardwareFile, match="^mine.csv:3: 3 fields but the header has 2"):
        read_file(CSV, b"name,hbm_bandwidth\nh100,1e12\nb,1,000\n", HARDWARE)


def test_csv_columns_differing_only_in_case_are_one_column_twice():
    with pytest.raises(InvalidHardwareFile) as err:
        read_file(CSV, b"\n# x\nname,peak_bf16,PEAK_BF16\nh100,1,2\n", HARDWARE)
    assert str(err.value) == (
        "mine.csv:3: columns 'peak_bf16' (column 2) and 'PEAK_BF16' (column 3) are both "
        "column peak_bf16; keep one"
    )


def test_toml_tables_are_chips_on_the_line_of_their_header():
    text = b'[mine]\naliases = ["a", "b"]\npeak_bf16 = 1e400\nhbm_bandwidth = 1_000\n\n[other]\n'
    cells, lines = read_file(TOML, text + b'source = "x"\n', HARDWARE)
    assert cells.loc[0, "aliases"] == "a;b"
    assert cells.loc[0, "peak_bf16"] == "1e400"  # as written: past float64, not inf
    assert cells.loc[0, "hbm_bandwidth"] == "1000"
    assert cells["name"].tolist() == ["mine", "other"] and lines == [1, 6]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("[mine]\nHBM_Bandwidth = 1\n# x\nhbm_bandwidth = 2\n",
         "mine.toml:4 [mine]: key 'hbm_bandwidth' repeats key 'HBM_Bandwidth' of mine.toml:2 "
         "[mine] (keys are case-insensitive); keep one"),
        ('[mine]\nname = "other"\n', "key name: 'other' differs from the table's name"),
        ("peak_bf16 = 1\n", "top-level key 'peak_bf16' must be a table like [peak_bf16]"),
        ("[mine\n", "mine.toml: not valid TOML"),
        ("[mine]\npeak_bf16 = 1" + "0" * 5000 + "\n", "mine.toml:2: a number with thousands"),
    ],
)  # fmt: skip
def test_toml_problems_name_the_file_and_line(text, says):
    with pytest.raises(InvalidHardwareFile) as err:
        read_file(TOML, text.encode(), HARDWARE)
    assert says in str(err.value)


def test_toml_lines_find_tables_and_keys():
    text = (
        '# chips\n[h100]\nhbm_bandwidth = 1e12\nsource = """\n[fake]\n"""\n'
        "[\"tpu.v5e\" ]  # quoted\n'peak_bf16' = 1\nmine.peak_bf16 = 2\n"
    )
    found = toml_lines(text)
    assert found[("h100",)] == 2 and found[("h100", "hbm_bandwidth")] == 3
    assert ("fake",) not in found  # inside a multi-line string
    assert found[("tpu.v5e",)] == 7 and found[("tpu.v5e", "peak_bf16")] == 8
    assert ("mine",) not in found and found[("tpu.v5e", "mine")] == 9  # a key of the table


def test_a_frame_is_text_cells_its_index_the_name():
    frame = pd.DataFrame(
        {"peak_bf16": [1e14, float("nan")], "aliases": [["x", "y"], None]},
        index=pd.Index(["a", "b"], name="name"),
    )  # as pipeline.catalog() gives it
    cells, lines = read_frame_table(frame, "rows")
    assert cells.to_dict("records") == [
        {"name": "a", "peak_bf16": "100000000000000.0", "aliases": "x;y"},
        {"name": "b", "peak_bf16": "", "aliases": ""},
    ]
    assert lines == [2, 3]  # the header is line 1


def test_a_frame_with_a_lone_surrogate_is_refused():
    frame = pd.DataFrame([["a\ud800", 1e12]], columns=["name", "hbm_bandwidth"], dtype=object)
    with pytest.raises(InvalidHardwareFile, match=r"rows:2: column name: 'a\\ud800' holds a lone"):
        read_frame_table(frame, "rows")


def test_control_characters_are_a_problem_each():
    cells = pd.DataFrame({"name": ["ok", "b"], "source": ["plain", "a\x1bb"]})
    assert control_problems(cells, at) == [
        "mine.csv:3: column source: control character '\\x1b' at character 2 of 'a\\x1bb'; a "
        "hardware value is plain text: remove it"
    ]


def test_a_chip_given_twice_names_both_lines():
    known = {"v5e": "tpu-v5e", "tpu-v5e": "tpu-v5e"}  # the catalog's spellings
    problems = clash_problems(["a1", "A1", "v5e", "tpu-v5e"], [[], [], [], []], known, at)
    assert problems == [
        "mine.csv:3: column name: 'A1' is chip 'a1' again, first given as 'a1' at mine.csv:2; "
        "give each chip once per file (names and aliases are case-insensitive)",
        "mine.csv:5: column name: 'tpu-v5e' is chip 'tpu-v5e' again, first given as 'v5e' at "
        "mine.csv:4; give each chip once per file (names and aliases are case-insensitive)",
    ]
    assert clash_problems(["a1", "a2"], [["x"], ["x"]], {}, at) == [
        "mine.csv:3: column aliases: 'x' is already an alias of chip 'a1' at mine.csv:2; a chip "
        "is given once per file, an alias to one chip"
    ]
    assert clash_problems(["a1", "a2"], [["a2"], []], {}, at)[0].startswith(
        "mine.csv:3: column name: 'a2' is already an alias of chip 'a1'"
    )
    assert clash_problems(["a1", "a2"], [["x"], ["y"]], {}, at) == []
