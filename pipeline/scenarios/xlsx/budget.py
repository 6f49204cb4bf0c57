"""A scenario sheet's XML checked before python-calamine reads it, in one expat pass.

python-calamine keeps no budget (a value at XFD1048576 makes it ask for 512 GB and abort the
process), and it reads a formula with no value saved and an error value (`#N/A`) as empty
cells. So the pass bounds, conservatively, what the read will hold, and finds those cells:
- the grid: from A1 to the farthest cell with a child (`<v>`, `<is>`, `<f>`), a cell where its
  `r` says, else next along its row (a row without `r` is the one after the last);
- the characters: the XML's size, plus each shared string for every `t="s"` cell using it;
- a formula without a saved value (`<f>` and no `<v>`, or an empty one but for `t="str"`),
  and an error value (`t="e"`), each a row problem.
Past a budget, the message names the file and the cell that went past it."""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass, field
from xml.parsers import expat

from pipeline.errors import ScenarioFileError, quoted
from pipeline.scenarios.xlsx.package import DAMAGED, Package

# what python-calamine's read of a sheet may hold: it keeps every cell from A1 to the farthest
# one with a value, twice over (its range, then the Python lists), about 60 bytes a cell; so
# this is some 600 MB. A scenario sheet of 100,000 rows by 20 columns is 2,000,000 cells.
MAX_CELLS = 10_000_000
# the characters the cells hold: a shared string is copied into every cell that uses it
MAX_TEXT = 200_000_000
ERRORS = ("#DIV/0!", "#N/A", "#NAME?", "#NULL!", "#NUM!", "#REF!", "#VALUE!")  # calamine's
KEPT = 200  # characters of a formula or an error kept for a message
CHUNK = 1 << 20
WHAT_TO_DO = "clear it, or save the scenarios as CSV"
_DECLARED = re.compile(rb'\s*<\?xml[^>]*?encoding\s*=\s*["\']([^"\']*)')
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def ref(row: int, col: int) -> str:
    """A cell's spreadsheet name from its 0-based row and column: (0, 27) -> AB1."""
    letters = ""
    col += 1
    while col:
        col, rem = divmod(col - 1, 26)
        letters = chr(65 + rem) + letters
    return f"{letters}{row + 1}"


def shared_text(master: str, origin: tuple[int, int], at: tuple[int, int]) -> str:
    """A shared formula's text (`master`, written at `origin`) as the cell `at` holds it: its
    relative references moved by the distance between them (openpyxl's Translator, imported
    only when such a cell is found); the master's text when it cannot be moved."""
    from openpyxl.formula.translate import Translator

    try:
        return Translator(f"={master}", origin=ref(*origin)).translate_formula(ref(*at))[1:]
    except Exception:  # a formula Translator cannot parse: quoted as written
        return master


@dataclass
class Scan:
    """A bound on the farthest row and column (0-based) holding a value, and the cells read
    as empty that are not: {(row, col): ("formula", "=A1*2") or ("error", "#N/A")}."""

    last: tuple[int, int] = (-1, -1)
    marks: dict[tuple[int, int], tuple[str, str]] = field(default_factory=dict)


def scan_sheet(package: Package, info: zipfile.ZipInfo, xl: str, label: str) -> Scan:
    """The checked scan of the sheet in part `info` (`label`: FILE[SHEET], for messages)."""
    strings = package.member(f"{xl}sharedStrings.xml")
    for part, what in ((strings, "the workbook's shared strings"), (info, "the sheet's XML")):
        if part is not None and part.file_size > MAX_TEXT:
            raise ScenarioFileError(
                f"{label}: {what} ({quoted(part.filename)}) would unpack to "
                f"{part.file_size:,} bytes, past the {MAX_TEXT:,} characters a scenario "
                "sheet's text may take; save the scenarios as CSV"
            )
    lengths = [] if strings is None else _string_lengths(package, strings, label)
    with package.open(info) as stream:
        head = stream.read(512)
        _check_encoding(head, label)
        return _Pass(label, lengths, info.file_size).run(head, stream)


