"""The header of a scenario file: known columns, names normalized, problems found early.

Column names are case-insensitive and trimmed; a single letter is a dimension (upper case).
What each column means is in docs/input.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.catalogs.hardware import EFFICIENCY_COLUMNS, did_you_mean
from pipeline.errors import ScenarioFileError, printable, quoted
from pipeline.i18n import _
from pipeline.model.cost import PRICE_COLUMNS, TOKEN_COLUMNS
from pipeline.model.dtypes import DTYPE_COLUMNS
from pipeline.model.roofline import RESULT_COLUMNS
from pipeline.model.serve_totals import SERVE_COLUMNS
from pipeline.model.step_totals import STEP_COLUMNS

REQUIRED = ("name", "op", "hardware")

DTYPE_INPUTS = ("dtype", *DTYPE_COLUMNS)  # dtype: the others' default

OVERRIDES = ("peak_flops", "hbm_bandwidth", "hbm_capacity", "link_bandwidth")

# a measured time's column, its unit in its name: at most one per file, read in seconds
MEASURED_UNITS = {"measured_seconds": 1.0, "measured_ms": 1e-3, "measured_us": 1e-6}

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
    # a serve row's (scenarios.serve_rows)
    "isl",
    "osl",
    "ttft_target",
    "tpot_target",
    "draft_tokens",
    "acceptance",
    "draft_model",
    # a train row's (scenarios.train_rows)
    "tokens",
    "train_tokens",
    "parallel",
    "mesh_axes",
    "remat",
    "optimizer",
    "microbatches",
)
INPUTS = (*KNOWN, *(c for c in MEASURED_UNITS if c not in KNOWN))  # a time's unit named


def measured_column(columns: Iterable[str]) -> tuple[str, float]:
    """The file's measured time column (measured_seconds when it has none) and its unit in
    seconds (check_columns refuses a file with two)."""
    given = [c for c in columns if c in MEASURED_UNITS] or ["measured_seconds"]
    return given[0], MEASURED_UNITS[given[0]]


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
            raise ScenarioFileError(
                _("{file}:{line}: column {column}: {reason}", file=printable(path), line=line,
                  column=i + 1, reason=nul_message(c))
            )  # fmt: skip
        out.append(normal_name(c))
    seen: dict[str, int] = {}
    dups = []
    for i, c in enumerate(out):
        if c in seen:
            dups.append(_("{name} (columns {first} and {second})", name=quoted(c),
                          first=seen[c] + 1, second=i + 1))  # fmt: skip
        seen.setdefault(c, i)
    if "" in seen:
        raise ScenarioFileError(
            _("{file}:{line}: column {column} has an empty header", file=printable(path),
              line=line, column=seen[""] + 1)
        )  # fmt: skip
    if dups:
        raise ScenarioFileError(
            _("{file}:{line}: column names appear twice: {names}", file=printable(path),
              line=line, names=", ".join(dups))
        )  # fmt: skip
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
    reserved = {
        *RESULT_COLUMNS,
        *PRICE_COLUMNS,
        *TOKEN_COLUMNS,
        *STEP_COLUMNS,  # a step's total row's own columns
        *SERVE_COLUMNS,  # a serve row's
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
                _("{file}:{line}: column {column} is also an output column; it is carried "
                  "through as {new}", file=printable(path), line=line, column=quoted(c),
                  new=quoted(new))
            )  # fmt: skip
            c = new
        out.append(c)
    return out, warnings


def check_columns(
    columns,
    extras: list[str],
    path: Path,
    line: int = 1,
    keep: Iterable[str] = (),
    given: Sequence[str] = (),
) -> None:
    """The header's required columns, and its extra ones: a typo of a known column (typo_of:
    `dtpye`, `x dtype`) is refused, one ScenarioFileError naming each such column at the
    header's `line`, unless it is the user's own: named in `keep` (--keep-column) or starting
    with USER_PREFIX. Any other extra column is kept (DESIGN.md §2). `given`: the header as
    written, position for position with `columns` (its case changes split words). A missing
    required column is refused first."""
    missing = [c for c in REQUIRED if c not in columns]
    if missing:
        parts = []
        for col in missing:
            hint = did_you_mean(col, extras)
            named = f"'{col}'"
            parts.append(_("{name} (did you mean {hint}?)", name=named, hint=quoted(hint))
                         if hint else named)  # fmt: skip
        raise ScenarioFileError(
            _("{file}:{line}: missing required column(s) {names}; the header needs "
              "{required}{hint}", file=printable(path), line=line, names=", ".join(parts),
              required=", ".join(REQUIRED), hint=_delimiter_hint(columns))
        )  # fmt: skip
    times = [c for c in columns if c in MEASURED_UNITS]
    if len(times) > 1:
        raise ScenarioFileError(
            _("{file}:{line}: columns {names} both give the measured time; keep one (its "
              "unit in its name: measured_seconds, measured_ms or measured_us)",
              file=printable(path), line=line, names=" and ".join(map(quoted, times)))
        )  # fmt: skip
    kept = {normal_name(k) for k in keep}
    written = dict(zip(columns, given, strict=False))
    refused = []
    for col in extras:
        if col in kept or col.startswith(USER_PREFIX):
            continue
        as_written = str(written.get(col, col)).strip()
        hint = typo_of(col, as_written)
        if hint:
            refused.append(
                _("{file}:{line}: column {column}: unknown column; did you mean {hint}? Rename "
                  "it, or, if the column is yours, give --keep-column {keep} (keep_columns= "
                  "in Python) or name it {own}; nothing computed for this file",
                  file=printable(path), line=line, column=printable(col), hint=hint,
                  keep=shell_word(printable(as_written)), own=own_name(as_written))
            )  # fmt: skip
    if refused:
        raise ScenarioFileError("\n".join(refused))


_UNSAFE = re.compile(r"[^\w@%+=:,./-]")  # a character a shell takes as is: \w any script's


def shell_word(text: str) -> str:
    """`text` as one word for a shell: as is when every character is safe, else in single
    quotes (`'byte s'`; a quote inside written '\\'')."""
    if text and not _UNSAFE.search(text):
        return text
    return "'" + text.replace("'", "'\\''") + "'"


def own_name(name: str) -> str:
    """The USER_PREFIX name offered for a column of the user's own: every run of characters
    other than letters, digits and underscores (spaces, hyphens, quotes) written `_`, so it
    is typed without quoting (`byte s`: `user_byte_s`)."""
    return USER_PREFIX + (re.sub(r"\W+", "_", name).strip("_") or "column")


_SEPARATORS = re.compile(r"[\s_\-]+")
_CASE_CHANGE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def typo_of(name: str, written: str | None = None) -> str | None:
    """The known column `name` (normal_name's) is a typo of, None when it is a name of its
    own. A typo: the same name but for case, spaces, hyphens or underscores (`x dtype`,
    `xdtype`), else a name within a small edit distance of a known one (letters added, left
    out, changed or swapped, at most one in four of the known name's: `dtpye`, `chisp`,
    `measured_secnds`). Never a typo: a name holding a known column as one of its words, split
    at spaces, hyphens, underscores and case changes of the name as `written` (`peer_bytes`,
    `bytes_ref`, `myFlops`, `q_dtype`), or one far from every known name (`team`, `top`)."""
    squashed = _SEPARATORS.sub("", name)
    for known in KNOWN:
        if known.replace("_", "") == squashed:
            return known
    words = [w.lower() for w in _SEPARATORS.split(_CASE_CHANGE.sub(" ", written or name)) if w]
    spans = ("_".join(words[i:j]) for i in range(len(words)) for j in range(i + 1, len(words) + 1))
    if any(span in KNOWN for span in spans):
        return None
    near = [
        (distance, k)
        for k in KNOWN
        if abs(len(name) - len(k)) <= len(k) // 4  # else more edits than allowed: not measured
        and (distance := edit_distance(name, k)) <= len(k) // 4
    ]
    return min(near)[1] if near else None


def edit_distance(a: str, b: str) -> int:
    """Letters inserted, deleted, changed or swapped with the next (optimal string alignment)
    that make `a` into `b`."""
    before, row = None, list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i] + [0] * len(b)
        for j, cb in enumerate(b, start=1):
            cost = ca != cb
            current[j] = min(row[j] + 1, current[j - 1] + 1, row[j - 1] + cost)
            if before is not None and i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                current[j] = min(current[j], before[j - 2] + 1)
        before, row = row, current
    return row[-1]


def _delimiter_hint(columns) -> str:
    """When the header is one cell holding the names split by another delimiter, say so."""
    if len(columns) != 1:
        return ""
    for sep, label in ((";", _("semicolons")), ("\t", _("tabs")), ("|", "'|'")):
        if sep in columns[0] and sum(c in columns[0].split(sep) for c in REQUIRED) >= 2:
            return _("; the header is separated by {label}, not commas: save the file as CSV "
                     "(comma delimited)", label=label)  # fmt: skip
    return ""
