"""Fleet sweeps (docs/input.md#sweeping-the-fleet): `hardware`, dtype and `chips` cells that
list values (`h100|h200|mi300x`, `bf16|fp8`, `1|2|4|8` or `1..64*2`) make one row per
combination before any row is checked, so each point is checked (and refused) on its own,
with its own name (`q5[hardware=h200]`), and every point keeps its source row's series.

The rows are grouped by the combination of listed cells they hold, so each distinct list is
parsed and multiplied out once, and the points are written with numpy, not a loop per row."""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.catalogs.hardware import Catalog
from pipeline.catalogs.llms import load_models
from pipeline.errors import quoted
from pipeline.model.dtypes import canonical_dtype
from pipeline.model.ops import FLEET
from pipeline.scenarios.dims import LIST_EXAMPLES, list_reason, range_reason
from pipeline.scenarios.expand import within_limit
from pipeline.scenarios.problems import RANGE, Found
from pipeline.scenarios.sweeps import TOO_BIG, Sweep, parse_sweep


@dataclass(frozen=True)
class FleetRows:
    """The table with every fleet list multiplied out, and per row: its line, its field
    count, its series (the source row's name), its label (`hardware=h200,dtype=fp8`; '' for
    a row that lists nothing) and the fleet axes its series sweeps (`hardware,dtype`); the
    last three None when no cell lists anything."""

    table: pa.Table
    lines: np.ndarray
    fields: np.ndarray | None
    series: np.ndarray | None
    labels: np.ndarray | None
    axes: np.ndarray | None
    found: Found


def expand_fleet(
    table: pa.Table,
    lines: np.ndarray,
    fields: np.ndarray | None,
    found: Found,
    catalog: Catalog,
    max_rows: int,
    limit_name: str = "--max-rows",
    models=None,
) -> FleetRows:
    """Each row whose fleet cells list values, made one row per combination (in the order of
    FLEET, the last column varying fastest); rows with a problem already (`found`) are left
    whole. A row with a list or range written wrong (`h100||b200`, `1..64*1`) is refused
    whole, like a dim's (`8||16`), and so is one whose points would take the file past
    `max_rows` (rather than built): its first values kept, so its other cells are checked.
    `models`: the model catalog (catalogs.llms.ModelCatalog; None: the built-in one)."""
    n = table.num_rows
    cols = [c for c in FLEET if c in table.column_names]
    listed = {c: _listed(table.column(c), c) for c in cols}
    has = np.zeros(n, dtype=bool)
    for mask in listed.values():
        has |= mask
    if not has.any():  # the common case: nothing to do, nothing built
        return FleetRows(table, lines, fields, None, None, None, list(found))
    names = pc.utf8_trim_whitespace(table.column("name")).to_numpy(zero_copy_only=False)
    has[[p for p, _, _ in found]] = False  # a row already refused is reported as it is
    # per row, the index of its combination of listed cells (0: lists nothing)
    cells = {c: table.column(c).to_numpy(zero_copy_only=False).astype(object) for c in cols}
    keys = np.array(
        [tuple(cells[c][p] if listed[c][p] else None for c in cols) for p in np.flatnonzero(has)],
        dtype=object,
    )
    combos: dict[tuple, int] = {}
    combo_of = np.zeros(n, dtype=np.int64)
    combo_of[has] = [combos.setdefault(tuple(k), len(combos) + 1) for k in keys]
    lists = [_lists(key, cols) for key in combos]
    sizes = np.array([1] + [math.prod(count for _, _, count in ls) for ls in lists], dtype=object)
    counts = np.ones(n, dtype=np.int64)
    # a combination past the limit is counted, never built (its size may pass int64)
    counts[has] = [min(int(sizes[k]), max_rows + 1) for k in combo_of[has]]
    new_found = _written_wrong(cells, listed, has)
    refused = np.zeros(n, dtype=bool)
    refused[[p for p, _, _ in new_found]] = True
    counts[refused] = 1
    if int(counts.sum()) > max_rows:
        over = ~within_limit(counts, max_rows) & has & ~refused
        refused |= over
        for p in np.flatnonzero(over).tolist():
            column = next(c for c in cols if listed[c][p])
            new_found.append(
                (
                    p,
                    column,
                    f"lists {int(sizes[combo_of[p]]):,} combinations, which takes the "
                    f"file past its limit of {max_rows:,} rows ({limit_name})",
                )
            )
        counts[refused] = 1
    built = set(combo_of[has & ~refused].tolist())
    points = [
        _points(ls, catalog, models)
        if k in built
        else ([""], {c: [_first(items)] for c, items, _ in ls})
        for k, ls in enumerate(lists, start=1)
    ]
    take = np.repeat(np.arange(n), counts)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    out_cells = {c: cells[c][take] for c in cols}
    series = names.astype(object)[take]
    labels = np.full(len(take), "", dtype=object)
    axes = np.full(len(take), "", dtype=object)
    order = np.argsort(combo_of, kind="stable")
    bounds = np.searchsorted(combo_of[order], np.arange(len(points) + 2))
    for code, (point_labels, values) in enumerate(points, start=1):
        rows = order[bounds[code] : bounds[code + 1]]
        size = len(point_labels)
        for c, v in values.items():  # a refused row: its first value, its other cells checked
            out_cells[c][starts[rows[refused[rows]]]] = v[0]
        whole = rows[~refused[rows]]
        if not len(whole):
            continue
        slots = (starts[whole][:, None] + np.arange(size)[None, :]).ravel()
        for c, v in values.items():
            out_cells[c][slots] = np.tile(np.asarray(v, dtype=object), len(whole))
        labels[slots] = np.tile(np.asarray(point_labels, dtype=object), len(whole))
        axes[slots] = ",".join(values)
    new_names = series.copy()
    swept = labels != ""
    new_names[swept] = series[swept] + "[" + labels[swept] + "]"
    out = table.take(pa.array(take))
    for c in cols:
        out = out.set_column(out.column_names.index(c), c, pa.array(out_cells[c], pa.string()))
    out = out.set_column(out.column_names.index("name"), "name", pa.array(new_names, pa.string()))
    # problems found before keep their row: its position in the new table
    moved = [(int(starts[p]), c, r) for p, c, r in [*found, *new_found]]
    return FleetRows(
        out,
        np.asarray(lines)[take],
        None if fields is None else np.asarray(fields)[take],
        series,
        labels,
        axes,
        moved,
    )


