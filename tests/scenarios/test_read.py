"""scenarios/read.py: every cell as text, each row with the line an editor shows it on."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pipeline.errors import ScenarioFileError
from pipeline.scenarios.read import MAX_VALUE_LINES, read_table

PATH = Path("s.csv")


def read(text: str, warnings: list[str] | None = None):
    table, lines, fields, _ = read_table(
        PATH, text.encode("utf-8"), [] if warnings is None else warnings
    )
    return table.to_pydict(), lines.tolist(), fields


@pytest.mark.parametrize(
    ("text", "header"),
    [
        ("name,B\na,1\n", 1),  # the fast path
        ("# about\n\nname,B\na,1\n", 3),
        ("sep=,\nname,B\na,1\n", 2),  # Excel's hint, kept as a comment line
        ('# q\nname,B\n"a\nb",1\n', 2),  # the csv module's path
    ],
)
def test_the_headers_line_is_returned(text, header):
    assert read_table(PATH, text.encode("utf-8"), [])[3] == header


def test_plain_file_every_cell_text():
    cells, lines, fields = read("name,B,notes\na,08,\nb,1e3,x y\n")
    assert cells == {"name": ["a", "b"], "B": ["08", "1e3"], "notes": ["", "x y"]}
    assert lines == [2, 3] and fields is None


@pytest.mark.parametrize("end", ["\n", "\r\n", "\r"])
def test_comments_and_blank_lines_count_as_lines(end):
    text = end.join(["# about", "name,B", "", "a,1", "  # indented", " ", "b,2", ""])
    cells, lines, _ = read(text)
    assert cells == {"name": ["a", "b"], "B": ["1", "2"]}
    assert lines == [4, 7]


def test_a_line_starting_with_wide_white_space_is_blank():
    cells, lines, _ = read("name,B\na,1\n\u3000\nb,2\n")
    assert cells["name"] == ["a", "b"] and lines == [2, 4]


def test_form_feed_and_line_separator_are_text():
    cells, lines, _ = read("name,notes\na,x\x0cy\nb,p\u2028q\n")
    assert cells["notes"] == ["x\x0cy", "p\u2028q"] and lines == [2, 3]


def test_a_quoted_line_break_keeps_the_lines_after_it_right():
    cells, lines, fields = read('name,notes\na,"two\nlines"\nb,x\n')
    assert cells == {"name": ["a", "b"], "notes": ["two\nlines", "x"]}
    assert lines == [2, 4]
    assert fields.tolist() == [2, 2]


def test_ragged_rows_are_padded_and_their_fields_counted():
    cells, lines, fields = read("name,op,B\na,matmul\nb,matmul,1,extra\nc,dot,2\n")
    assert cells == {"name": ["a", "b", "c"], "op": ["matmul"] * 2 + ["dot"], "B": ["", "1", "2"]}
    assert lines == [2, 3, 4]
    assert fields.tolist() == [2, 4, 3]


def test_excel_comma_hint_is_skipped_with_a_warning():
    warnings: list[str] = []
    cells, lines, _ = read("sep=,\nname,B\na,1\n", warnings)
    assert cells == {"name": ["a"], "B": ["1"]} and lines == [3]
    assert warnings == [
        "s.csv:1: skipped Excel's delimiter hint 'sep=,' (the file is comma-separated)"
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "s.csv: no header and no scenario rows (the file is empty)"),
        ("# only\n\n", "s.csv: no header and no scenario rows (the file is empty)"),
        ("name,B\n# no rows\n", "s.csv: a header but no scenario rows: nothing to compute"),
        ("sep=;\nname;B\n", "s.csv:1: the file declares ';' as its delimiter ('sep=;'); "
         "scenario files are comma-separated: save it as CSV (comma delimited)"),
        ('name,notes\na,x\nb,"open\n', "s.csv:3: a quoted value opens on this line and is "
         "still open at the end of the file: is a closing '\"' missing? Close the value where "
         "it ends"),
        ('name,op,notes\na,dot,"open\nb,dot,x\n', "s.csv:2: a quoted value opens on this line "
         "and runs on over line 3, which looks like a row of its own: is a closing '\"' "
         "missing? Close the value where it ends"),
    ],
)  # fmt: skip
def test_unusable_text(text, message):
    with pytest.raises(ScenarioFileError) as exc:
        read(text)
    assert str(exc.value) == message


def test_a_quoted_value_may_not_run_on_forever():
    text = 'name,notes\na,"' + "more\n" * MAX_VALUE_LINES + 'end"\n'
    with pytest.raises(ScenarioFileError) as exc:
        read(text)
    assert str(exc.value).startswith(
        f"s.csv:2: a quoted value opens on this line and runs over {MAX_VALUE_LINES} lines"
    )


def test_fast_and_general_paths_agree():
    rows = "".join(f"n{i},{i}\n" for i in range(50))
    plain = read("name,B\n" + rows)
    general = read("# a comment sends the text down the general path\nname,B\n" + rows)
    assert plain[0] == general[0]
    np.testing.assert_array_equal(np.asarray(plain[1]) + 1, general[1])


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        ("\nname,B,C\na,1,2\n", [3]),  # a blank first line (was a crash: ArrowInvalid)
        ("# x,y,z\nname,B,C\na,1,2\n", [3]),  # a comment as wide as the header (was the header)
        ("#sep=,\nname,B,C\na,1,2\n", [3]),
        ("name,B,C\ra,1,2\nb,3,4\n", [2, 3]),  # a lone CR ends the header (was a csv.Error)
    ],
)
def test_the_header_is_the_first_line_that_is_not_blank_or_a_comment(text, lines):
    cells, got, _ = read(text)
    assert list(cells) == ["name", "B", "C"]
    assert cells["name"] == ["a", "b"][: len(lines)] and got == lines
