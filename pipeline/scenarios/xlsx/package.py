"""The package around a workbook's cells: what kind of file it is (.xlsx, .xls, .ods, an
encrypted one, Excel's lock file), where its parts are, found the way python-calamine finds
them, and caps on what the parts read unpack to. The cells are checked by `budget` before
`sheet` has python-calamine read them."""

from __future__ import annotations

import copy
import io
import re
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import PurePath
from xml.parsers import expat
from xml.sax.saxutils import unescape

from pipeline.errors import ScenarioFileError, printable, quoted
from pipeline.limits import MAX_WORKBOOK_PART

ZIP_MAGIC = b"PK\x03\x04"
OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # Excel 97-2003 (.xls), or an encrypted .xlsx
WORKBOOK_SUFFIXES = (".xlsx", ".xlsm", ".xls", ".ods")
LOCK_PREFIX = "~$"  # Excel's lock file of an open workbook: ~$plan.xlsx beside plan.xlsx

# what the parts read may unpack to (the sheet read, the shared strings, styles, the workbook
# and its relationships; the other sheets are never opened): 100,000 scenario rows take about
# 30 MB of sheet XML, so this is room for 3 million; a zip bomb declares far more, or packs far
# tighter than XML does
MAX_UNPACKED = 1 << 30
MAX_PART = MAX_WORKBOOK_PART  # what one part read may declare, checked before it is read
MAX_RATIO = 200  # unpacked / packed of one part, counted above RATIO_FLOOR bytes
RATIO_FLOOR = 1 << 24
MAX_META = 1 << 24  # workbook.xml and the relationships: a few KB in any real workbook
DAMAGED = "the file is damaged; open it in Excel or LibreOffice and save it again"

RUN_TITLE = "Roofline run "  # + its name: the title render/workbook/book.py gives a run's workbook
RUN_WORKBOOK = "workbook"  # the stem of the workbook a run writes
_TITLE = re.compile(rb"<dc:title>" + re.escape(RUN_TITLE.encode()) + rb"([^<]{1,255})</dc:title>")
MAX_CORE = 1 << 16  # docProps/core.xml: under a KB in any real workbook


def is_workbook(name: str, data: bytes) -> bool:
    """True when the file is a spreadsheet by its first bytes or its extension."""
    return data.startswith((ZIP_MAGIC, OLE_MAGIC)) or name.lower().endswith(WORKBOOK_SUFFIXES)


def lock_file_note(path) -> str:
    """What Excel's lock file `~$plan.xlsx` is, and what to give instead."""
    name = PurePath(str(path)).name
    owner = name[len(LOCK_PREFIX) :]
    return (
        f"{printable(path)}: Excel's lock file for {quoted(owner)} (Excel writes it while the "
        f"workbook is open; it holds no cells): give {quoted(owner)}"
    )


def open_package(path, data: bytes) -> Package:
    """The workbook's zip; ScenarioFileError saying what the file is instead (.xls, .ods,
    password-protected, Excel's lock file, not a zip)."""
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
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        if PurePath(str(path)).name.startswith(LOCK_PREFIX):
            raise ScenarioFileError(lock_file_note(path)) from exc
        raise ScenarioFileError(
            f"{name}: not an .xlsx workbook (an .xlsx file is a zip archive, and this is "
            "not one); save it from Excel as .xlsx, or as CSV"
        ) from exc
    if "mimetype" in archive.namelist() and b"opendocument" in archive.read("mimetype")[:200]:
        raise ScenarioFileError(
            f"{name}: an OpenDocument spreadsheet (.ods), which is not read; save it as "
            ".xlsx (Excel 2007-365) or as CSV"
        )
    return Package(name, archive, len(data))


def recorded_run_name(path) -> str | None:
    """The run a run's own workbook came from (`q1-q5` for output/q1-q5/workbook.xlsx), from
    the title the run wrote in its document properties; None for any other file, or one
    that cannot be read (reading it later says why)."""
    try:
        with zipfile.ZipFile(path) as archive:
            info = archive.getinfo("docProps/core.xml")
            if info.file_size > MAX_CORE:
                return None
            with archive.open(info) as part:
                core = part.read(MAX_CORE + 1)
    except (OSError, KeyError, ValueError, zipfile.BadZipFile, zlib.error, EOFError):
        return None
    found = _TITLE.search(core)
    if found is None:
        return None
    return unescape(found.group(1).decode("utf-8", "replace")).strip() or None


