"""A sheet's cells as python-calamine reads them, replayed on expat's events over the sheet's
XML, with the budgets a scenario sheet is held to.

The replay follows calamine 0.37 (src/xlsx/cells_reader.rs): elements are matched by their
local name (`<x:c>` is a cell), a cell is where its `r` says, else next along its row (a `<row>`
without `r` is the one after the last); the last of a cell's `<v>`, `<is>` and `<f>` children
gives its value, and a formula alone, an empty `<v>` or the `<v>` of an inline-string cell give
none. So the cells a budget counts, and the formulas with no value saved and the error values
(`#N/A`) that python-calamine hands on as empty cells, are the cells it reads. `xlsx_budget`
runs this over a whole sheet when the sheet's XML is not in its plain form, and over the
formula and error cells alone when it is."""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from xml.parsers import expat

from pipeline.errors import ScenarioFileError, quoted

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
_KINDS = {"s": "shared", "e": "error", "b": "bool", "n": "number"}  # by a <v>'s t; else text


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


def parse_ref(text: str) -> tuple[int, int | None] | None:
    """A cell or row reference as python-calamine reads it: (row, column), 0-based, the
    column None when only a row is given; None when it is not one (`A0`, `1A`, `A-1`)."""
    i, col = 0, 0
    while i < len(text) and text[i].isascii() and text[i].isalpha():
        col = col * 26 + ord(text[i].upper()) - 64
        i += 1
    digits = text[i:]
    if not digits or not (digits.isascii() and digits.isdigit()) or int(digits) == 0:
        return None
    return int(digits) - 1, (col - 1 if col else None)


@dataclass
class Scan:
    """What a sheet's XML holds, as far as reading it safely needs: the farthest row and
    column (0-based) a cell with a value may have, and the cells python-calamine reads as
    empty that are not: {(row, col): ("formula", "=A1*2") or ("error", "#N/A")}."""

    last: tuple[int, int] = (-1, -1)
    marks: dict[tuple[int, int], tuple[str, str]] = field(default_factory=dict)


class Budget:
    """The cells counted against MAX_CELLS (the grid from A1 to the farthest value) and
    MAX_TEXT, refused at the first cell past either, named."""

    def __init__(self, label: str, lengths=None):
        self.label, self.lengths = label, lengths
        self.rows = self.cols = self.text = 0
        self.uses: dict[int, int] = {}

    def cell(self, row: int, col: int) -> None:
        rows, cols = max(self.rows, row + 1), max(self.cols, col + 1)
        if rows * cols > MAX_CELLS:
            raise ScenarioFileError(
                f"{self.label}: cell {ref(row, col)} lies past the cells a scenario sheet may "
                f"span: reading it means a grid of {rows:,} rows by {cols:,} columns from A1 "
                f"({rows * cols:,} cells), and the limit is {MAX_CELLS:,}; {WHAT_TO_DO}"
            )
        self.rows, self.cols = rows, cols

    def shared(self, row: int, col: int, index: int) -> None:
        if self.lengths is None:
            return
        if index >= len(self.lengths):
            raise ScenarioFileError(
                f"{self.label}: cell {ref(row, col)} uses shared string {index:,}, but the "
                f"workbook has {len(self.lengths):,}; the file is damaged; open it in Excel or "
                "LibreOffice and save it again"
            )
        self.uses[index] = self.uses.get(index, 0) + 1
        self.add(row, col, self.lengths[index], f"shared string {index:,}")

    def add(self, row: int, col: int, length: int, what: str = "its own text") -> None:
        self.text += length
        if self.text > MAX_TEXT:
            used = ""
            if what.startswith("shared"):
                index = int(what.split()[-1].replace(",", ""))
                used = f", used by {self.uses[index]:,} cells up to it"
            raise ScenarioFileError(
                f"{self.label}: cell {ref(row, col)} takes the text of the sheet's cells past "
                f"{MAX_TEXT:,} characters ({what} is {length:,} characters{used}); shorten "
                "the text, or save the scenarios as CSV"
            )


