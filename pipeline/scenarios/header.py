"""The header of a scenario file: known columns, names normalized, problems found early.

Column names are case-insensitive and trimmed; a single letter is a dimension (upper case).
What each column means is in docs/input.md.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.errors import ScenarioFileError, printable, quoted
from pipeline.model.catalog import EFFICIENCY_COLUMNS, did_you_mean
from pipeline.model.dtypes import DTYPE_COLUMNS
from pipeline.model.roofline import RESULT_COLUMNS

REQUIRED = ("name", "op", "hardware")

DTYPE_INPUTS = ("dtype", *DTYPE_COLUMNS)  # dtype: the others' default

OVERRIDES = ("peak_flops", "hbm_bandwidth", "hbm_capacity", "link_bandwidth")

KNOWN = (
    *REQUIRED,
    *DTYPE_INPUTS,
    "chips",
    "shard",
    "link",
    *OVERRIDES,
    *EFFICIENCY_COLUMNS,
    "flops",
    "bytes",
    "measured_seconds",
    "notes",
    "count",
    "model",
    "kv_dtype",
    "group",
)


def normal_name(name: str) -> str:
    """A column's name as the checks know it: trimmed, a single letter in upper case (a dim),
    any other name in lower case."""
    name = str(name).strip()
    return name.upper() if len(name) == 1 and name.isalpha() else name.lower()


def nul_message(header: str) -> str:
    """What is wrong with a header holding a NUL byte, and where in it."""
    return (
        f"the header {quoted(header)} holds a NUL byte at character "
        f"{header.index(chr(0)) + 1}; remove it (a scenario file is text)"
    )


USER_PREFIX = "user_"  # a column of the user's own, never taken for a misspelt known one


def normalize_headers(columns: list[str], path: Path, line: int = 1) -> list[str]:
    """The header's names as the checks know them (normal_name); ScenarioFileError for a NUL
    byte, an empty name or a name twice. `line`: the header's line, for the message."""
    out = []
    for i, c in enumerate(columns):
        c = str(c).strip()
        if "\x00" in c:
            raise ScenarioFileError(f"{printable(path)}:{line}: column {i + 1}: {nul_message(c)}")
        out.append(normal_name(c))
    seen: dict[str, int] = {}
    dups = []
    for i, c in enumerate(out):
        if c in seen:
            dups.append(f"{quoted(c)} (columns {seen[c] + 1} and {i + 1})")
        seen.setdefault(c, i)
    if "" in seen:
        raise ScenarioFileError(
            f"{printable(path)}:{line}: column {seen[''] + 1} has an empty header"
        )
    if dups:
        raise ScenarioFileError(
            f"{printable(path)}:{line}: column names appear twice: {', '.join(dups)}"
        )
    return out


def nul_cells(table: pa.Table) -> tuple[pa.Table, list[tuple[int, str, str]]]:
    """Cells holding a NUL byte reject their row (the position said); the NUL is kept as the
    visible text \\x00, so no output ever holds the raw byte."""
    problems: list[tuple[int, str, str]] = []
    columns = table.columns
    for i, name in enumerate(table.column_names):
        hit = pc.match_substring(columns[i], "\x00")
        if not pc.any(hit).as_py():
            continue
        for pos in np.flatnonzero(hit.to_numpy(zero_copy_only=False)):
            cell = columns[i][int(pos)].as_py()
            problems.append(
                (
                    int(pos),
                    name,
                    f"NUL byte at character {cell.index(chr(0)) + 1} of "
                    f"{quoted(cell)}; remove it (a scenario file is text)",
                )
            )
        columns[i] = pc.replace_substring(columns[i], "\x00", "\\x00")
    if problems:
        table = pa.table(dict(zip(table.column_names, columns, strict=True)))
    return table, problems


def rename_reserved(columns: list[str], path: Path, line: int = 1) -> tuple[list[str], list[str]]:
    """Extra columns named like an output column are kept as input_<name>, with a warning."""
    reserved = set(RESULT_COLUMNS) | {
        "line",
        "link_topology",
        "link_latency",
        "measured_over_predicted",
        "swept",  # the model's own: the dims a sweep row's series sweeps
        "marks",  # the model's own: which points of its sweep a row is
    }
    out, warnings = [], []
    for c in columns:
        if c in reserved and c not in KNOWN:
            new = f"input_{c}"
            while new in columns or new in out:
                new = f"input_{new}"
            warnings.append(
                f"{printable(path)}:{line}: column {quoted(c)} is also an output column; it is "
                f"carried through as {quoted(new)}"
            )
            c = new
        out.append(c)
    return out, warnings


def check_columns(
    columns, extras: list[str], path: Path, line: int = 1, keep: Iterable[str] = ()
) -> None:
    """The header's required columns, and its extra ones: a name close to a known column
    (`dtpye`) is refused, one ScenarioFileError naming each such column at the header's
    `line`, unless it is the user's own: named in `keep` (--keep-column) or starting with
    USER_PREFIX. A missing required column is refused first."""
    missing = [c for c in REQUIRED if c not in columns]
    if missing:
        parts = []
        for col in missing:
            hint = did_you_mean(col, extras)
            parts.append(f"'{col}'" + (f" (did you mean {quoted(hint)}?)" if hint else ""))
        raise ScenarioFileError(
            f"{printable(path)}:{line}: missing required column(s) {', '.join(parts)}; "
            f"the header needs {', '.join(REQUIRED)}{_delimiter_hint(columns)}"
        )
    kept = {normal_name(k) for k in keep}
    refused = []
    for col in extras:
        if col in kept or col.startswith(USER_PREFIX):
            continue
        hint = did_you_mean(col, list(KNOWN))
        if hint:
            name = printable(col)
            refused.append(
                f"{printable(path)}:{line}: column {name}: unknown column; did you mean "
                f"{hint}? Rename it, or, if the column is yours, give --keep-column {name} "
                f"(keep_columns= in Python) or name it {USER_PREFIX}{name}; nothing computed "
                "for this file"
            )
    if refused:
        raise ScenarioFileError("\n".join(refused))


def _delimiter_hint(columns) -> str:
    """When the header is one cell holding the names split by another delimiter, say so."""
    if len(columns) != 1:
        return ""
    for sep, label in ((";", "semicolons"), ("\t", "tabs"), ("|", "'|'")):
        if sep in columns[0] and sum(c in columns[0].split(sep) for c in REQUIRED) >= 2:
            return (
                f"; the header is separated by {label}, not commas: save the file as CSV "
                "(comma delimited)"
            )
    return ""