class _Pass:
    """expat's handler of the elements' starts in the one pass over the sheet (this module's
    docstring; the ends are not handled, which halves the calls into Python). A cell is done
    when the next cell or row starts, or the XML ends: `at` its (row, column), `t` its type,
    `v` and `f` its `<v>` and `<f>` (None: none; a `<v>` whose text is not needed is "?"),
    `valued` whether it has a child, `prefix` its tag's, which its children's share (an
    `<xm:f>` of a data validation after the cells is not one of them)."""

    def __init__(self, label: str, lengths: list[int], size: int):
        self.label, self.lengths, self.text = label, lengths, size
        self.rows = self.cols = self.col = 0
        self.row, self.number = -1, ""
        self.at: tuple[int, int] | None = None
        self.t = self.v = self.f = self.si = None
        self.valued, self.prefix = False, ""  # the cell's tag's prefix: its children's
        self.buf: list[str] | None = None  # the text of the <v> or <f> being read
        self.into = ""  # which of the two
        self.columns: dict[str, int] = {}  # column letters read: their number
        self.uses: dict[int, int] = {}
        self.masters: dict[str, tuple[tuple[int, int], str]] = {}
        self.marks: dict[tuple[int, int], tuple[str, str]] = {}

    def run(self, head: bytes, stream) -> Scan:
        self.parser = parser = expat.ParserCreate()
        parser.StartElementHandler = self.start
        try:
            _parse(parser, stream, self.label, "sheet", head)
        except expat.ExpatError as exc:
            raise ScenarioFileError(
                f"{self.label}: the sheet's XML is not well-formed "
                f"({expat.ErrorString(exc.code)} at line {exc.lineno}, column "
                f"{exc.offset + 1}); open the workbook in Excel or LibreOffice and save it again"
            ) from exc
        self.start("c", {})  # the last cell done
        return Scan((self.rows - 1, self.cols - 1), self.marks)

    def start(self, tag: str, attrs: dict[str, str]) -> None:
        if self.buf is not None:  # the text of a <v> or <f> (they hold no element) read
            self.parser.CharacterDataHandler = None
            setattr(self, self.into, "".join(self.buf).strip())
            self.buf = None
        if tag == "c":
            at = self.at
            if at is not None and self.valued:
                self._cell(*at)
            name = attrs.get("r")
            if name is None:
                at = (self.row if self.row >= 0 else 0, self.col)
            else:
                col = self.columns.get(name[: -len(self.number)])
                at = (self.row, col) if col is not None and name.endswith(self.number) else None
                at = at or self._cell_at(name)
            self.at, self.col, self.t = at, at[1] + 1, attrs.get("t")
            self.v = self.f = self.si = None
            self.valued, self.prefix = False, ""
        elif tag == "v" or tag == "f":
            if self.at is not None and not self.prefix:
                self.valued = True
                if tag == "v" and self.f is None and self.t != "s" and self.t != "e":
                    self.v = "?"  # its text is not needed
                    return
                self.buf, self.into = [], tag
                self.parser.CharacterDataHandler = self.buf.append
                if tag == "f" and attrs.get("t") == "shared":
                    self.si = attrs.get("si")
        elif tag == "is":
            self.valued = self.valued or (self.at is not None and not self.prefix)
        elif tag == "row":
            if self.at is not None and self.valued:
                self._cell(*self.at)
            self.at, self.row, self.col, self.number = None, self.row + 1, 0, "\0"
            if "r" in attrs:
                number = attrs["r"]
                if not (number.isascii() and number.isdigit() and 0 < int(number) <= 1 << 20):
                    raise self._bad(f"a row numbered {quoted(number)}")
                self.row, self.number = int(number) - 1, number
        elif ":" in tag:  # read by its local name, a cell's children with the cell's prefix
            prefix, _, local = tag.rpartition(":")
            if local in ("c", "row") or prefix == self.prefix:
                self.prefix, cell = "", self.prefix
                self.start(local, attrs)
                self.prefix = prefix if local == "c" else cell

    def _cell_at(self, name: str) -> tuple[int, int]:
        """A cell's (row, column), 0-based, from its name (B7); a damaged one refused."""
        digits = name.lstrip(_LETTERS)
        letters = name[: len(name) - len(digits)]
        col = self.columns.get(letters)
        if col is None and 0 < len(letters) <= 3:
            col = 0
            for letter in letters.upper():
                col = col * 26 + ord(letter) - 64
            self.columns[letters] = col = col - 1
        if col is None or not (
            digits.isascii() and digits.isdigit() and 0 < int(digits) <= 1 << 20
        ):
            raise self._bad(f"a cell named {quoted(name)}")
        return int(digits) - 1, col

    def _cell(self, row: int, col: int) -> None:
        """A cell with a value, or one that should have one: counted, or marked."""
        if row >= self.rows or col >= self.cols:
            self._grow(row, col)
        t, value, formula = self.t, self.v, self.f
        if t == "s" and value:
            self._shared(row, col, value)
        if formula is not None or t == "e":
            self._odd(row, col, t, value, formula)
        elif self.marks:
            self.marks.pop((row, col), None)  # a later cell at the same place

    def _grow(self, row: int, col: int) -> None:
        """The grid reaches the cell (row, col): refused when it is past MAX_CELLS."""
        rows, cols = max(self.rows, row + 1), max(self.cols, col + 1)
        if rows * cols > MAX_CELLS:
            raise ScenarioFileError(
                f"{self.label}: cell {ref(row, col)} lies past the cells a scenario sheet may "
                f"span: reading it means a grid of {rows:,} rows by {cols:,} columns from A1 "
                f"({rows * cols:,} cells), and the limit is {MAX_CELLS:,}; {WHAT_TO_DO}"
            )
        self.rows, self.cols = rows, cols

    def _odd(self, row: int, col: int, t, value, formula) -> None:
        """A formula cell, or an error value: marked when python-calamine reads it as empty."""
        if formula is not None and self.si is not None:
            if formula:
                self.masters.setdefault(self.si, ((row, col), formula))
            elif self.si in self.masters:
                origin, master = self.masters[self.si]
                formula = shared_text(master, origin, (row, col))
        if formula is not None and not value and (value is None or t != "str"):
            self.marks[row, col] = ("formula", "=" + formula[:KEPT])
        elif t == "e" and value:
            if value not in ERRORS:
                raise ScenarioFileError(
                    f"{self.label}: cell {ref(row, col)} holds the error value "
                    f"{quoted(value[:KEPT])}, which is not read (only {', '.join(ERRORS)}); "
                    "type the value, or save the scenarios as CSV"
                )
            self.marks[row, col] = ("error", value)
        else:
            self.marks.pop((row, col), None)

    def _shared(self, row: int, col: int, value: str) -> None:
        index = int(value) if value.isascii() and value.isdigit() else -1
        if not 0 <= index < len(self.lengths):
            name = f"{index:,}" if index >= 0 else quoted(value)
            raise ScenarioFileError(
                f"{self.label}: cell {ref(row, col)} uses shared string {name}, but "
                f"the workbook has {len(self.lengths):,}; {DAMAGED}"
            )
        self.uses[index] = self.uses.get(index, 0) + 1
        self.text += self.lengths[index]
        if self.text > MAX_TEXT:
            raise ScenarioFileError(
                f"{self.label}: cell {ref(row, col)} takes the text of the sheet's cells past "
                f"{MAX_TEXT:,} characters (shared string {index:,} is {self.lengths[index]:,} "
                f"characters, used by {self.uses[index]:,} cells up to it); shorten the text, "
                "or save the scenarios as CSV"
            )

    def _bad(self, what: str) -> ScenarioFileError:
        return ScenarioFileError(f"{self.label}: the sheet's XML has {what}; {DAMAGED}")