class CellReader:
    """Expat's handlers that replay python-calamine's reading of a sheet (this module's
    docstring). `cells_only`: the XML is cells cut out of a sheet, each with its `r`."""

    def __init__(self, budget: Budget, cells_only: bool = False):
        self.budget, self.scan = budget, Scan()
        self.inside, self.done = cells_only, False
        self.row = self.col = 0
        self.cell: _Cell | None = None
        self.depth = 0  # within the cell
        self.masters: dict[str, tuple[tuple[int, int], str]] = {}  # a shared formula's si

    def parse(self, stream, label: str) -> Scan:
        """The scan of the XML read from `stream` (a part's or BytesIO's `read`)."""
        parser = self._parser()
        try:
            while not self.done:
                chunk = stream.read(CHUNK)
                parser.Parse(chunk, not chunk)
                if not chunk:
                    break
        except expat.ExpatError as exc:
            raise ScenarioFileError(
                f"{label}: the sheet's XML is not well-formed ({expat.ErrorString(exc.code)} "
                f"at line {exc.lineno}, column {exc.offset + 1}); open the workbook in Excel "
                "or LibreOffice and save it again"
            ) from exc
        self.scan.last = (self.budget.rows - 1, self.budget.cols - 1)
        return self.scan

    def feed(self, data: bytes) -> Scan:
        """The scan of a whole XML text; expat.ExpatError when it is not well-formed."""
        self._parser().Parse(data, True)
        self.scan.last = (self.budget.rows - 1, self.budget.cols - 1)
        return self.scan

    def _parser(self):
        parser = expat.ParserCreate()
        parser.buffer_text = True
        parser.buffer_size = CHUNK
        parser.StartElementHandler = self.start
        parser.EndElementHandler = self.end
        parser.CharacterDataHandler = self.text
        parser.StartDoctypeDeclHandler = lambda *_: refuse_dtd(self.budget.label, "sheet")
        return parser

    def start(self, tag: str, attrs: dict[str, str]) -> None:
        if self.done:
            return
        local = tag.rpartition(":")[2]
        if not self.inside:
            self.inside = local == "sheetData"
            return
        cell = self.cell
        if cell is None:
            if local == "row" and "r" in attrs:
                at = parse_ref(attrs["r"])
                if at is None:
                    self._bad(f"a row numbered {quoted(attrs['r'])}")
                self.row = at[0]
            elif local == "c":
                pos = (self.row, self.col)
                if "r" in attrs:
                    at = parse_ref(attrs["r"])
                    if at is None or at[1] is None:
                        self._bad(f"a cell named {quoted(attrs['r'])}")
                    pos = (at[0], at[1])
                    self.col = at[1]
                self.cell, self.depth = _Cell(pos, attrs.get("t")), 0
            return
        self.depth += 1
        if self.depth == 1:
            if local not in ("v", "is", "f"):
                self._bad(f"cell {ref(*cell.pos)} holds an element <{local}> where a value was "
                          "expected")  # fmt: skip
            cell.child, cell.parts, cell.first = local, [], None
            cell.preserve = cell.phonetic = cell.in_t = False
            if local == "f" and attrs.get("t") == "shared":
                cell.shared = attrs.get("si")
            return
        if cell.first is None:
            cell.first = False  # an element first: python-calamine reads no value from a <v>
        if cell.child == "is":
            if local == "rPh":
                cell.phonetic = True
            elif local == "t" and not cell.phonetic:
                cell.in_t, cell.preserve, cell.parts = (
                    True,
                    attrs.get("xml:space") == "preserve",
                    [],
                )

    def end(self, tag: str) -> None:
        if self.done or not self.inside:
            return
        local = tag.rpartition(":")[2]
        cell = self.cell
        if cell is None:
            if local == "row":
                self.row, self.col = self.row + 1, 0
            elif local == "sheetData":
                self.done = True
            return
        if self.depth == 0:  # the cell's own end
            self.cell = None
            self.col += 1
            self._value(cell)
            return
        self.depth -= 1
        if self.depth == 0:
            self._child(cell)
        elif cell.child == "is":
            if local == "rPh":
                cell.phonetic = False
            elif local == "t" and cell.in_t:
                text = "".join(cell.parts)
                cell.length += len(text if cell.preserve else text.strip(" \t\r\n"))
                cell.in_t = False

    def text(self, data: str) -> None:
        cell = self.cell
        if cell is None or self.depth == 0 or cell.child is None:
            return
        if cell.first is None:
            cell.first = True
        if cell.child == "is":
            if cell.in_t:
                cell.parts.append(data)
            return
        cell.parts.append(data)

    def _child(self, cell: _Cell) -> None:
        """A child of the cell ended: its value replaces the one before (the last wins)."""
        text = "".join(cell.parts)
        kind, t = None, cell.t
        if cell.child == "f":
            cell.formula = self._shared_formula(cell, text)[:KEPT]
        elif cell.child == "is":
            kind = "text"
        elif t in ("inlineStr", "is"):
            kind = None
        elif t in (None, "n", "s", "b", "e"):
            if cell.first and text:
                kind = _KINDS.get(t, "text")
        elif t in ("str", "d"):
            kind = "text"
        else:
            self._bad(f"cell {ref(*cell.pos)} of a type {quoted(t)} that is not read")
        cell.kind, cell.value = kind, text
        cell.length = len(text) if kind == "text" and cell.child == "v" else cell.length
        cell.child = None

    def _shared_formula(self, cell: _Cell, text: str) -> str:
        """A formula's text; a shared formula's dependent cell (its `<f>` empty) has the
        master's text with its relative references moved to the cell, as Excel shows it."""
        if cell.shared is None:
            return text
        if text:  # the master, first in the sheet's order
            self.masters.setdefault(cell.shared, (cell.pos, text))
            return text
        if cell.shared not in self.masters:
            return text
        origin, master = self.masters[cell.shared]
        return shared_text(master, origin, cell.pos)

    def _value(self, cell: _Cell) -> None:
        """The cell is read: counted, and marked when python-calamine would hand it on empty."""
        row, col = cell.pos
        if cell.kind is None:
            if cell.formula is not None:
                self.scan.marks[cell.pos] = ("formula", "=" + cell.formula)
            return
        self.budget.cell(row, col)
        if cell.kind == "shared":
            text = cell.value
            index = int(text) if text.isascii() and text.isdigit() else 0
            self.budget.shared(row, col, index)
        elif cell.kind == "text":
            self.budget.add(row, col, cell.length)
        elif cell.kind == "error":
            error = cell.value[:KEPT]
            if error not in ERRORS:
                raise ScenarioFileError(
                    f"{self.budget.label}: cell {ref(row, col)} holds the error value "
                    f"{quoted(error)}, which is not read (only {', '.join(ERRORS)}); type the "
                    "value, or save the scenarios as CSV"
                )
            self.scan.marks[cell.pos] = ("error", error)

    def _bad(self, what: str) -> None:
        raise ScenarioFileError(
            f"{self.budget.label}: the sheet's XML has {what}; the file is damaged; open it "
            "in Excel or LibreOffice and save it again"
        )


