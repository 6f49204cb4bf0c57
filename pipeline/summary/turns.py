"""Where a sweep turns compute-bound: one rule for every line that sweeps a dim, a series line
(summary.series, Summary.lines) or a sweep chart's line (a series' rows on one chip with its
other swept values fixed: sweep_lines, each with its turn). A sweep of one dim, its op's only
batch dim, whose rows are compute-bound and otherwise bound and share one critical batch, is
compute-bound from that dim = that batch, exactly (book Q3: from B = 137 for D = F = 4096 on
a TPU v5e, not from the next swept value); any other line has no turn (all one bound, or mixed)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
import pyarrow as pa

from pipeline.model.ops import FLEET, parse_op
from pipeline.model.roofline import BOUNDS

MIXED = "mixed"  # a line whose rows are bound by more than one thing
TURN_COLUMNS = (*BOUNDS, "bound", "critical_min", "critical_max", "change_dim", "change_at")
BYTES = "bytes"  # a collective's swept size, drawn as time against bytes
# a fleet axis's results column: a `dtype` list sets every dtype, the compute dtype says it
FLEET_COLUMN = {"dtype": "compute_dtype"}
# the results column holding a swept input, when not the dim's own: a collective's bytes is V
SWEEP_COLUMN = {BYTES: "network_bytes"}


@dataclass(frozen=True)
class LinePlan:
    """A sweep chart's line: its series, its row positions in the chart's rows and its turn
    (line_turns: rows per bound, bound, change_dim, change_at; none for a collective's
    bytes); `detail`: the values of the series' other swept dims and fleet axes, 'F=2048'."""

    series: str
    rows: np.ndarray
    detail: str = ""
    of: int = 0  # its series' lines on this chip when a chart draws only some of them
    place: tuple[float, ...] = ()  # where its values sit on each of those dims, 0 to 1
    turn: Mapping = field(default_factory=dict)


def sweep_lines(results: pd.DataFrame) -> dict[tuple[str, str], list[LinePlan]]:
    """(hardware, swept dim) -> lines of the rows a chart draws (summary.grids.chart_frame):
    one per series, or per combination of its other dims (a series sweeping several dims is
    drawn against its first, A-Z) and fleet axes, each with its turn."""
    in_sweep = results["in_sweep"].to_numpy(dtype=bool)  # facts: as data
    positions = np.flatnonzero(in_sweep)
    if len(positions) == 0:
        return {}
    swept = results["swept"].iloc[positions].to_numpy(dtype=object)  # the fact: dims per row
    series = results["series"].iloc[positions].astype(str).to_numpy(dtype=object)
    keys = pd.DataFrame(
        {
            "hardware": results["hardware"].iloc[positions].astype(str).to_numpy(dtype=object),
            "series": series,
        }
    )
    groups: dict[tuple[str, str], list[LinePlan]] = {}
    cache: dict[str, np.ndarray] = {}

    def column(d: str) -> np.ndarray:
        if d not in cache:
            cache[d] = pd.to_numeric(results[SWEEP_COLUMN.get(d, d)], errors="coerce").to_numpy(
                dtype=float, na_value=np.nan
            )
        return cache[d]

    for (hw, s), idx in keys.groupby(["hardware", "series"], sort=True).indices.items():
        rows = positions[idx]
        axes = list(swept[idx[0]])  # the series' swept axes
        # its dims (a numeric x axis); the chip is the chart's, other fleet axes split lines
        dims = tuple(d for d in axes if d not in FLEET)
        fleet = [d for d in axes if d in FLEET and d != "hardware"]
        if not dims or any(SWEEP_COLUMN.get(d, d) not in results.columns for d in dims):
            continue
        others = dims[1:]
        if not others and not fleet:
            groups.setdefault((hw, dims[0]), []).append(LinePlan(str(s), rows))
            continue
        # a line per combination of the other dims and fleet axes, in their numeric order
        # (F=2048 before F=16384; chips 2 before 16): grouped on the values, not their text
        values = {d: column(d)[rows] for d in others}
        values |= {d: _text(results[FLEET_COLUMN.get(d, d)].iloc[rows]) for d in fleet}
        table = pd.DataFrame(values)
        numeric = [d for d in fleet if d == "chips"]
        table[numeric] = table[numeric].astype(float)
        inverse = table.groupby(list(table.columns), sort=True, dropna=False).ngroup().to_numpy()
        firsts = np.unique(inverse, return_index=True)[1]
        ranks = np.column_stack(
            [pd.factorize(table[d].to_numpy()[firsts], sort=True)[0] for d in table.columns]
        )
        places = ranks / np.maximum(ranks.max(axis=0), 1)  # each value's rank on its dim
        for k, at in enumerate(firsts.tolist()):
            what = ", ".join(f"{d}={_shown(table[d].iat[at])}" for d in table.columns)
            line = LinePlan(str(s), rows[inverse == k], what, place=tuple(places[k]))
            groups.setdefault((hw, dims[0]), []).append(line)
    for (_hw, dim), lines in groups.items():
        if dim != BYTES:
            turns = line_turns(results, [ln.rows for ln in lines], dim).to_dict("records")
            lines[:] = [replace(ln, turn=t) for ln, t in zip(lines, turns, strict=True)]
    return groups


