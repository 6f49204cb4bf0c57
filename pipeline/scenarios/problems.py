"""Row problems while a file is checked: (position, column, reason) triples that each check
returns for the rows of a mask, then sorted and filtered once into the `RowProblem`s reported."""

from __future__ import annotations

from collections.abc import Callable
from itertools import repeat

import numpy as np
import pyarrow as pa

from pipeline.errors import RowProblem
from pipeline.scenarios.coded import Col

Found = list[tuple[int, str, str]]  # (row position, column, reason)

# a workbook cell that was not text (scenarios.xlsx.sheet): its reason starts with one of these
FORMULA, DATE, BOOLEAN = "a formula", "a date", "a TRUE/FALSE cell"
ERROR = "the error value"  # a workbook's #N/A, #DIV/0!, ...: Excel could not compute the cell
# a list or range written wrong (`h100||b200`, `8..1`; scenarios.dims): its whole row refused
EMPTY_ITEM, RANGE = "an empty item", "a range"
# a cell with one of these problems gets no other: the other checks of it would mislead
OWN_CELL = ("NUL byte", FORMULA, DATE, BOOLEAN, ERROR, EMPTY_ITEM, RANGE)


def flag(mask: np.ndarray, column: str, reason: str | Callable[[int], str]) -> Found:
    """A problem for each row in mask; reason is a string or f(position) -> str."""
    rows = np.flatnonzero(np.asarray(mask, dtype=bool)).tolist()
    if callable(reason):
        return [(p, column, reason(p)) for p in rows]
    return list(zip(rows, repeat(column), repeat(reason)))


def flag_per_value(mask: np.ndarray, column: str, col: Col, reason: Callable[..., str]) -> Found:
    """A problem for each row in mask; reason(value) runs once per distinct value of `col`
    among those rows (a did-you-mean costs a search, not one per row)."""
    rows = np.flatnonzero(np.asarray(mask, dtype=bool))
    if not len(rows):
        return []
    codes = col.codes[rows]
    reasons = np.empty(len(col.uniques), dtype=object)
    for code in np.unique(codes).tolist():
        reasons[code] = reason(col.uniques[code])
    return list(zip(rows.tolist(), repeat(column), reasons[codes].tolist()))


def rejected(found: Found, n: int) -> np.ndarray:
    """The rows (of n) with at least one problem."""
    bad = np.zeros(n, dtype=bool)
    bad[[p for p, _, _ in found]] = True
    return bad


def row_problems(
    found: Found,
    *,
    file: str,
    lines: np.ndarray,
    names: pa.Array,
    columns: list[str],
    ragged: frozenset[int] = frozenset(),
) -> list[RowProblem]:
    """The problems as reported: in row order, then the file's column order, then reason.

    A row with too many fields (`ragged`) has shifted cells, so only its field count is
    reported (other complaints would mislead); a cell holding a NUL byte (or a workbook's date,
    boolean or formula with no value) only for that."""
    order = {c: i for i, c in enumerate(columns)}
    nul = {(p, c) for p, c, r in found if r.startswith(OWN_CELL)}
    kept = [
        (p, c, r) for p, c, r in found
        if (p not in ragged or c == "*") and ((p, c) not in nul or r.startswith(OWN_CELL))
    ]  # fmt: skip
    kept.sort(key=lambda q: (q[0], order.get(q[1], len(order)), q[2]))
    return [RowProblem(file, int(lines[p]), names[p].as_py(), c, r) for p, c, r in kept]
