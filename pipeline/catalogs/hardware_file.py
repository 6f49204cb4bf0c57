"""A user's hardware file (CSV or TOML) or DataFrame read into a table of text cells, one row
per chip with the line it is on, and the checks that need those lines: duplicate columns and
keys, chips given twice, control characters (docs/model.md#the-hardware-catalog)."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.catalogs.spellings import spelling
from pipeline.catalogs.table_file import SURROGATE, Table, TableKind, one_name_each, shown
from pipeline.errors import InvalidHardwareFile, printable, quoted

# what printable() escapes (C0, DEL, C1, U+2028/9, the bidirectional controls): refused in
# every value, so no output can carry one (a terminal escape in report.html); a lone surrogate
# (possible in a DataFrame only) is no text at all
_CONTROL = re.compile(
    "[\x00-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)


def read_frame_table(frame: pd.DataFrame, label: str) -> Table:
    """A DataFrame's cells as text (blank for NaN, aliases from a list): its header is line 1
    and its rows lines 2, 3, ... A catalog frame (index `name`, as pipeline.catalog() gives)
    has its index as the name column."""
    if str(frame.index.name).strip().lower() == "name" and not any(
        str(c).strip().lower() == "name" for c in frame.columns
    ):
        frame = frame.reset_index()
    header = [str(c) for c in frame.columns]
    columns = unique_columns(header, f"{label}:1")
    values = frame.astype(object).where(frame.notna(), "").to_numpy(dtype=object)
    cells = pd.DataFrame(
        np.frompyfunc(_cell_text, 1, 1)(values).reshape(values.shape),  # a chip per row: few
        columns=columns,
        dtype=object,  # not pandas' str (Arrow) dtype: it cannot even hold a lone surrogate
    )
    problems = [
        f"{label}:1: column {j + 1}: the header {shown(c)} holds a lone surrogate, not text"
        for j, c in enumerate(header)
        if SURROGATE.search(c)
    ]
    for j, col in enumerate(columns):
        for i in cells.iloc[:, j].str.contains(SURROGATE).to_numpy().nonzero()[0]:
            problems.append(
                f"{label}:{i + 2}: column {col}: {shown(cells.iat[i, j])} holds a lone "
                "surrogate, not text: remove it"
            )
    if problems:
        raise InvalidHardwareFile("\n  ".join(problems))
    return cells, list(range(2, len(frame) + 2))


def _cell_text(value: object) -> str:
    if isinstance(value, list | tuple):
        return ";".join(str(v) for v in value)
    return str(value)


def read_toml_table(path: Path, text: str) -> Table:
    """A hardware TOML's tables as rows (the table's key is the chip's name), each on the line
    of its [header]; keys differing only in case are an error naming both lines."""
    try:
        # floats kept as written, so 1e400 can be told apart from inf
        parsed = tomllib.loads(text, parse_float=lambda s: s.replace("_", ""))
    except tomllib.TOMLDecodeError as exc:
        raise InvalidHardwareFile(
            f"{printable(path)}: not valid TOML: {toml_problem(text, exc)}"
        ) from exc
    except ValueError as exc:  # Python refuses to read an integer of over 4,300 digits
        long = re.search(r"\d{4000,}", text)
        line = f":{text.count(chr(10), 0, long.start()) + 1}" if long else ""
        raise InvalidHardwareFile(
            f"{printable(path)}{line}: a number with thousands of digits is too large: past "
            "float64's range (about 1.8e308)"
        ) from exc
    lines = toml_lines(text)
    name = printable(path)
    rows, problems = [], []
    for table, fields in parsed.items():
        if not isinstance(fields, dict):
            raise InvalidHardwareFile(
                f"{name}: top-level key {quoted(table)} must be a table like "
                f"[{printable(table)}] naming a chip"
            )
        row: dict[str, object] = {}
        first: dict[str, str] = {}
        for key, value in fields.items():
            low = key.lower()
            if low in first:
                a, b = (
                    f"{name}:{lines.get((table, k), '?')} [{printable(table)}]"
                    for k in (first[low], key)
                )
                problems.append(
                    f"{b}: key {quoted(key)} repeats key {quoted(first[low])} of {a} (keys are "
                    "case-insensitive); keep one"
                )
            first.setdefault(low, key)
            row[low] = value
        given = row.pop("name", table)
        if spelling(given) != spelling(table):
            problems.append(
                f"{name} [{printable(table)}]: key name: {quoted(given)} differs from the "
                "table's name; a TOML chip is named by its [header]: remove the name key"
            )
        if isinstance(row.get("aliases"), list):
            row["aliases"] = ";".join(str(a) for a in row["aliases"])
        row["name"] = table
        rows.append({k: "" if v is None else str(v) for k, v in row.items()})
    if problems:
        raise InvalidHardwareFile("invalid hardware file:\n  " + "\n  ".join(problems))
    return pd.DataFrame(rows, dtype=object), [lines.get((t,)) for t in parsed]


_KEY = r"""(?:[A-Za-z0-9_-]+|"(?:[^"\\\n]|\\.)*"|'[^'\n]*')"""
_DOTTED = rf"{_KEY}(?:\s*\.\s*{_KEY})*"
_HEADER = re.compile(rf"\s*\[\s*({_DOTTED})\s*\]")
_ASSIGN = re.compile(rf"\s*({_DOTTED})\s*=")


