"""One reader for a user's catalog table, the hardware catalog's (`--hardware`) and the LLM
catalog's (`--models`) alike: a CSV or TOML file, or a DataFrame, as text cells with each
row's line. What differs, the column names a header may use, the TOML reader and the error,
is the catalog's `TableKind`."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from os import PathLike
from pathlib import Path

import pandas as pd

from pipeline.errors import PipelineError, described, printable, quoted
from pipeline.textfile import csv_rows, decode_utf8, read_bytes

SURROGATE = re.compile("[\ud800-\udfff]")  # no text at all: possible in a DataFrame only
Table = tuple[pd.DataFrame, list[int | None]]  # text cells, and each row's line (None: unknown)


@dataclass(frozen=True)
class TableKind:
    """A catalog's user tables: their error, what a file is called and needs, the header's
    columns (`columns(header, where)`, raising on two names for one column), the TOML and
    DataFrame readers, whether CSV cells are stripped, and what may be given."""

    error: type[PipelineError]
    noun: str  # "hardware file"
    needs: str  # what an empty file lacks
    columns: Callable[[list[str], str], list[str]]
    toml: Callable[[Path, str], Table]  # the file's text checked (file_text)
    frame: Callable[[pd.DataFrame, str], Table]
    rows: str  # a DataFrame's label: "<{rows} N>"
    accepted: str  # the TypeError's text for anything else
    strip: bool = False


def one_name_each(header: list[str], columns: list[str], where: str, error) -> list[str]:
    """`columns` (the header's names as the columns they name), refusing two names of one
    column (`d` and `D` where names are case-insensitive) with `error`."""
    seen: dict[str, int] = {}
    problems = []
    for i, col in enumerate(columns):
        if col in seen:
            j = seen[col]
            problems.append(
                f"{where}: columns {shown(header[j])} (column {j + 1}) and {shown(header[i])} "
                f"(column {i + 1}) are both column {col}; keep one"
            )
        seen.setdefault(col, i)
    if problems:
        raise error("\n  ".join(problems))
    return columns


def shown(value: object) -> str:
    """quoted(), with a lone surrogate (possible in a DataFrame only) escaped too."""
    return quoted(SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", str(value)))


def file_text(path: Path, data: bytes, kind: TableKind) -> str:
    """A table file's text: UTF-8, not empty, no NUL byte."""
    text = decode_utf8(path, data, kind.error)
    if not text.strip():
        raise kind.error(f"{printable(path)}: the {kind.noun} is empty; it needs {kind.needs}")
    if "\x00" in text:
        at = text.index("\x00")
        line = text.count("\n", 0, at) + 1
        column = at - (text.rfind("\n", 0, at) + 1) + 1
        raise kind.error(
            f"{printable(path)}:{line}: NUL byte at character {column}; remove it "
            f"(a {kind.noun} is text)"
        )
    return text


def read_csv(path: Path, text: str, kind: TableKind) -> Table:
    """A CSV's cells under its header (`kind.columns`), short rows filled with blanks, and
    each row's line; a row longer than the header is an error."""
    header, rows, lines = csv_rows(path, text, kind.error)
    first = next(
        (
            n
            for n, line in enumerate(re.split(r"\r\n|\r|\n", text), start=1)
            if line.strip() and not line.lstrip().startswith("#")
        ),
        1,
    )  # the header's
    columns = kind.columns(header, f"{printable(path)}:{first}")
    width = len(header)
    for row, line in zip(rows, lines, strict=True):
        if len(row) > width:
            raise kind.error(
                f"{printable(path)}:{line}: {len(row)} fields but the header has {width}; "
                "quote values that hold commas"
            )
    cells = [[c.strip() if kind.strip else c for c in r] + [""] * (width - len(r)) for r in rows]
    return pd.DataFrame(cells, columns=columns, dtype=object), list(lines)


def read_file(path: Path, data: bytes, kind: TableKind) -> Table:
    """A table file by its suffix, .csv or .toml."""
    suffix = path.suffix.lower()
    if suffix == ".toml":
        return kind.toml(path, file_text(path, data, kind))
    if suffix == ".csv":
        return read_csv(path, file_text(path, data, kind), kind)
    raise kind.error(f"{kind.noun} {printable(path)} must end in .csv or .toml")


def read_given(given, number: int, kind: TableKind) -> tuple[Path, Table, bytes, Path | None]:
    """The `number`th table a catalog loader is given, a DataFrame or a file's path: its
    path (a DataFrame's label), its cells and lines, the bytes its version hashes, and the
    file read, resolved (None for a DataFrame)."""
    if isinstance(given, pd.DataFrame):
        path = Path(f"<{kind.rows} {number}>")
        table = kind.frame(given, str(path))
        return path, table, table[0].to_csv(index=False).encode(), None
    if isinstance(given, str | PathLike):
        path = Path(given)
        data = read_bytes(path, kind.error, kind.noun)
        return path, read_file(path, data, kind), data, path.resolve()
    raise TypeError(f"{kind.accepted}; got {described(given)}")
