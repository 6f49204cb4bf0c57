"""The sheet checked before python-calamine reads it: the fast look at plain XML, and the exact
replay for any other XML or a bound past a budget."""

from __future__ import annotations

import io

import numpy as np
import pytest

from pipeline.errors import ScenarioFileError
from pipeline.scenarios.xlsx import budget as xlsx_budget
from pipeline.scenarios.xlsx.budget import fast_scan, scan_sheet
from pipeline.scenarios.xlsx.cells import Budget, CellReader
from pipeline.scenarios.xlsx.package import open_package
from tests.helpers import MAIN_NS, raw_workbook

LABEL = "s.xlsx[S]"
PLAIN = (
    '<row r="1" spans="1:3"><c r="A1" t="inlineStr"><is><t>name</t></is></c>'
    '<c r="B1" s="2" t="s"><v>0</v></c></row>'
    '<row r="2"><c r="A2" t="e"><f>1/0</f><v>#DIV/0!</v></c><c r="B2"><f>A1</f></c>'
    '<c r="C2" t="str"><f>""</f><v></v></c><c r="D2"><v>4</v></c></row>'
    '<row r="70"><c r="AB70" s="1"/></row>'
)


def sheet(rows: str, head: str = "") -> bytes:
    return f'{head}<worksheet xmlns="{MAIN_NS}"><sheetData>{rows}</sheetData></worksheet>'.encode()


def _scan(path):
    package = open_package(path, path.read_bytes())
    entry = package.sheets("xl/")[0]
    return scan_sheet(package, package.member(entry.part), "xl/", LABEL)


def exact(data: bytes):
    return CellReader(Budget(LABEL, [5])).parse(io.BytesIO(data), LABEL)


def test_plain_xml_bounds_every_cell_and_reads_the_formula_and_error_cells_alone():
    data = sheet(PLAIN, '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n')
    scan = fast_scan(data, lambda: np.array([5]), LABEL)
    assert scan.last == (69, 27)  # the formatted AB70 too: a bound
    assert scan.marks == {(1, 0): ("error", "#DIV/0!"), (1, 1): ("formula", "=A1")}
    assert exact(data).marks == scan.marks and exact(data).last == (1, 3)


@pytest.mark.parametrize(
    "rows",
    [
        '<row><c t="n"><v>1</v></c></row>',  # no r
        '<row r="1"><c s="1" r="A1"><v>1</v></c></row>',  # r not first
        '<row r="1"><c r="A1" r="XFD1048576"><v>1</v></c></row>',  # r twice
        '<row r="1"><c r="A1"\nr="XFD1048576"><v>1</v></c></row>',
        '<row r="1"><c r="A1" t=\'e\'><v>#N/A</v></c></row>',  # single quotes
        '<row r="1"><c r="A1" t = "e"><v>#N/A</v></c></row>',  # spaces around =
        '<row r="1"><c r="a1"><v>1</v></c></row>',  # lower case
        '<row r="1"><c r="ABCD1"><v>1</v></c></row>',  # past XFD's three letters
        '<row r="1"><c r="A12345678"><v>1</v></c></row>',  # past 7 digits
        '<row r="1"><x:c r="A1" xmlns:x="u"><v>1</v></x:c></row>',  # a prefix
        '<row r="1"><c r="A1"><x:f xmlns:x="u">1</x:f></c></row>',
        '<row r="1"><!-- <c r="A1"/> --></row>',  # a comment
        '<row r="1"><c r="A1" t="inlineStr"><is><t><![CDATA[x]]></t></is></c></row>',
        # a long start tag before an apostrophe: whether it is inside the tag is left open
        f'<row r="1"><c r="A1" s="{"1" * 80}" t="inlineStr"><is><t>don\'t</t></is></c></row>',
    ],
)
def test_other_xml_is_left_to_the_exact_replay(rows):
    assert fast_scan(sheet(rows), lambda: np.zeros(0, int), LABEL) is None