@dataclass(frozen=True)
class SheetEntry:
    """A sheet as workbook.xml lists it: its name, whether it is shown, where its XML is."""

    name: str
    state: str  # "visible", "hidden" or "veryHidden"
    part: str | None  # the path python-calamine opens for it (None: no relationship names one)


class Package:
    """A workbook's zip, its parts looked up as python-calamine looks them up (ASCII letters in
    any case, `\\` read as `/`), each part read checked against the size it declares."""

    def __init__(self, name: str, archive: zipfile.ZipFile, size: int):
        self.name, self.zip, self.size = name, archive, size
        self._members: dict[str, list[zipfile.ZipInfo]] = {}
        for info in archive.infolist():
            self._members.setdefault(_key(info.filename), []).append(info)

    def member(self, path: str) -> zipfile.ZipInfo | None:
        """The zip member python-calamine opens for `path` (None: there is none); two members
        whose names differ only in case are refused, as the reader could take either."""
        found = self._members.get(_key(path), [])
        if len(found) > 1:
            raise ScenarioFileError(
                f"{self.name}: the workbook holds {len(found)} parts named {quoted(path)} in "
                f"different case ({', '.join(quoted(i.filename) for i in found)}); {DAMAGED}"
            )
        return found[0] if found else None

    def read(self, info: zipfile.ZipInfo) -> bytes:
        """A part's bytes, refused when it holds more than it declares (a zip bomb's trick)."""
        with self.open(info) as stream:
            return stream.read()

    def open(self, info: zipfile.ZipInfo) -> _Checked:
        """A part as a stream of the bytes it declares."""
        return _Checked(self, info)

    def xl_folder(self) -> str:
        """Where workbook.xml is: the folder of the package's officeDocument relationship."""
        rels = self.member("_rels/.rels")
        if rels is None:
            raise ScenarioFileError(
                f"{self.name}: not an .xlsx workbook (the zip has no _rels/.rels, the list of "
                "its parts); save it from Excel as .xlsx, or as CSV"
            )
        for _, attrs in self._elements(rels, ("Relationship",)):
            if attrs.get("Type", "").endswith("/relationships/officeDocument"):
                target = attrs.get("Target", "")
                return target[: target.rfind("/") + 1].removeprefix("/")
        return "xl/"

    def opening_parts(self, xl: str) -> list[zipfile.ZipInfo]:
        """The parts python-calamine reads when it opens the workbook."""
        paths = ("_rels/.rels", f"{xl}sharedStrings.xml", f"{xl}styles.xml",
                 f"{xl}_rels/workbook.xml.rels", f"{xl}workbook.xml")  # fmt: skip
        return [m for m in map(self.member, paths) if m is not None]

    def sheets(self, xl: str) -> list[SheetEntry]:
        """The sheets workbook.xml lists, in its order, each with the part that holds it."""
        targets = {}
        rels = self.member(f"{xl}_rels/workbook.xml.rels")
        if rels is not None:
            for _, attrs in self._elements(rels, ("Relationship",)):
                if "Id" in attrs:
                    targets[attrs["Id"]] = attrs.get("Target", "")
        book = self.member(f"{xl}workbook.xml")
        entries = []
        for _, attrs in [] if book is None else self._elements(book, ("sheet",)):
            rel = next((v for k, v in reversed(attrs.items()) if k.rpartition(":")[2] == "id"), "")
            target = targets.get(rel)
            part = None if target is None else target[1:] if target[:1] == "/" else xl + target
            entries.append(SheetEntry(attrs.get("name", ""), attrs.get("state", "visible"), part))
        return entries

    def check_unpacked(self, parts: list[zipfile.ZipInfo]) -> None:
        """Refuse, by the sizes the zip's directory declares and before any is read, a part
        that would unpack past MAX_PART, parts that would unpack past MAX_UNPACKED together,
        or one over RATIO_FLOOR that packs tighter than MAX_RATIO to 1."""
        parts = list({p.filename: p for p in parts}.values())
        for part in parts:
            if part.file_size > MAX_PART:
                raise ScenarioFileError(
                    f"{self.name}: the part {quoted(part.filename)} would unpack to "
                    f"{part.file_size:,} bytes, past the {MAX_PART:,} bytes a workbook part "
                    "may take; save the scenarios as CSV, or split the sheet"
                )
        total = sum(p.file_size for p in parts)
        worst = max(parts, key=lambda p: p.file_size / max(p.compress_size, 1), default=None)
        if total > MAX_UNPACKED or (
            worst is not None
            and worst.file_size > RATIO_FLOOR
            and worst.file_size > MAX_RATIO * max(worst.compress_size, 1)
        ):
            raise ScenarioFileError(
                f"{self.name}: the parts read ({', '.join(quoted(p.filename) for p in parts)}) "
                f"would unpack to {total:,} bytes from {self.size:,} (a zip bomb?); the limit "
                f"is {MAX_UNPACKED:,} bytes, and {MAX_RATIO} times its packed size for any "
                "part over 16 MB: save the scenarios as CSV"
            )

    def _no_doctype(self, *_args) -> None:
        """A DTD, which no workbook part has: refused (its entities could expand without end)."""
        raise ScenarioFileError(f"{self.name}: a part holds a DTD (<!DOCTYPE ...>); {DAMAGED}")

    def _elements(self, info, names: tuple[str, ...]) -> list[tuple[str, dict[str, str]]]:
        """The elements of a small XML part with these local names (any prefix, as
        python-calamine matches them), with their attributes as written."""
        if info.file_size > MAX_META:
            raise ScenarioFileError(
                f"{self.name}: the part {quoted(info.filename)} would unpack to "
                f"{info.file_size:,} bytes, past the {MAX_META:,} it may take; {DAMAGED}"
            )
        found: list[tuple[str, dict[str, str]]] = []

        def start(tag: str, attrs: list[str]) -> None:
            local = tag.rpartition(":")[2]
            if local in names:
                found.append((local, dict(zip(attrs[::2], attrs[1::2], strict=True))))

        parser = expat.ParserCreate()
        parser.ordered_attributes = True
        parser.StartElementHandler = start
        parser.StartDoctypeDeclHandler = self._no_doctype
        try:
            parser.Parse(self.read(info), True)
        except expat.ExpatError as exc:
            raise ScenarioFileError(
                f"{self.name}: the part {quoted(info.filename)} is not well-formed XML "
                f"({expat.ErrorString(exc.code)} at line {exc.lineno}); {DAMAGED}"
            ) from exc
        return found