def _string_lengths(package: Package, info: zipfile.ZipInfo, label: str) -> list[int]:
    """A bound on each shared string's length: the characters inside its `<si>`."""
    lengths: list[int] = []
    inside = [False]

    def start(tag: str, _attrs) -> None:
        if tag.rpartition(":")[2] == "si":
            inside[0] = True
            lengths.append(0)

    def end(tag: str) -> None:
        if tag.rpartition(":")[2] == "si":
            inside[0] = False

    def data(text: str) -> None:
        if inside[0]:
            lengths[-1] += len(text)

    parser = expat.ParserCreate()
    parser.StartElementHandler, parser.EndElementHandler = start, end
    parser.CharacterDataHandler = data
    try:
        with package.open(info) as stream:
            _parse(parser, stream, label, "shared strings")
    except expat.ExpatError as exc:
        raise ScenarioFileError(
            f"{label}: the workbook's shared strings are not well-formed XML "
            f"({expat.ErrorString(exc.code)} at line {exc.lineno}); {DAMAGED}"
        ) from exc
    return lengths


def _check_encoding(head: bytes, label: str) -> None:
    """Sheet XML in UTF-16 or another encoding than UTF-8 is refused: python-calamine reads
    UTF-8 only (it finds no cells, or fails), and Excel and LibreOffice write nothing else."""
    if head.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\x00" in head:
        encoding = "UTF-16 or UTF-32"
    else:
        declared = _DECLARED.match(head.removeprefix(b"\xef\xbb\xbf"))
        name = declared.group(1).decode("ascii", "replace") if declared else "UTF-8"
        if name.lower() in ("utf-8", "utf8"):
            return
        encoding = quoted(name)
    raise ScenarioFileError(
        f"{label}: the sheet's XML is in {encoding}, which is not read (a workbook's XML is "
        "UTF-8); open the workbook in Excel or LibreOffice and save it again"
    )


def _parse(parser, stream, label: str, what: str, head: bytes = b"") -> None:
    """`head`, then all of `stream`, through `parser` (its handlers set) in CHUNK-sized
    reads, a DTD refused (`what`: the part); expat.ExpatError if it is not well-formed."""
    parser.buffer_text, parser.buffer_size = True, CHUNK
    parser.StartDoctypeDeclHandler = lambda *_: _refuse_dtd(label, what)
    parser.Parse(head, False)
    while chunk := stream.read(CHUNK):
        parser.Parse(chunk, False)
    parser.Parse(b"", True)


def _refuse_dtd(label: str, what: str) -> None:
    """A DTD, which no workbook part has, is refused: its entities could expand without end."""
    raise ScenarioFileError(
        f"{label}: the {what} XML has a DTD (<!DOCTYPE ...>), which no workbook part has; {DAMAGED}"
    )