def test_xml_in_another_encoding_than_utf8_is_refused(tmp_path):
    utf16 = sheet(PLAIN, '<?xml version="1.0" encoding="UTF-16"?>').decode().encode("utf-16")
    with pytest.raises(ScenarioFileError) as err:
        _scan(raw_workbook(tmp_path / "u.xlsx", {"S": utf16}))
    assert str(err.value) == (
        "s.xlsx[S]: the sheet's XML is in UTF-16 or UTF-32, which is not read (a workbook's "
        "XML is UTF-8); open the workbook in Excel or LibreOffice and save it again"
    )
    latin = sheet(PLAIN, '<?xml version="1.0" encoding="ISO-8859-1"?>')
    with pytest.raises(ScenarioFileError, match=r"is in 'ISO-8859-1', which is not read"):
        _scan(raw_workbook(tmp_path / "l.xlsx", {"S": latin}))
    bom = b"\xef\xbb\xbf" + sheet(PLAIN, '<?xml version="1.0" encoding="utf-8"?>')
    assert _scan(raw_workbook(tmp_path / "b.xlsx", {"S": bom}, strings=["s"])).last == (69, 27)


def test_a_bound_past_a_budget_is_left_to_the_exact_replay(monkeypatch):
    far = sheet('<row r="1"><c r="A1"><v>1</v></c></row><row r="9"><c r="XFD9" s="1"/></row>')
    assert fast_scan(far, lambda: np.zeros(0, int), LABEL).last == (
        8,
        16383,
    )  # 147,456 cells: a bound
    monkeypatch.setattr(xlsx_budget, "MAX_CELLS", 1_000)
    assert fast_scan(far, lambda: np.zeros(0, int), LABEL) is None
    monkeypatch.setattr(xlsx_budget, "MAX_TEXT", 1_000)
    shared = sheet('<row r="1"><c r="A1" t="s"><v>0</v></c></row>')
    assert fast_scan(shared, lambda: np.array([10]), LABEL) is not None
    assert fast_scan(shared, lambda: np.array([2_000]), LABEL) is None


def test_a_formatted_far_cell_passes_and_a_far_value_is_refused_by_name(tmp_path):
    formatted = (
        '<row r="1"><c r="A1"><v>1</v></c></row><row r="1048576"><c r="XFD1048576" s="1"/></row>'
    )
    assert _scan(raw_workbook(tmp_path / "f.xlsx", {"S": formatted})).last == (0, 0)
    valued = '<row r="1"><c r="A1"><v>1</v></c></row><row r="1048576"><c r="XFD1048576"><v>1</v></c></row>'
    with pytest.raises(ScenarioFileError, match=r"^s.xlsx\[S\]: cell XFD1048576 lies past"):
        _scan(raw_workbook(tmp_path / "v.xlsx", {"S": valued}))


def test_shared_strings_larger_than_the_text_budget_are_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(xlsx_budget, "MAX_TEXT", 100)
    path = raw_workbook(tmp_path / "s.xlsx", {"S": ""}, strings=["x" * 200])
    with pytest.raises(ScenarioFileError, match=r"shared strings \('xl/sharedStrings.xml'\) would"):
        _scan(path)


def test_shared_string_lengths_are_bounded_from_plain_xml_or_measured(tmp_path):
    plain = raw_workbook(tmp_path / "p.xlsx", {"S": ""}, strings=["ab", "a &amp; b"])
    package = open_package(plain, plain.read_bytes())
    assert list(
        xlsx_budget._string_bounds(package, package.member("xl/sharedStrings.xml"), LABEL)
    ) == [9, 20]
    odd = f'<x:sst xmlns:x="{MAIN_NS}"><x:si><x:t>abc</x:t></x:si></x:sst>'.encode()
    prefixed = raw_workbook(tmp_path / "o.xlsx", {"S": ""}, strings=odd)
    package = open_package(prefixed, prefixed.read_bytes())
    assert list(
        xlsx_budget._string_bounds(package, package.member("xl/sharedStrings.xml"), LABEL)
    ) == [3]


def test_the_text_bound_counts_each_shared_string_cell_at_the_string_it_names(monkeypatch):
    cells = '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" s="3" t="s"><v>0</v></c></row>'
    data = sheet(cells + '<row r="2"><c r="A2" t="inlineStr"><is><t>t="s"</t></is></c></row>')
    monkeypatch.setattr(xlsx_budget, "MAX_TEXT", len(data) + 100)
    lengths = np.array([5, 500])
    assert fast_scan(data, lambda: lengths, LABEL) is not None  # 2 x 5, not 3 x 500
    far = data.replace(b"<v>0</v></c></row>", b"<v>1</v></c></row>", 1)
    assert fast_scan(far, lambda: lengths, LABEL) is None  # B1 uses the 500
    odd = data.replace(b"<v>0</v></c></row>", b"<f>X</f><v>0</v></c></row>", 1)
    assert fast_scan(odd, lambda: lengths, LABEL) is None  # B1 counted at the longest
