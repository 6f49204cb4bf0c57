"""A scenario sheet checked before python-calamine reads it: the budgets (`xlsx_cells`: the
grid from A1 to the farthest cell with a value, the characters the cells hold, a shared string
counted once for every cell that uses it), which python-calamine does not keep (a value at
XFD1048576 makes it ask for 512 GB and abort the process), and the cells it reads as empty
that are not: formulas with no value saved, error values.

Fast path: the sheet's XML as bytes, looked at with numpy (about 0.3 s a million cells), when
it is in the plain form every spreadsheet program writes: UTF-8, no comment, CDATA or DTD,
no prefixed cell or formula element, every cell's start tag `<c r="A1" ...>` with one `r`
and its attributes in double quotes. It bounds the grid by every cell's reference (an empty
formatted cell too) and the text by the XML's size plus the shared strings its cells use;
only the formula and error cells are read one by one. Any other XML, or a bound past a
budget, is read by `xlsx_cells`' exact replay, which refuses what is past a budget and names
the cell."""

from __future__ import annotations

import io
import re
import zipfile
from xml.parsers import expat

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from pipeline.errors import ScenarioFileError, quoted
from pipeline.scenarios.xlsx.cells import (
    MAX_CELLS,
    MAX_TEXT,
    Budget,
    CellReader,
    Scan,
    string_lengths,
)
from pipeline.scenarios.xlsx.package import Package

_SPACE = np.zeros(256, dtype=bool)
_SPACE[[9, 10, 13, 32]] = True
_AFTER_NAME = _SPACE.copy()  # what may end an element's name
_AFTER_NAME[[ord("/"), ord(">")]] = True
_BEFORE_ATTRIBUTE = _SPACE.copy()  # what may come before an attribute's name
_BEFORE_ATTRIBUTE[[ord('"'), ord("'")]] = True
_CELL = np.frombuffer(b'<c r="', dtype=np.uint8)
_REF = 11  # the bytes after `<c r="` looked at: 3 letters, 7 digits and the closing quote
_TAIL = 64  # the bytes of a cell's start tag looked at for its end
_KIND = np.zeros(256, dtype=np.int8)  # a reference's bytes: letter 1, digit 2, its end quote 3
_KIND[ord("A") : ord("Z") + 1], _KIND[ord("0") : ord("9") + 1], _KIND[ord('"')] = 1, 2, 3
_PREFIXED = re.compile(rb":(?:c|f|sheetData)[\s/>]")  # <x:c>, <x:f>: read by their local name
_DECLARED = re.compile(rb'\s*<\?xml[^>]*?encoding\s*=\s*["\']([^"\']*)')


def scan_sheet(package: Package, info: zipfile.ZipInfo, xl: str, label: str) -> Scan:
    """The checked scan of the sheet in part `info` (`label`: FILE[SHEET], for messages)."""
    strings = package.member(f"{xl}sharedStrings.xml")
    if strings is not None and strings.file_size > MAX_TEXT:
        raise ScenarioFileError(
            f"{package.name}: the workbook's shared strings ({quoted(strings.filename)}) would "
            f"unpack to {strings.file_size:,} bytes, past the {MAX_TEXT:,} characters a "
            "scenario sheet's text may take; save the scenarios as CSV"
        )
    if info.file_size <= MAX_TEXT:
        data = package.read(info)
        _check_encoding(data[:512], label)
        scan = fast_scan(data, lambda: _string_bounds(package, strings, label), label)
        if scan is not None:
            return scan
        return exact_scan(package, strings, io.BytesIO(data), label)
    with package.open(info) as stream:
        head = stream.read(512)
        _check_encoding(head, label)
        return exact_scan(package, strings, _Joined(head, stream), label)


def exact_scan(package: Package, strings, stream, label: str) -> Scan:
    """The scan by the replay of python-calamine's reading (xlsx_cells), budgets enforced;
    `stream`: the sheet's XML (its `read`), which the caller closes."""
    lengths = None
    if strings is not None:
        with package.open(strings) as part:
            lengths = string_lengths(part, label)
    return CellReader(Budget(label, lengths or [])).parse(stream, label)