def _key(path: str) -> str:
    """python-calamine's key of a part's name: `\\` as `/`, ASCII letters in lower case."""
    return (
        path.replace("\\", "/").encode("utf-8", "surrogatepass").lower().decode("utf-8", "replace")
    )


class _Checked:
    """A part's bytes as a stream, read through a ZipInfo that allows one byte more than the
    part declares, so a part that holds more is caught at that byte, never unpacked whole."""

    def __init__(self, package: Package, info: zipfile.ZipInfo):
        self.package, self.info, self.left = package, info, info.file_size
        wider = copy.copy(info)
        wider.file_size = info.file_size + 1
        try:
            self.stream = package.zip.open(wider)
        except (zipfile.BadZipFile, NotImplementedError, OSError, ValueError) as exc:
            raise self._error(exc) from exc

    def __enter__(self) -> _Checked:
        return self

    def __exit__(self, *exc) -> None:
        self.stream.close()

    def read(self, size: int = -1) -> bytes:
        """Up to `size` bytes (all that are left with -1)."""
        try:
            data = self.stream.read(size)
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError) as exc:
            raise self._error(exc) from exc
        if len(data) > self.left:
            raise ScenarioFileError(
                f"{self.package.name}: the part {quoted(self.info.filename)} holds more than the "
                f"{self.info.file_size:,} bytes it declares (a zip bomb?); save the scenarios "
                "as CSV"
            )
        self.left -= len(data)
        return data

    def _error(self, exc: Exception) -> ScenarioFileError:
        return ScenarioFileError(
            f"{self.package.name}: cannot unpack the part {quoted(self.info.filename)} "
            f"({printable(exc)}); {DAMAGED}"
        )