@dataclass
class _Cell:
    pos: tuple[int, int]
    t: str | None
    child: str | None = None
    kind: str | None = None  # the value's: text, shared, number, bool, error; None: empty
    value: str = ""
    formula: str | None = None
    length: int = 0
    shared: str | None = None  # a shared formula's si
    parts: list[str] = field(default_factory=list)
    first: bool | None = None  # whether the child's first content is text
    preserve: bool = False
    phonetic: bool = False
    in_t: bool = False


def string_lengths(stream, label: str) -> array:
    """The length of each shared string (xl/sharedStrings.xml), as python-calamine reads
    them: the text of each <si>'s <t> elements, phonetic runs (<rPh>) left out."""
    lengths = array("q")
    state = {"in_si": False, "in_t": False, "phonetic": False, "preserve": False, "parts": []}

    def start(tag: str, attrs: dict[str, str]) -> None:
        local = tag.rpartition(":")[2]
        if local == "si":
            state.update(in_si=True, length=0)
        elif state["in_si"] and local == "rPh":
            state["phonetic"] = True
        elif state["in_si"] and local == "t" and not state["phonetic"]:
            state.update(in_t=True, parts=[], preserve=attrs.get("xml:space") == "preserve")

    def end(tag: str) -> None:
        local = tag.rpartition(":")[2]
        if local == "si" and state["in_si"]:
            lengths.append(state["length"])
            state["in_si"] = False
        elif local == "rPh":
            state["phonetic"] = False
        elif local == "t" and state["in_t"]:
            text = "".join(state["parts"])
            state["length"] += len(text if state["preserve"] else text.strip(" \t\r\n"))
            state["in_t"] = False

    def text(data: str) -> None:
        if state["in_t"]:
            state["parts"].append(data)

    parser = expat.ParserCreate()
    parser.buffer_text = True
    parser.buffer_size = CHUNK
    parser.StartElementHandler, parser.EndElementHandler = start, end
    parser.CharacterDataHandler = text
    parser.StartDoctypeDeclHandler = lambda *_: refuse_dtd(label, "shared strings")
    try:
        while chunk := stream.read(CHUNK):
            parser.Parse(chunk, False)
        parser.Parse(b"", True)
    except expat.ExpatError as exc:
        raise ScenarioFileError(
            f"{label}: the workbook's shared strings are not well-formed XML "
            f"({expat.ErrorString(exc.code)} at line {exc.lineno}); open the workbook in "
            "Excel or LibreOffice and save it again"
        ) from exc
    return lengths


def refuse_dtd(label: str, what: str) -> None:
    """A DTD, which no workbook part has, is refused: its entities could expand without end."""
    raise ScenarioFileError(
        f"{label}: the {what} XML has a DTD (<!DOCTYPE ...>), which no workbook part has; "
        "open the workbook in Excel or LibreOffice and save it again"
    )
