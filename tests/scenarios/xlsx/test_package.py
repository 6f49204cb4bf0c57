"""The workbook's package: what kind of file it is, its parts found as python-calamine finds
them (any case), the caps on the parts read, a part that holds more than it declares."""

from __future__ import annotations

import io
import struct
import zipfile

import pytest

from pipeline.errors import ScenarioFileError
from pipeline.scenarios.xlsx.package import (
    MAX_META,
    OLE_MAGIC,
    ZIP_MAGIC,
    SheetEntry,
    is_workbook,
    open_package,
    recorded_run_name,
)
from tests.helpers import raw_workbook


def _package(path):
    return open_package(path, path.read_bytes())


def test_workbooks_are_told_by_their_bytes_or_their_extension():
    assert is_workbook("s.csv", ZIP_MAGIC + b"...") and is_workbook("s.csv", OLE_MAGIC)
    assert is_workbook("S.XLSX", b"name,op\n") and is_workbook("s.ods", b"")
    assert not is_workbook("s.csv", b"name,op\n")


def test_excels_lock_file_is_named_as_such(tmp_path):
    lock = tmp_path / "~$plan.xlsx"
    lock.write_bytes(b"\x05alice" + bytes(160))
    with pytest.raises(ScenarioFileError) as err:
        _package(lock)
    assert str(err.value) == (
        f"{lock}: Excel's lock file for 'plan.xlsx' (Excel writes it while the workbook is "
        "open; it holds no cells): give 'plan.xlsx'"
    )


def test_sheets_their_state_and_parts_as_the_workbook_lists_them(tmp_path):
    path = raw_workbook(tmp_path / "s.xlsx", {"One": "", "Two": ""}, hidden=("Two",))
    package = _package(path)
    assert package.xl_folder() == "xl/"
    assert package.sheets("xl/") == [
        SheetEntry("One", "visible", "xl/worksheets/sheet1.xml"),
        SheetEntry("Two", "hidden", "xl/worksheets/sheet2.xml"),
    ]
    opening = [i.filename for i in package.opening_parts("xl/")]
    assert opening == ["_rels/.rels", "xl/_rels/workbook.xml.rels", "xl/workbook.xml"]


def test_parts_are_found_in_any_case_and_an_absolute_target_from_the_root(tmp_path):
    rels = (
        b'<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        b'<Relationship Id="rId1" Target="/xl/worksheets/SHEET1.xml" Type="x/worksheet"/>'
        b"</Relationships>"
    )
    path = raw_workbook(tmp_path / "s.xlsx", {"S": ""}, parts={"xl/_rels/workbook.xml.rels": rels})
    package = _package(path)
    assert package.sheets("xl/") == [SheetEntry("S", "visible", "xl/worksheets/SHEET1.xml")]
    assert package.member("xl/worksheets/SHEET1.xml").filename == "xl/worksheets/sheet1.xml"
    assert package.member("XL\\Workbook.XML").filename == "xl/workbook.xml"
    assert package.member("xl/nothing.xml") is None


def test_two_parts_whose_names_differ_only_in_case_are_refused(tmp_path):
    path = raw_workbook(tmp_path / "s.xlsx", {"S": ""}, parts={"xl/worksheets/Sheet1.xml": b"<x/>"})
    with pytest.raises(
        ScenarioFileError, match=r"holds 2 parts named 'xl/worksheets/sheet1.xml' in"
    ):
        _package(path).member("xl/worksheets/sheet1.xml")


def test_a_zip_without_its_list_of_parts_is_not_a_workbook(tmp_path):
    path = raw_workbook(tmp_path / "s.xlsx", {"S": ""}, parts={"_rels/.rels": None})
    with pytest.raises(ScenarioFileError, match="the zip has no _rels/.rels"):
        _package(path).xl_folder()


def test_the_cap_counts_the_parts_read_only(tmp_path):
    unread = b"<x>" + bytes(40 << 20) + b"</x>"  # packs 1,000 to 1: a bomb, but never opened
    path = raw_workbook(tmp_path / "s.xlsx", {"S": "", "Big": unread})
    package = _package(path)
    package.check_unpacked(
        [*package.opening_parts("xl/"), package.member(package.sheets("xl/")[0].part)]
    )
    with pytest.raises(ScenarioFileError, match=r"a zip bomb\?"):
        package.check_unpacked([package.member("xl/worksheets/sheet2.xml")])


def test_a_part_that_holds_more_than_it_declares_is_refused(tmp_path):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("a.xml", b"<a>" + b"x" * 5000 + b"</a>")
    data = bytearray(buffer.getvalue())
    central = data.index(b"PK\x01\x02")
    struct.pack_into("<I", data, central + 24, 100)  # declares 100 bytes unpacked
    package = open_package("s.xlsx", bytes(data))
    with pytest.raises(ScenarioFileError, match=r"'a.xml'"):
        package.read(package.member("a.xml"))


def test_a_large_or_malformed_list_of_sheets_is_refused(tmp_path):
    big = raw_workbook(
        tmp_path / "b.xlsx", {"S": ""}, parts={"xl/workbook.xml": b" " * (MAX_META + 1)}
    )
    with pytest.raises(ScenarioFileError, match="would unpack to 16,777,217 bytes"):
        _package(big).sheets("xl/")
    bad = raw_workbook(tmp_path / "m.xlsx", {"S": ""}, parts={"xl/workbook.xml": b"<workbook>"})
    with pytest.raises(ScenarioFileError, match="'xl/workbook.xml' is not well-formed XML"):
        _package(bad).sheets("xl/")
    dtd = b'<!DOCTYPE x [<!ENTITY a "aaaa">]><workbook/>'
    doc = raw_workbook(tmp_path / "d.xlsx", {"S": ""}, parts={"xl/workbook.xml": dtd})
    with pytest.raises(ScenarioFileError, match="a part holds a DTD"):
        _package(doc).sheets("xl/")


def test_recorded_run_name_reads_a_runs_workbook_title(tmp_path):
    import pipeline

    path = tmp_path / "q1.csv"
    path.write_text("name,op,B,D,F,hardware\nok,matmul,1,2,3,v5e\n")
    pipeline.analyze(path).write(tmp_path / "my run", plots=False, report=False)
    assert recorded_run_name(tmp_path / "my run" / "workbook.xlsx") == "my run"
    assert recorded_run_name(path) is None  # not a zip
    assert recorded_run_name(tmp_path / "nope.xlsx") is None
