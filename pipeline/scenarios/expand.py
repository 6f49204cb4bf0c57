"""Sweep expansion (one scenario per value, the cartesian product of a row's swept dims) and
the warnings about rows that split a dim over more chips than it has."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.errors import printable
from pipeline.scenarios.marks import EVERY, FLEET_POINT, point_marks
from pipeline.scenarios.problems import Found
from pipeline.scenarios.sweeps import Sweep


def grids(
    valid: np.ndarray, sweeps: dict[str, tuple[np.ndarray, np.ndarray]]
) -> dict[int, list[tuple[str, Sweep]]]:
    """Each valid swept row's sweeps, {position: [(column, Sweep), ...]} in the order of
    `sweeps` (per column, the rows that sweep it and each one's Sweep)."""
    swept: dict[int, list[tuple[str, Sweep]]] = {}
    for d, (rows, cells) in sweeps.items():
        for p, cell in zip(rows.tolist(), cells, strict=True):
            if valid[p]:
                swept.setdefault(p, []).append((d, cell))
    return swept


def expand(
    out: pd.DataFrame,
    valid: np.ndarray,
    sweeps: dict[str, tuple[np.ndarray, np.ndarray]],
    max_rows: int,
    fleet: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> tuple[pd.DataFrame, Found]:
    """The valid rows of `out`, each sweep cell expanded into one row per value (cartesian
    product of the row's sweeps, in the order of `sweeps`: per column, the rows that sweep it
    and each one's Sweep), with a series column; and the rows refused for passing max_rows.
    `fleet`: per row of `out`, the series, label and axes of a row a fleet list made
    (scenarios.lists): its series is its source row's, its dims' labels follow its own.

    Each row's count is the product of its sweeps' lengths, computed before any value is
    built, so a row past --max-rows is refused without building it."""
    swept = grids(valid, sweeps)
    exact = {p: math.prod(len(cell) for _, cell in grid) for p, grid in swept.items()}
    counts = np.ones(len(valid), dtype=np.int64)
    for p, count in exact.items():
        counts[p] = min(count, max_rows + 1)  # no overflow: anything past it is refused
    positions = np.flatnonzero(valid)
    found: Found = []
    if int(counts[positions].sum()) > max_rows:
        over = positions[~within_limit(counts[positions], max_rows)]
        for p in over.tolist():
            col = swept[p][0][0] if p in swept else "name"
            found.append(
                (
                    p,
                    col,
                    f"expands to {exact[p]:,} rows, which takes the file past its limit of "
                    f"{max_rows:,} rows (--max-rows)"
                    if p in swept
                    else f"takes the file past its limit of {max_rows:,} rows (--max-rows), "
                    "which the rows before it fill",
                )
            )
        valid = valid.copy()
        valid[over] = False
        positions = np.flatnonzero(valid)
        swept = {p: g for p, g in swept.items() if valid[p]}
    return expand_slice(out, valid, swept, counts, fleet, 0, int(counts[positions].sum())), found


def expand_slice(
    out: pd.DataFrame,
    valid: np.ndarray,
    swept: dict[int, list[tuple[str, Sweep]]],
    counts: np.ndarray,
    fleet: tuple[np.ndarray, np.ndarray, np.ndarray] | None,
    lo: int,
    hi: int,
) -> pd.DataFrame:
    """Scenarios lo to hi (end excluded) of the expansion of the valid rows of `out`, in
    order (each row's points in the order of its sweeps, the last fastest): the whole file
    for the local engine, one partition for the Dask engine (docs/model.md). `swept`: grids()
    of the valid rows; `counts`: each row's number of scenarios (1 when it sweeps nothing).
    Only the rows a slice touches are built, and of a swept row only its points in the slice
    (their flat positions unravelled), so a partition of a 40-million-point row costs its
    own size; the rows that sweep the same dims are worded and filled together."""
    positions = np.flatnonzero(valid)
    reps_all = counts[positions].astype(np.int64)
    ends = np.cumsum(reps_all)
    begins = ends - reps_all
    first, last = np.searchsorted(ends, lo, "right"), np.searchsorted(begins, hi, "left")
    rows = positions[first:last]
    take_lo = np.maximum(lo - begins[first:last], 0)
    take_hi = np.minimum(hi - begins[first:last], reps_all[first:last])
    reps = take_hi - take_lo
    if len(rows) == len(valid):
        sub = out.reset_index(drop=True)
    else:
        sub = out.iloc[rows].reset_index(drop=True)
    if fleet is None:
        series = sub["name"].to_numpy(dtype=object)
        own = np.full(len(sub), "", dtype=object)
        axes = own
    else:
        series, own, axes = fleet[0][rows], fleet[1][rows], fleet[2][rows]
    if not swept:
        sub.insert(2, "series", pd.Series(series, index=sub.index, dtype=object))
        # the axes each row's series sweeps, as data (no dims here; fleet lists maybe)
        sub["swept"] = pd.Categorical(axes) if (axes != "").any() else ""
        fleet_point = np.asarray(axes != "", dtype=bool)
        sub["marks"] = np.where(fleet_point, FLEET_POINT | EVERY, EVERY).astype(np.int16)
        return sub
    owner = np.repeat(np.arange(len(sub)), reps)  # each scenario's row of `sub`
    expanded = sub.iloc[owner].reset_index(drop=True)
    names = _arrow_text(sub["name"]).take(pa.array(owner))
    # each row's name up to its dims: "series[", or "series[label," for a fleet point
    heads = pa.array(series.astype(object) + "[" + np.where(own != "", own + ",", ""))
    starts = np.cumsum(reps) - reps
    marks = np.full(len(expanded), EVERY, dtype=np.int16)
    shapes: dict[tuple[str, ...], list[int]] = {}  # rows of the slice by the dims they sweep
    for i, p in enumerate(rows.tolist()):
        if p in swept:
            shapes.setdefault(tuple(d for d, _ in swept[p]), []).append(i)
    dims: dict[str, np.ndarray] = {}  # each swept dim's column, filled shape by shape
    chunks, where = [names], np.arange(len(expanded), dtype=np.int64)
    for shape, members in shapes.items():
        at = np.asarray(members)
        one = np.repeat(np.arange(len(at)), reps[at])  # each point's row among `at`
        step = np.arange(len(one)) - np.repeat(np.cumsum(reps[at]) - reps[at], reps[at])
        flat, to = take_lo[at][one] + step, np.repeat(starts[at], reps[at]) + step
        cells = [[swept[rows[i]][k][1] for i in members] for k in range(len(shape))]
        sizes = [np.array([len(c) for c in column])[one] for column in cells]
        index = _unravel(flat, sizes)
        parts: list = [heads.take(pa.array(at[one]))]
        for k, (d, column, position) in enumerate(zip(shape, cells, index, strict=True)):
            values = _values(column, one, position)
            if d not in dims:
                dims[d] = expanded[d].to_numpy(dtype=np.float64, copy=True)
            dims[d][to] = values
            digits = pc.cast(pa.array(values.astype(np.int64)), pa.string())  # exact: <= 2^53
            parts += [f"{',' if k else ''}{d}=", digits]
        marks[to] = point_marks(index, sizes)
        where[to] = sum(map(len, chunks)) + np.arange(len(to))
        chunks.append(pc.binary_join_element_wise(*parts, "]", ""))
    for d, values in dims.items():
        expanded[d] = values
    expanded["name"] = pd.array(pa.concat_arrays(chunks).take(pa.array(where)), dtype="str")
    series_text = _arrow_text(pd.Series(series, dtype=object)).take(pa.array(owner))
    expanded.insert(2, "series", pd.array(series_text, dtype="str"))
    # the dims each row's series sweeps, as data ("B,D"; "" for a single row), in name order
    kinds = np.array(
        [
            ",".join([*filter(None, [axes[i]]), *(d for d, _ in swept.get(p, ()))])
            for i, p in enumerate(rows.tolist())
        ]
    )
    expanded["swept"] = pd.Categorical(np.repeat(kinds, reps))
    fleet_point = np.repeat(np.asarray(axes != "", dtype=bool), reps)
    expanded["marks"] = np.where(fleet_point, marks | FLEET_POINT, marks).astype(np.int16)
    return expanded


def _arrow_text(column: pd.Series) -> pa.Array:
    """A column of names as an Arrow string array."""
    return pa.array(column.astype(object).tolist(), type=pa.string())


def _unravel(flat: np.ndarray, sizes: list[np.ndarray]) -> tuple[np.ndarray, ...]:
    """np.unravel_index with each point's own sizes (the last dim fastest)."""
    index = []
    for size in reversed(sizes):
        flat, at = np.divmod(flat, size)
        index.append(at)
    return tuple(reversed(index))


def _values(cells: list[Sweep], one: np.ndarray, at: np.ndarray) -> np.ndarray:
    """The value at position `at` of each point's sweep (`cells[one]`), as float64: a
    range's computed (lo + position), a list's or a factor's (at most 54 values) looked up
    in one table of the distinct ones."""
    ranged = np.array([not c.items and c.factor == 1 for c in cells])
    values = (np.array([c.lo for c in cells], dtype=np.int64)[one] + at).astype(float)
    if ranged.all():
        return values
    where: dict[Sweep, int] = {}  # each distinct sweep's first value in the table
    size = 0
    for c in (c for c, r in zip(cells, ranged, strict=True) if not r):
        if c not in where:
            where[c], size = size, size + len(c)
    table = np.concatenate([c.values() for c in where])
    start = np.array([where.get(c, 0) for c in cells], dtype=np.int64)
    listed = ~ranged[one]
    values[listed] = table[start[one[listed]] + at[listed]]
    return values


def within_limit(counts: np.ndarray, max_rows: int) -> np.ndarray:
    """Which rows (in file order) fit: a row is taken while it fits in what is left of the
    limit, and a row refused takes nothing, so a smaller row after it may still fit."""
    running = np.cumsum(counts)
    keep = running <= max_rows
    first = int(np.argmin(keep))  # the first row past the limit; all before it fit
    used = int(running[first - 1]) if first else 0
    keep[first:] = True
    # past it, only swept rows (count > 1) are taken one by one; a run of single rows takes
    # what is left, and once nothing is left every later row is refused
    tail = counts[first:]
    swept = np.flatnonzero(tail > 1).tolist()
    start = 0
    for i in [*swept, len(tail)]:
        room = max_rows - used
        if i - start > room:  # the single rows before i fill the limit
            keep[first + start + room :] = False
            return keep
        used += i - start
        if i < len(tail):
            fits = used + int(tail[i]) <= max_rows
            keep[first + i] = fits
            used += int(tail[i]) if fits else 0
        start = i + 1
    return keep


IDLE_WARNINGS = 20  # rows named one by one in the warnings about idle chips


def idle_chip_words(table: pd.DataFrame, path: Path) -> list[str]:
    """Summary.idle (summary.idle) worded, a warning per line (the first IDLE_WARNINGS)."""
    out = []
    for row in table.head(IDLE_WARNINGS).itertuples(index=False):
        c, d, line = int(row.chips), row.shard, int(row.line)
        where = f"{printable(path)}:{line}: column chips:"
        if row.rows == 1:
            v = int(row.low)
            out.append(
                f"{where} {c} chips split {d} = {v}: {c - v} of the chips hold nothing "
                "(the times are those of a busy chip)"
            )
        else:  # a range that is one value reads as that value; so do the chips
            low, high, most = int(row.low), int(row.high), int(row.most)
            size = f"{low:,}" if low == high else f"{low:,} to {high:,}"
            chips, below = (f"{c} chips", f"below {c}") if c == most else (
                f"{c} to {most} chips", "below their number")  # fmt: skip
            out.append(
                f"{where} {chips} split {d}, which is {below} in {int(row.idle):,} of "
                f"this row's {int(row.rows):,} scenarios ({d} = {size}): some chips hold "
                "nothing there"
            )
    if len(table) > IDLE_WARNINGS:
        out.append(
            f"{printable(path)}: and {len(table) - IDLE_WARNINGS:,} more rows split a dim over "
            "more chips than it has"
        )
    return out