def _listed(column: pa.ChunkedArray, name: str) -> np.ndarray:
    """Which cells list values: a '|' anywhere, or (chips) a range `lo..hi`."""
    hit = pc.match_substring(column, "|")
    if name == "chips":
        hit = pc.or_(hit, pc.match_substring(column, ".."))
    return pc.fill_null(hit, False).to_numpy(zero_copy_only=False)


def _written_wrong(cells: dict, listed: dict, has: np.ndarray) -> Found:
    """A problem per listed cell (of rows `has`) whose list has an empty item or whose chips
    range does not read (scenarios.dims says why); each distinct cell judged once."""
    found: Found = []
    for c, values in cells.items():
        rows = np.flatnonzero(listed[c] & has)
        if not len(rows):
            continue
        distinct, inverse = np.unique(values[rows].astype(str), return_inverse=True)
        reasons = np.array([_cell_reason(str(v), c) for v in distinct], dtype=object)[inverse]
        found += [(int(p), c, r) for p, r in zip(rows, reasons, strict=True) if r]
    return found


def _cell_reason(cell: str, column: str) -> str:
    """Why a listed cell is written wrong ('' when it is not): a `|` list with an empty
    item, or a chips range that is not one (`8..1`, `1..64*1`)."""
    example = LIST_EXAMPLES.get(column, LIST_EXAMPLES["dtype"])
    if "|" in cell:
        return list_reason(cell, example) or ""
    try:
        parse_sweep(cell)
    except ValueError as exc:
        why = f" ({exc})" if TOO_BIG in str(exc) else ""
        return range_reason(cell) or (
            f"{RANGE} of chips that does not read: {quoted(cell)}{why}; chips are a whole "
            f"number (8), a list ({example}) or a range (1..64, or 1..64*2 to double)"
        )
    return ""


def _lists(key: tuple, cols: list[str]) -> list[tuple[str, object, int]]:
    """A combination's listed cells: (column, its items or its chips Sweep, how many)."""
    out = []
    for c, cell in zip(cols, key, strict=True):
        if cell is None:
            continue
        items = _items(cell, c)
        out.append((c, items, len(items)))
    return out


def _points(
    lists: list[tuple[str, object, int]], catalog: Catalog, models
) -> tuple[list[str], dict]:
    """The points of one combination: each point's label and, per listed column, its value at
    every point (cartesian product, the last column fastest)."""
    values_of = [(c, _values(items)) for c, items, _ in lists]
    product = list(itertools.product(*(v for _, v in values_of)))
    values = {c: [p[i] for p in product] for i, (c, _) in enumerate(values_of)}
    labels = [
        ",".join(
            f"{c}={_label(v, c, catalog, models)}" for (c, _), v in zip(values_of, p, strict=True)
        )
        for p in product
    ]
    return labels, values


def _items(cell: str, column: str):
    """A listed cell's values: text items (each checked later like any cell), or a chips
    range's Sweep (counted before built); a range that does not parse is kept whole (the
    check of chips says why)."""
    if column == "chips" and "|" not in cell:
        try:
            return parse_sweep(cell)
        except ValueError:
            return [cell]
    return [part.strip() for part in cell.split("|")]


def _values(items) -> list[str]:
    if isinstance(items, Sweep):
        return [str(int(v)) for v in items.values()]
    return list(items)


def _first(items) -> str:
    """A refused row's value: a range's start, a list's first value ('' when it has none)."""
    return str(items.lo) if isinstance(items, Sweep) else next((i for i in items if i), "")


def _label(value: str, column: str, catalog: Catalog, models) -> str:
    """A point's value as its name shows it: the chip's catalog name, the dtype's canonical
    name, the model's catalog name, the chips as written (or as typed, when unknown: the
    check names it)."""
    if column == "hardware":
        return catalog.resolve(value) or value
    if column == "model":  # by its catalog name too: `llama3-8b|llama-3-8b` is one model twice
        return (models or _builtin_models()).resolve(value) or value
    if column == "chips":
        return value
    return canonical_dtype(value) or value


@functools.cache
def _builtin_models():
    """The model catalog without a user's models, read once (a label per fleet point)."""
    return load_models()


def duplicate_series(series: np.ndarray, lines: np.ndarray) -> Found:
    """Rows of two source lines named alike: their points' names differ (`q[hardware=h100]`,
    `q[hardware=h200]`) but they would be one series, ranked as one (summary.fleet); the
    later line's rows are refused, pointing at the first."""
    pairs = pd.DataFrame({"series": series, "line": lines})
    first = pairs.drop_duplicates("series")  # each series' first line
    owner = pd.Series(first["line"].to_numpy(), index=first["series"].to_numpy())
    first_line = owner.reindex(pairs["series"]).to_numpy()
    later = (first_line != lines) & (pairs["series"].to_numpy() != "")
    return [
        (int(p), "name", f"duplicate name {quoted(str(series[p]))} (first on line "
         f"{int(first_line[p])}); names must be unique, a fleet row's too")
        for p in np.flatnonzero(later)
    ]  # fmt: skip
