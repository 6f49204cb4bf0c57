"""Reading a scenario CSV: every cell as text, each row with the line an editor shows it on.

Fast path: pyarrow's C++ reader, when every record is one line. Otherwise the csv module,
counting lines through quoted values that hold line breaks (docs/input.md#the-file).
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from pipeline.errors import ScenarioFileError, printable, quoted
from pipeline.textfile import decode_utf8


def read_table(
    path: Path, data: bytes, warnings: list[str]
) -> tuple[pa.Table, np.ndarray, np.ndarray | None, int]:
    """All cells as strings, each row's line number as an editor counts it, field counts
    (None when every row had the header's width) and the header's line (after any comment
    or blank lines above it)."""
    text = _excel_hint(path, decode_utf8(path, data, ScenarioFileError), warnings)
    plain = _plain_body(text)
    if plain is not None:  # no comment or blank line: no per-line Python work
        header_line, raw, ends = plain
        count = len(ends) + (0 if raw.endswith(b"\n") else 1)
        table = None
        if not _may_span_lines(raw, ends):
            table = _read_fast(next(csv.reader([header_line])), raw)
        if table is not None and table.num_rows == count:
            return table, np.arange(2, count + 2, dtype=np.int64), None, 1
    lines = _LINE_BREAK.split(text)  # not str.splitlines: a form feed or U+2028 is text
    keep = [i for i, ln in enumerate(lines) if ln.strip() and not ln.lstrip().startswith("#")]
    if not keep:
        raise ScenarioFileError(
            f"{printable(path)}: no header and no scenario rows (the file is empty)"
        )
    if len(keep) == 1:
        raise ScenarioFileError(
            f"{printable(path)}: a header but no scenario rows: nothing to compute"
        )
    header = next(csv.reader([lines[keep[0]]]))
    body = "\n".join(lines[i] for i in keep[1:])
    line_numbers = np.asarray(keep[1:], dtype=np.int64) + 1
    raw = body.encode("utf-8")
    if not _may_span_lines(raw, _line_ends(raw)):  # fast path: one record per line
        table = _read_fast(header, raw)
        if table is not None and table.num_rows == len(line_numbers):
            return table, line_numbers, None, keep[0] + 1
    return (*_read_slow(path, header, lines, keep), keep[0] + 1)


_SEP_HINT = re.compile(r"^\ufeff?sep=(.?)\s*$", re.IGNORECASE)


def _excel_hint(path: Path, text: str, warnings: list[str]) -> str:
    """Excel's `sep=X` first line: skipped when X is a comma (kept as a comment, so line
    numbers stay right), an error naming the delimiter otherwise."""
    end = text.find("\n")
    first = text if end < 0 else text[:end]
    m = _SEP_HINT.match(first.rstrip("\r"))
    if m is None:
        return text
    sep = m.group(1)
    if sep != ",":
        raise ScenarioFileError(
            f"{printable(path)}:1: the file declares {quoted(sep)} as its delimiter "
            f"({quoted(first.strip())}); scenario files are comma-separated: save it as "
            "CSV (comma delimited)"
        )
    warnings.append(
        f"{printable(path)}:1: skipped Excel's delimiter hint 'sep=,' (the file is comma-separated)"
    )
    return "#" + text


_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # what a text editor counts as the end of a line

# what may start a line the general path treats apart: a comment, or white space (a blank
# line, an indented comment); str.isspace's characters, UTF-8 encoded
_SPACES = [chr(c) for c in range(0x3001) if chr(c).isspace()]  # none above U+3000
_LEADING = np.zeros(256, dtype=bool)  # a one-byte start that sends the text to the general path
_LEADING[[ord("#"), *(ord(c) for c in _SPACES if c < "\x80")]] = True
_WIDE = [c.encode("utf-8") for c in _SPACES if c >= "\x80"]
_WIDE_LEAD = np.zeros(256, dtype=bool)  # first bytes of the wider white-space characters
_WIDE_LEAD[[w[0] for w in _WIDE]] = True
_WIDE_SPACES = np.array([int.from_bytes(w.ljust(3, b"\0"), "big") for w in _WIDE])


def _line_ends(raw: bytes) -> np.ndarray:
    return np.flatnonzero(np.frombuffer(raw, dtype=np.uint8) == 10)


def _plain_body(text: str) -> tuple[str, bytes, np.ndarray] | None:
    """(header, body as UTF-8, positions of its line feeds) when the text starts with its
    header, has data rows, "\n" or "\r\n" line ends and no comment or blank line, else None
    (the general path then counts lines one by one)."""
    end = text.find("\n")
    if end < 0 or end == len(text) - 1:
        return None
    header = text[:end].rstrip("\r")
    # a blank or comment first line, or a lone CR ending one: the header is further down
    if not header.strip() or header.lstrip().startswith("#") or "\r" in header:
        return None
    first = text[end + 1 : end + 2]
    if first == "#" or first.isspace():
        return None
    raw = text[end + 1 :].rstrip("\r\n").encode("utf-8")
    if b"\r" in raw and raw.count(b"\r") != raw.count(b"\r\n"):  # a lone CR ends a line
        return None
    ends = _line_ends(raw)
    if _irregular_starts(np.frombuffer(raw, dtype=np.uint8), ends):
        return None
    return header, raw, ends


def _irregular_starts(b: np.ndarray, ends: np.ndarray) -> bool:
    """True when a line after the first starts with "#" or white space (Unicode's, as
    str.isspace counts it)."""
    starts = ends + 1
    starts = starts[starts < len(b)]
    lead = b[starts]
    if _LEADING[lead].any():
        return True
    wide = starts[_WIDE_LEAD[lead]]
    if not len(wide):
        return False
    padded = np.concatenate([b, np.zeros(2, dtype=np.uint8)])
    c0, c1, c2 = (padded[wide + k].astype(np.int64) for k in range(3))
    two = (c0 << 16) | (c1 << 8)  # a two-byte character, padded as in _WIDE_SPACES
    three = two | c2
    return bool(np.isin(np.where(c0 < 0xE0, two, three), _WIDE_SPACES).any())


def _may_span_lines(raw: bytes, ends: np.ndarray) -> bool:
    """True when some line has an odd number of quotes, i.e. a quoted value may hold a newline."""
    if b'"' not in raw:
        return False
    quotes = np.flatnonzero(np.frombuffer(raw, dtype=np.uint8) == ord('"'))
    per_line = np.bincount(np.searchsorted(ends, quotes), minlength=len(ends) + 1)
    return bool((per_line % 2).any())


def _read_fast(header: list[str], raw: bytes) -> pa.Table | None:
    names = [f"c{i}" for i in range(len(header))]
    try:
        table = pacsv.read_csv(
            io.BytesIO(raw),
            read_options=pacsv.ReadOptions(column_names=names, block_size=1 << 24),
            parse_options=pacsv.ParseOptions(newlines_in_values=False),
            convert_options=pacsv.ConvertOptions(
                column_types={n: pa.string() for n in names},
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except pa.ArrowInvalid:  # ragged rows: the slow path reports them one by one
        return None
    return table.rename_columns(header)


MAX_VALUE_LINES = 100  # a quoted value spanning more lines than this is a stray quote


def _read_slow(
    path: Path, header: list[str], lines: list[str], keep: list[int]
) -> tuple[pa.Table, np.ndarray, np.ndarray]:
    """csv-module reader that tracks line numbers through quoted line breaks; ragged rows
    padded. Comment and blank lines are dropped first (`keep` holds the others), so a quote in
    a comment opens nothing.

    A quoted value may hold line breaks, but one still open at the end of the file, one
    running over MAX_VALUE_LINES lines, or one running over a line that looks like a row of
    its own (as many commas as the header), is a stray quote that would swallow the rows after
    it: an error at the line where it opened."""
    kept = [lines[i] for i in keep]
    reader = csv.reader(io.StringIO("\n".join(kept)))
    width = len(header)
    rows, numbers = [], []
    start = 0  # index into kept of the next record's first line
    for record in reader:
        first, last = start, reader.line_num - 1
        start = reader.line_num
        line = keep[first] + 1
        if last > first:
            _check_span(path, kept, keep, first, last, width)
        if not record or not "".join(record).strip():
            continue
        rows.append(record)
        numbers.append(line)
    if len(rows) > 1 and _open_at_end(kept[keep.index(numbers[-1] - 1) :]):
        raise ScenarioFileError(
            f"{printable(path)}:{numbers[-1]}: a quoted value opens on this line and is still "
            "open at the end of the file: is a closing '\"' missing? Close the value where "
            "it ends"
        )
    rows, numbers = rows[1:], numbers[1:]  # the header
    fields = np.array([len(r) for r in rows], dtype=np.int64)
    fixed = [r + [""] * (width - len(r)) if len(r) < width else r[:width] for r in rows]
    columns = list(zip(*fixed, strict=True)) if fixed else [()] * width
    table = pa.table({f"c{i}": pa.array(col, pa.string()) for i, col in enumerate(columns)})
    return table.rename_columns(header), np.asarray(numbers, dtype=np.int64), fields


def _check_span(path: Path, kept: list[str], keep: list[int], first: int, last: int, width: int):
    """A record over lines kept[first..last]: refused when it runs too long or over a row."""
    opened = keep[first] + 1
    if last - first >= MAX_VALUE_LINES:
        raise ScenarioFileError(
            f"{printable(path)}:{opened}: a quoted value opens on this line and runs over "
            f"{MAX_VALUE_LINES} lines (to line {keep[last] + 1}): is a closing '\"' missing? "
            "Close the value where it ends"
        )
    for k in range(first + 1, last + 1):
        if width > 2 and kept[k].count(",") >= width - 1:
            raise ScenarioFileError(
                f"{printable(path)}:{opened}: a quoted value opens on this line and runs on "
                f"over line {keep[k] + 1}, which looks like a row of its own: is a closing "
                "'\"' missing? Close the value where it ends"
            )


def _open_at_end(lines: list[str]) -> bool:
    """True when the last record (these lines) ends inside a quoted value."""
    try:
        for _ in csv.reader(io.StringIO("\n".join(lines)), strict=True):
            pass
    except csv.Error as exc:
        return "end of data" in str(exc)
    return False