def fast_scan(data: bytes, strings, label: str) -> Scan | None:
    """The scan of plain sheet XML (this module's docstring) when its bounds are within the
    budgets; None when the XML is not plain or a bound is past a budget. `strings()`: a
    length bound of each shared string (an array), asked for only when cells may use one."""
    b = np.frombuffer(data + bytes(_TAIL), dtype=np.uint8)
    tags = np.flatnonzero(b == ord("<"))
    after = b[tags + 1]
    if not _plain(data) or (after == ord("!")).any():
        return None  # a comment, CDATA or DTD
    named = _AFTER_NAME[b[tags + 2]]
    cells = tags[(after == ord("c")) & named]
    if not len(cells):
        return Scan((-1, -1), {})
    window = sliding_window_view(b, len(_CELL) + _REF)[cells]
    if not (window[:, : len(_CELL)] == _CELL).all():
        return None  # a cell without `r`, or with another attribute first
    last = _last_cell(window[:, len(_CELL) :])
    if last is None or (last[0] + 1) * (last[1] + 1) > MAX_CELLS:
        return None
    equals = np.flatnonzero(b == ord("="))
    if not _one_r_each(b, cells, equals):
        return None
    kinds = equals[(b[equals - 1] == ord("t")) & (b[equals + 1] == ord('"'))]
    shared = kinds[(b[kinds + 2] == ord("s")) & (b[kinds + 3] == ord('"'))]  # t="s"
    if len(shared) and not _text_within(b, data, cells, shared, strings()):
        return None
    errors = kinds[(b[kinds + 2] == ord("e")) & (b[kinds + 3] == ord('"'))]  # t="e"
    formulas = tags[(after == ord("f")) & named]
    marks = _marks(data, cells, np.concatenate([formulas, errors]), label)
    return None if marks is None else Scan(last, marks)


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


class _Joined:
    """The bytes already read from a stream, then the rest of it."""

    def __init__(self, head: bytes, rest):
        self.head, self.rest = head, rest

    def read(self, size: int = -1) -> bytes:
        if self.head:
            data, self.head = self.head, b""
            return data
        return self.rest.read(size)


def _plain(data: bytes) -> bool:
    """True when the XML (UTF-8: _check_encoding) has no prefixed cell or formula in its sheet
    data."""
    if not data[:512].removeprefix(b"\xef\xbb\xbf").lstrip().startswith(b"<"):
        return False  # not XML
    if b":sheetData" in data:
        return False
    begin, end = max(data.find(b"<sheetData"), 0), data.rfind(b"</sheetData")
    return _PREFIXED.search(data, begin, len(data) if end < begin else end) is None


def _last_cell(refs: np.ndarray) -> tuple[int, int] | None:
    """The largest row and column (0-based) of the references `A1"...` (one a row, the bytes
    after `r="`); None when one is not 1-3 capital letters, 1-7 digits and a quote."""
    kind = _KIND[refs]  # 1 a letter, 2 a digit, 3 the quote, 0 anything else
    quote = np.argmax(kind == 3, axis=1)
    upto = np.where(np.arange(refs.shape[1]) <= quote[:, None], kind, 3)  # what follows: 3
    letters = (upto == 1).sum(axis=1)
    digits = quote - letters
    ordered = (np.diff(upto, axis=1) >= 0).all() and (upto != 0).all()
    if not (ordered and (kind[:, 0] == 1).all() and letters.max() <= 3):
        return None
    if not ((digits >= 1).all() and digits.max() <= 7):
        return None
    most = int(letters.max())
    top = refs[letters == most, :most].astype(np.int64) - ord("A") + 1
    col = np.zeros(len(top), dtype=np.int64)
    for k in range(most):
        col = col * 26 + top[:, k]
    longest = int(digits.max())
    rows = np.flatnonzero(digits == longest)
    start = letters[rows][:, None] + np.arange(longest)
    values = refs[rows[:, None], start].astype(np.int64) - ord("0")
    row = np.zeros(len(rows), dtype=np.int64)
    for k in range(longest):
        row = row * 10 + values[:, k]
    return int(row.max()) - 1, int(col.max()) - 1


