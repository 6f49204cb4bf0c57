"""Reading a user's text file: regular files only, UTF-8 only (with a message naming what the
file looks like and where decoding failed), small CSVs with their editor line numbers; a
file's SHA-256; writing a file in one step."""

from __future__ import annotations

import os
import sys

import pytest

from pipeline.errors import ScenarioFileError
from pipeline.textfile import (
    atomic_file,
    csv_rows,
    decode_as,
    decode_utf8,
    file_sha256,
    read_bytes,
    sha256_of,
)

WHAT = "scenario file"


def test_a_regular_file_is_read_whole(tmp_path):
    path = tmp_path / "s.csv"
    path.write_bytes(b"name\n\x00\xff")
    assert read_bytes(path, ScenarioFileError, WHAT) == b"name\n\x00\xff"


def test_missing_files_and_folders_are_named(tmp_path):
    with pytest.raises(ScenarioFileError, match=r"missing\.csv: no such file$"):
        read_bytes(tmp_path / "missing.csv", ScenarioFileError, WHAT)
    with pytest.raises(ScenarioFileError, match="is a folder, not a scenario file"):
        read_bytes(tmp_path, ScenarioFileError, WHAT)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="FIFOs and /dev/zero")
def test_devices_and_pipes_are_refused_without_reading(tmp_path):
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)  # reading it would wait for a writer forever
    for path in (fifo, "/dev/zero"):
        with pytest.raises(ScenarioFileError, match="not a regular file .*save the scenario"):
            read_bytes(path, ScenarioFileError, WHAT)


def test_unreadable_file_says_why(tmp_path, monkeypatch):
    """A file the system refuses to open (mode 000 for another user; root reads anything, so
    the refusal is made here, as the system would make it)."""
    path = tmp_path / "s.csv"
    path.write_text("x")
    real_open = open

    def refused(file, *args, **kwargs):
        if os.fspath(file) == os.fspath(path):
            raise PermissionError(13, "Permission denied", os.fspath(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr("builtins.open", refused)
    with pytest.raises(ScenarioFileError, match="cannot read: Permission denied"):
        read_bytes(path, ScenarioFileError, WHAT)


def test_utf8_with_or_without_a_bom_is_text(tmp_path):
    assert decode_utf8(tmp_path, "µs,→\n".encode(), ScenarioFileError) == "µs,→\n"
    assert decode_utf8(tmp_path, b"\xef\xbb\xbfname\n", ScenarioFileError) == "name\n"


@pytest.mark.parametrize(
    ("data", "looks"),
    [
        ("name\n".encode("utf-16"), "UTF-16"),  # with a byte-order mark
        ("name,op\n".encode("utf-16-le"), "UTF-16"),  # without one
        ("name\n".encode("utf-32"), "UTF-32"),
        ("name,op\n".encode("utf-32-le"), "UTF-32"),
    ],
)
def test_utf16_and_utf32_are_recognized(tmp_path, data, looks):
    with pytest.raises(ScenarioFileError, match=rf": not UTF-8 \(looks like {looks}\)"):
        decode_utf8(tmp_path / "s.csv", data, ScenarioFileError)


def test_latin1_names_the_line_and_character_where_decoding_failed(tmp_path):
    data = "name\r\nok,µ\r\nbé,x\n".encode("latin-1")
    with pytest.raises(ScenarioFileError) as err:
        decode_utf8(tmp_path / "s.csv", data, ScenarioFileError)
    assert str(err.value).endswith(
        "s.csv:2: not UTF-8 (looks like Latin-1 / Windows-1252: byte 0xb5 at character 4 of "
        "the line): save it as UTF-8"
    )
    with pytest.raises(ScenarioFileError, match=r":1: not UTF-8 \(looks like binary data"):
        decode_utf8(tmp_path / "s.csv", b"\x01\x02\xff", ScenarioFileError)


def test_csv_rows_count_lines_as_an_editor_does(tmp_path):
    text = '# a comment\nname,notes\n\na,"two\nlines"\r\n   \nb,x\n'
    header, rows, lines = csv_rows(tmp_path / "h.csv", text, ScenarioFileError)
    assert header == ["name", "notes"]
    assert rows == [["a", "two\nlines"], ["b", "x"]]
    assert lines == [4, 7]
    assert csv_rows(tmp_path / "h.csv", "# only\n\n", ScenarioFileError) == ([], [], [])


def test_csv_rows_name_the_line_where_an_open_quote_began(tmp_path):
    text = 'name,notes\na,x\nb,"open\nc,y\n'
    with pytest.raises(ScenarioFileError, match=r"h\.csv:3: a quoted value opens on this line"):
        csv_rows(tmp_path / "h.csv", text, ScenarioFileError)


def test_the_scenario_reader_names_the_encoding_that_reads_the_file(tmp_path):
    latin = "name\nbé\n".encode("latin-1")
    with pytest.raises(ScenarioFileError) as err:
        decode_utf8(tmp_path / "s.csv", latin, ScenarioFileError, "--encoding")
    assert str(err.value).endswith("save it as UTF-8, or give --encoding cp1252")
    with pytest.raises(ScenarioFileError) as err:
        decode_utf8(tmp_path / "s.csv", "name\n".encode("utf-16"), ScenarioFileError, "--encoding")
    assert str(err.value).endswith(
        "(looks like UTF-16): save it as UTF-8, or give --encoding utf-16"
    )


def test_decode_as_reads_a_named_encoding_and_says_where_it_fails(tmp_path):
    assert (
        decode_as(tmp_path / "s.csv", "name\nbé\n".encode("cp1252"), "cp1252", ScenarioFileError)
        == "name\nbé\n"
    )
    with pytest.raises(ScenarioFileError) as err:
        decode_as(tmp_path / "s.csv", b"name\nok\nb\x81\n", "cp1252", ScenarioFileError)
    assert str(err.value) == (
        f"{tmp_path / 's.csv'}:3: not cp1252: byte 0x81 has no character in it; give the "
        "file's encoding with --encoding (utf-8, cp1252, ...)"
    )


def test_a_files_sha256_is_that_of_its_bytes(tmp_path):
    path = tmp_path / "f.bin"
    path.write_bytes(b"abc")
    digest = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert file_sha256(path) == sha256_of(b"abc") == digest


def test_an_atomic_file_replaces_whole_or_not_at_all(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("old")
    with atomic_file(path) as temp:
        temp.write_text("new")
        assert path.read_text() == "old"
    assert path.read_text() == "new"
    with pytest.raises(RuntimeError), atomic_file(path) as temp:
        temp.write_text("half")
        raise RuntimeError
    assert path.read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]  # no temp file left


def test_an_atomic_file_writes_a_named_temp_beside_it(tmp_path):
    path, temp = tmp_path / "index.html", tmp_path / ".index.html.tmp"
    with pytest.raises(OSError), atomic_file(path, temp) as t:
        assert t == temp
        t.write_text("x")
        raise OSError
    assert not temp.exists() and not path.exists()
    with atomic_file(path, temp) as t:
        t.write_text("x")
    assert path.read_text() == "x" and not temp.exists()