def _shown(value) -> str:
    """A dim's or fleet axis' value in a legend: a whole number without its '.0'."""
    if isinstance(value, float | np.floating) and float(value).is_integer():
        return str(int(value))
    return str(value)


def _text(values: pd.Series) -> np.ndarray:
    """A column's values as numpy strings (a chips count without its '.0')."""
    if pd.api.types.is_numeric_dtype(values):
        return values.to_numpy(dtype=float).astype(np.int64).astype(str)
    return values.astype(str).to_numpy(dtype=str)


def change_points(table: pd.DataFrame) -> tuple[pd.api.extensions.ExtensionArray, pd.Series]:
    """Each line's turn, `change_dim` ('' for none) and `change_at` (NA for none), from a
    table of lines with columns einsum, swept (the dims the line sweeps, comma-joined), bound
    (a bound, or MIXED), compute (its compute-bound rows), critical_min and critical_max.
    Worked out on codes; only the few candidate lines' swept dims are compared as text."""
    codes, einsums = pd.factorize(table["einsum"].astype(str))  # few distinct einsums
    batch = np.asarray([batch_dim(e) for e in einsums] or [""], dtype=object)
    critical = table["critical_min"].to_numpy(dtype=float, na_value=np.nan)
    candidate = np.flatnonzero(
        (table["bound"] == MIXED).to_numpy(dtype=bool)
        & (table["compute"] > 0).to_numpy(dtype=bool)
        & (batch[codes] != "")
        & (table["critical_min"] == table["critical_max"]).fillna(False).to_numpy(dtype=bool)
    )
    swept = table["swept"].iloc[candidate].astype(str).to_numpy(dtype=object)
    turns = candidate[swept == batch[codes[candidate]]]
    which = np.zeros(len(table), dtype=np.int64)  # 0: no turn, else 1 + the einsum's code
    which[turns] = codes[turns] + 1
    at = np.full(len(table), np.nan)
    at[turns] = critical[turns]
    labels = pa.array(["", *batch], pa.string()).take(pa.array(which))
    return pd.array(labels, dtype="str"), pd.array(at, dtype="Float64").astype("Int64")


def batch_dim(einsum: str) -> str:
    """The op's batch dim when it has exactly one (B of BD,DF->BF), else ''."""
    if not einsum:
        return ""
    try:
        batch = parse_op(einsum).batch
    except ValueError:
        return ""
    return batch if len(batch) == 1 else ""


def line_turns(rows: pd.DataFrame, lines: Sequence[np.ndarray], dim: str) -> pd.DataFrame:
    """Per line (positions into `rows`, which hold einsum, bound and critical_batch; each
    line one or more rows, a sweep of `dim` alone): its rows per bound, its bound (or
    MIXED), its critical batch range and its turn (change_dim, change_at) by change_points,
    as the series lines have theirs. One row per line, in order."""
    n = len(lines)
    sizes = np.array([len(line) for line in lines], dtype=np.intp)
    codes = np.repeat(np.arange(n), sizes)
    at = np.concatenate(lines) if n else np.empty(0, dtype=np.intp)
    bound = pd.Categorical(rows["bound"].iloc[at], categories=list(BOUNDS)).codes.astype(np.int64)
    counts = np.bincount(codes * len(BOUNDS) + bound, minlength=n * len(BOUNDS))
    counts = counts.reshape(n, len(BOUNDS))
    kinds = (counts > 0).sum(axis=1)
    critical = pd.to_numeric(rows["critical_batch"].iloc[at], errors="coerce")
    critical = critical.to_numpy(dtype=float, na_value=np.nan)
    starts = np.cumsum(sizes) - sizes
    low = np.fmin.reduceat(critical, starts) if n else np.empty(0)
    high = np.fmax.reduceat(critical, starts) if n else np.empty(0)
    table = pd.DataFrame(
        {
            "einsum": rows["einsum"].iloc[at[starts]].astype(str).to_numpy(dtype=object),
            "swept": dim,
            "bound": np.asarray([*BOUNDS, MIXED], dtype=object)[
                np.where(kinds == 1, counts.argmax(axis=1), len(BOUNDS))
            ],
            **{b: counts[:, i] for i, b in enumerate(BOUNDS)},
            "critical_min": pd.array(low, dtype="Float64").astype("Int64"),
            "critical_max": pd.array(high, dtype="Float64").astype("Int64"),
        }
    )
    table["change_dim"], table["change_at"] = change_points(table)
    return table[list(TURN_COLUMNS)]