def _one_r_each(b: np.ndarray, cells: np.ndarray, equals: np.ndarray) -> bool:
    """True when no cell's start tag has a second `r` (python-calamine takes the last), nor
    an attribute in single quotes or with white space around its `=` (`equals`: where the
    XML's `=` are)."""
    before, after = b[equals - 1], b[equals + 1]
    named_r = equals[(before == ord("r")) & _BEFORE_ATTRIBUTE[b[equals - 2]]]
    first = np.ones(len(named_r), dtype=bool)
    first[np.searchsorted(named_r, cells + 4)] = False  # each cell's own: `<c r=`
    odd = equals[_SPACE[before] | _SPACE[after] | (after == ord("'"))]
    suspects = np.concatenate([named_r[first], odd, np.flatnonzero(b == ord("'"))])
    owner = np.searchsorted(cells, suspects, side="right") - 1
    suspects, starts = suspects[owner >= 0], cells[owner[owner >= 0]]
    if not len(suspects):
        return True
    ahead = sliding_window_view(b, _TAIL)[starts] == ord(">")
    found = ahead.any(axis=1)
    if not found.all():
        return False  # a cell's start tag longer than _TAIL bytes: the exact replay reads it
    return not (suspects < starts + np.argmax(ahead, axis=1)).any()


def _marks(data: bytes, cells: np.ndarray, hits: np.ndarray, label: str) -> dict | None:
    """The formula and error cells (`hits`: where a `<f` or a `t="e"` is), read one by one by
    the exact replay; None when their XML does not stand alone (the whole sheet is then
    replayed)."""
    if not len(hits):
        return {}
    owners = np.unique(np.searchsorted(cells, hits, side="right") - 1)
    pieces = []
    for k in owners[owners >= 0].tolist():
        start = int(cells[k])
        stop = int(cells[k + 1]) if k + 1 < len(cells) else len(data)
        end = data.find(b">", start, stop)
        if end < 0:
            return None
        if data[end - 1 : end] != b"/":
            end = data.find(b"</c>", end, stop)
            if end < 0:
                return None
            end += 3
        pieces.append(data[start : end + 1])
    reader = CellReader(Budget(label), cells_only=True)
    try:
        reader.feed(b"<cells>" + b"".join(pieces) + b"</cells>")
    except expat.ExpatError:
        return None
    return reader.scan.marks


def _text_within(b, data: bytes, cells, shared, lengths: np.ndarray) -> bool:
    """True when the XML's bytes (a bound on its cells' own text) and the shared strings the
    cells use (`lengths`: a bound on each; `shared`: where a `t="s"` is) stay within MAX_TEXT:
    every cell counted at the longest first, then each `t="s"` cell at the string its `<v>`
    names."""
    longest = int(lengths.max(initial=0))
    if len(data) + len(cells) * longest <= MAX_TEXT:
        return True
    owner = np.searchsorted(cells, shared, side="right") - 1
    shared, starts = shared[owner >= 0], cells[owner[owner >= 0]]
    ahead = sliding_window_view(b, _TAIL)[starts] == ord(">")
    if not ahead.any(axis=1).all():
        return False
    ends = starts + np.argmax(ahead, axis=1)
    inside = shared < ends  # a `t="s"` of the cell's tag, not of its text
    value = sliding_window_view(b, 16)[ends[inside] + 1]
    plain = (value[:, :3] == np.frombuffer(b"<v>", dtype=np.uint8)).all(axis=1)
    digits = (value[:, 3:] >= ord("0")) & (value[:, 3:] <= ord("9"))
    count = np.argmin(digits, axis=1)  # digits before the first other byte
    plain &= (count >= 1) & (value[np.arange(len(value)), 3 + count] == ord("<"))
    index = np.zeros(len(value), dtype=np.int64)
    for k in range(digits.shape[1]):
        index = np.where(k < count, index * 10 + value[:, 3 + k] - ord("0"), index)
    known = plain & (index < len(lengths))
    text = int(lengths[index[known]].sum()) + int((~known).sum()) * longest
    return len(data) + text <= MAX_TEXT


def _string_bounds(package: Package, strings, label: str) -> np.ndarray:
    """A bound on each shared string's length: its bytes in plain XML (<si>...</si> as
    written, tags and entities counted), else its exact length."""
    if strings is None:
        return np.zeros(0, dtype=np.int64)
    data = package.read(strings)
    if b"<!" not in data and b":si" not in data and b":t" not in data:
        items = re.findall(rb"<si>(.*?)</si>|<si/>", data, re.S)
        if len(items) == data.count(b"<si"):
            return np.fromiter(map(len, items), dtype=np.int64, count=len(items))
    return np.asarray(string_lengths(io.BytesIO(data), label), dtype=np.int64)