def toml_lines(text: str) -> dict[tuple[str, ...], int]:
    """Where each table, (name,), and each table's key, (name, key), first appears (a
    longer dotted name's too), for messages. tomllib keeps no positions, so this scans the
    lines: a line inside a multi-line string that looks like a header could mislead it,
    costing only a line number."""
    found: dict[tuple[str, ...], int] = {}
    table: list[str] = []
    closing = None  # the delimiter of the multi-line string a line is inside
    for number, line in enumerate(text.splitlines(), start=1):
        if closing is not None:
            if closing in line:
                closing = None
            continue
        header, assign = _HEADER.match(line), _ASSIGN.match(line)
        if header:
            table = _key_parts(header.group(1))
            keys = table
        elif assign:
            keys = table + _key_parts(assign.group(1))
        else:
            keys = []
        for size in range(1, len(keys) + 1):
            if len(keys) >= size:
                found.setdefault(tuple(keys[:size]), number)
        for delimiter in ('"""', "'''"):
            if line.count(delimiter) % 2:
                closing = delimiter
                break
    return found


def _key_parts(dotted: str) -> list[str]:
    parts = []
    for raw in re.findall(_KEY, dotted):
        if raw[0] in "\"'":
            try:
                raw = tomllib.loads(f"k = {raw}")["k"]
            except tomllib.TOMLDecodeError:
                return []
        parts.append(raw)
    return parts


_AT_LINE = re.compile(r"at line (\d+)")
_BARE = re.compile(r"[A-Za-z0-9_-]+")
_NAMED = re.compile(r"^(\s*\[\[?\s*)([^\]]*?)(\s*\]\]?.*)$|^(\s*)([^=\[#]+?)(\s*=.*)$")


def toml_problem(text: str, exc: Exception) -> str:
    """tomllib's error, and where a table name or key of the line it names holds a letter a
    bare TOML key cannot (`[라마]`, `층 = 32`), the same line with it quoted (`["라마"]`)."""
    said = str(exc)
    at = _AT_LINE.search(said)
    lines = text.splitlines()
    if at is None or not 0 < int(at.group(1)) <= len(lines):
        return said
    line = lines[int(at.group(1)) - 1]
    named = _NAMED.match(line)
    if named is None:
        return said
    head, key, tail = (named.group(1), named.group(2), named.group(3)) if named.group(2) \
        is not None else (named.group(4), named.group(5), named.group(6))  # fmt: skip
    parts = [p.strip() for p in key.split(".")] if '"' not in key and "'" not in key else []
    if not parts or all(_BARE.fullmatch(p) for p in parts):
        return said
    fixed = ".".join(p if _BARE.fullmatch(p) else f'"{p}"' for p in parts)
    written = (head + fixed + tail).strip()
    return (
        f"{said}; a name with letters other than A-Z, a-z, 0-9, _ and - is quoted in TOML: "
        f"write {printable(written)}"
    )


def unique_columns(header: list[str], where: str) -> list[str]:
    """The header's names in lower case; two that are the same name are an error."""
    columns = [c.strip().lower() for c in header]
    return one_name_each(header, columns, where, InvalidHardwareFile)


def control_problems(cells: pd.DataFrame, where: Callable[[int], str]) -> list[str]:
    """A problem per text cell holding a control character."""
    problems = []
    for col in cells.columns:
        bad = cells[col].str.contains(_CONTROL)
        for i in bad.to_numpy().nonzero()[0]:
            value = cells[col].iat[i]
            at = _CONTROL.search(value)
            problems.append(
                f"{where(i)}: column {col}: control character {shown(at.group())} at "
                f"character {at.start() + 1} of {shown(value)}; a hardware value is plain text: "
                "remove it"
            )
    return problems


def clash_problems(
    names: list[str], aliases: list[list[str]], known: dict[str, str], at: Callable[[int], str]
) -> list[str]:
    """A problem per row that names a chip an earlier row of the same file names: the same
    name (in any case), a name and its catalog alias (`v5e` and `tpu-v5e`), a name and another
    row's alias, or one alias given to two chips. Each message names both lines. `names` as
    written, `aliases` in lower case, `known`: the catalog's spellings so far."""
    owner: dict[str, tuple[int, str]] = {}
    problems = []
    for j, name in enumerate(names):
        low = spelling(name)
        chip = known.get(low, low)
        forms = [(chip, "name"), (low, "name"), *((a, "aliases") for a in aliases[j])]
        for form, col in forms:
            if not form:
                continue
            i, first = owner.setdefault(form, (j, col))
            if i == j:
                continue
            if col == first == "name":
                problems.append(
                    f"{at(j)}: column name: {quoted(name)} is chip {quoted(chip)} again, first "
                    f"given as {quoted(names[i])} at {at(i)}; give each chip once per file "
                    "(names and aliases are case-insensitive)"
                )
            else:
                what = "the name" if first == "name" else "an alias"
                problems.append(
                    f"{at(j)}: column {col}: {quoted(form)} is already {what} of chip "
                    f"{quoted(names[i])} at {at(i)}; a chip is given once per file, an alias "
                    "to one chip"
                )
            break
    return problems


HARDWARE = TableKind(
    error=InvalidHardwareFile,
    noun="hardware file",
    needs="a chip: a CSV header row with name and the fields to set, or a TOML table [name] "
    "(see the README)",
    columns=unique_columns,
    toml=read_toml_table,
    frame=read_frame_table,
    rows="hardware rows",
    accepted="hardware= takes a CSV or TOML path, a DataFrame with the catalog's columns (as "
    "pipeline.catalog() returns), a Catalog (pipeline.load_hardware()) or a list of them",
)
