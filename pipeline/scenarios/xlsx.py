"""The package around a workbook's cells: what kind of file it is (.xlsx, .xls, .ods, an
encrypted one), caps on what it unpacks to, where a sheet's XML is, and which formula cells
have no value saved. The cells themselves are read by `sheet` (python-calamine)."""

from __future__ import annotations

import io
import posixpath
import re
import zipfile
from xml.etree import ElementTree

from pipeline.errors import ScenarioFileError, printable

ZIP_MAGIC = b"PK\x03\x04"
OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # Excel 97-2003 (.xls), or an encrypted .xlsx
WORKBOOK_SUFFIXES = (".xlsx", ".xlsm", ".xls", ".ods")

# what a workbook may unpack to: 100,000 scenario rows take about 30 MB of sheet XML, so this
# is room for 3 million; a zip bomb declares far more, or packs far tighter than XML does
MAX_UNPACKED = 1 << 30
MAX_RATIO = 200  # unpacked / packed of one member, counted above RATIO_FLOOR bytes
RATIO_FLOOR = 1 << 24


def is_workbook(name: str, data: bytes) -> bool:
    """True when the file is a spreadsheet by its first bytes or its extension."""
    return data.startswith((ZIP_MAGIC, OLE_MAGIC)) or name.lower().endswith(WORKBOOK_SUFFIXES)


def open_package(path, data: bytes) -> zipfile.ZipFile:
    """The workbook's zip, its declared sizes checked; ScenarioFileError saying what the
    file is instead (.xls, .ods, password-protected, not a zip, a zip bomb)."""
    name = printable(path)
    if data.startswith(OLE_MAGIC):
        if "EncryptedPackage".encode("utf-16-le") in data:
            raise ScenarioFileError(
                f"{name}: the workbook is password-protected (encrypted), so its cells cannot "
                "be read; save a copy without the password and give that"
            )
        raise ScenarioFileError(
            f"{name}: an Excel 97-2003 workbook (.xls), which is not read; save it as .xlsx "
            "(Excel Workbook) or as CSV"
        )
    try:
        package = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise ScenarioFileError(
            f"{name}: not an .xlsx workbook (an .xlsx file is a zip archive, and this is "
            "not one); save it from Excel as .xlsx, or as CSV"
        ) from exc
    members = package.infolist()
    if "mimetype" in package.namelist() and b"opendocument" in package.read("mimetype"):
        raise ScenarioFileError(
            f"{name}: an OpenDocument spreadsheet (.ods), which is not read; save it as "
            ".xlsx (Excel 2007-365) or as CSV"
        )
    total = sum(m.file_size for m in members)
    worst = max(members, key=lambda m: m.file_size / max(m.compress_size, 1), default=None)
    if total > MAX_UNPACKED or (
        worst is not None
        and worst.file_size > RATIO_FLOOR
        and worst.file_size > MAX_RATIO * max(worst.compress_size, 1)
    ):
        raise ScenarioFileError(
            f"{name}: the workbook would unpack to {total:,} bytes from {len(data):,} "
            f"(a zip bomb?); the limit is {MAX_UNPACKED:,} bytes, and {MAX_RATIO} times its "
            "packed size for any part over 16 MB: save the scenarios as CSV"
        )
    return package


_NS = {
    "m": "http://schemas.openxmlformats.org/spreadsheetml/2006/main",
    "r": "http://schemas.openxmlformats.org/officeDocument/2006/relationships",
    "p": "http://schemas.openxmlformats.org/package/2006/relationships",
}


def sheet_part(package: zipfile.ZipFile, sheet: str) -> str | None:
    """The zip member holding `sheet`'s XML (None when the workbook does not say)."""
    try:
        book = ElementTree.fromstring(package.read("xl/workbook.xml"))
        rels = ElementTree.fromstring(package.read("xl/_rels/workbook.xml.rels"))
    except (KeyError, ElementTree.ParseError):
        return None
    targets = {r.get("Id"): r.get("Target", "") for r in rels.findall("p:Relationship", _NS)}
    for s in book.iterfind("m:sheets/m:sheet", _NS):
        if s.get("name") == sheet:
            target = targets.get(s.get(f"{{{_NS['r']}}}id"), "")
            if target.startswith("/"):
                return target.lstrip("/")
            return posixpath.normpath(posixpath.join("xl", target))
    return None


_ANY_FORMULA = re.compile(rb"<f[ >/]")
_CELL = re.compile(rb"<c\b([^>]*?)(?:/>|>(.*?)</c>)", re.S)
_REF = re.compile(rb'\br="([A-Z]+)([0-9]+)"')
_FORMULA = re.compile(rb"<f\b[^>]*?(?:/>|>(.*?)</f>)", re.S)
_VALUE = re.compile(rb"<v>[^<]")


def uncached_formulas(package: zipfile.ZipFile, part: str | None) -> dict[tuple[int, int], str]:
    """{(row, column), 0-based: formula} of the formula cells with no value saved (a file
    written by a program that does not compute, such as openpyxl; Excel and LibreOffice
    save the values)."""
    if part is None or part not in package.namelist():
        return {}
    xml = package.read(part)
    if _ANY_FORMULA.search(xml) is None:  # most sheets (a regex: 2 x faster than `in`)
        return {}
    found = {}
    for cell in _CELL.finditer(xml):
        attrs, inner = cell.group(1), cell.group(2) or b""
        formula = _FORMULA.search(inner)
        if formula is None or _VALUE.search(inner) or b't="str"' in attrs:
            continue  # a value saved (t="str" with an empty <v>: a formula giving "")
        ref = _REF.search(attrs)
        if ref is None:
            continue
        col = 0
        for ch in ref.group(1):
            col = col * 26 + ch - 64
        text = (formula.group(1) or b"").decode("utf-8", "replace")
        found[(int(ref.group(2)) - 1, col - 1)] = "=" + _unescape(text)
    return found


def _unescape(text: str) -> str:
    for entity, ch in (("&lt;", "<"), ("&gt;", ">"), ("&quot;", '"'), ("&apos;", "'")):
        text = text.replace(entity, ch)
    return text.replace("&amp;", "&")
