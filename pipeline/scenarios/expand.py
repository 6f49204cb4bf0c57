"""Sweep expansion (one scenario per value, the cartesian product of a row's swept dims) and
the warnings about rows that split a dim over more chips than it has."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.errors import printable
from pipeline.scenarios.problems import Found
from pipeline.scenarios.sweeps import Sweep


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
    (scenarios.fleet): its series is its source row's, its dims' labels follow its own.

    Each row's count is the product of its sweeps' lengths, computed before any value is
    built, so a row past --max-rows is refused without building it."""
    swept: dict[int, list[tuple[str, Sweep]]] = {}
    for d, (rows, cells) in sweeps.items():
        for p, cell in zip(rows.tolist(), cells, strict=True):
            if valid[p]:
                swept.setdefault(p, []).append((d, cell))
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
    if len(positions) == len(valid):
        out = out.reset_index(drop=True)
    else:
        out = out.iloc[positions].reset_index(drop=True)
    if fleet is None:
        series = out["name"]
        own = np.full(len(out), "", dtype=object)
        axes = own
    else:
        series = pd.Series(fleet[0][positions], index=out.index, dtype=object)
        own, axes = fleet[1][positions], fleet[2][positions]
    if not any(valid[p] for p in swept):
        out.insert(2, "series", series)
        # the axes each row's series sweeps, as data (no dims here; fleet lists maybe)
        out["swept"] = pd.Categorical(axes) if (axes != "").any() else ""
        return out, found
    reps = counts[positions]
    expanded = out.iloc[np.repeat(np.arange(len(out)), reps)].reset_index(drop=True)
    series_arr = series.to_numpy(dtype=object)
    names = np.repeat(out["name"].to_numpy(dtype=object), reps).astype(object)
    series_col = np.repeat(series_arr, reps).astype(object)
    starts = np.concatenate(([0], np.cumsum(reps)[:-1]))
    for i, p in enumerate(positions.tolist()):
        if p not in swept:
            continue
        grid = swept[p]
        mesh = np.meshgrid(*[cell.values() for _, cell in grid], indexing="ij")
        s, n = starts[i], reps[i]
        labels = [""] * n
        for (d, _), values in zip(grid, mesh, strict=True):
            flat = values.ravel()
            expanded.loc[s : s + n - 1, d] = flat
            labels = [
                f"{lab},{d}={int(v)}" if lab else f"{d}={int(v)}"
                for lab, v in zip(labels, flat, strict=True)
            ]
        first = f"{own[i]}," if own[i] else ""  # a fleet point's label comes first
        names[s : s + n] = [f"{series_arr[i]}[{first}{lab}]" for lab in labels]
    expanded["name"] = names
    expanded.insert(2, "series", series_col)
    # the dims each row's series sweeps, as data ("B,D"; "" for a single row), in name order
    grids = np.array(
        [
            ",".join([*filter(None, [axes[i]]), *(d for d, _ in swept.get(p, ()))])
            for i, p in enumerate(positions.tolist())
        ]
    )
    expanded["swept"] = pd.Categorical(np.repeat(grids, reps))
    return expanded, found


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


def idle_chip_warnings(frame: pd.DataFrame, path: Path) -> list[str]:
    """Rows that split a dim over more chips than it has: some chips hold nothing (the model
    times the busiest chip, which is right; the warning says the chips are wasted)."""
    if frame.empty or not (frame["chips"] > 1).any():
        return []
    shard = frame["shard"].astype("category")
    codes = shard.cat.codes.to_numpy()
    size = np.full(len(frame), np.nan)
    for code, d in enumerate(shard.cat.categories):
        if d:
            rows = codes == code
            size[rows] = frame[d].to_numpy(dtype=float)[rows]
    shard = shard.to_numpy(dtype=object)
    chips = frame["chips"].to_numpy(dtype=float)
    with np.errstate(invalid="ignore"):
        idle = chips > size
    if not idle.any():
        return []
    lines = frame["line"].to_numpy()
    per_line = pd.Series(lines).value_counts()
    hit = pd.DataFrame(
        {"line": lines[idle], "size": size[idle], "chips": chips[idle], "shard": shard[idle]}
    ).groupby("line", sort=True)
    first = hit.first()
    low, high, count = hit["size"].min(), hit["size"].max(), hit.size()
    out = []
    for line in first.index[:IDLE_WARNINGS]:
        c, d = int(first.at[line, "chips"]), first.at[line, "shard"]
        where = f"{printable(path)}:{line}: column chips:"
        if per_line[line] == 1:
            v = int(low[line])
            out.append(
                f"{where} {c} chips split {d} = {v}: {c - v} of the chips hold nothing "
                "(the times are those of a busy chip)"
            )
        else:
            out.append(
                f"{where} {c} chips split {d}, which is below {c} in {int(count[line]):,} of "
                f"this row's {int(per_line[line]):,} scenarios ({d} = {int(low[line]):,} to "
                f"{int(high[line]):,}): some chips hold nothing there"
            )
    if len(first) > IDLE_WARNINGS:
        out.append(
            f"{printable(path)}: and {len(first) - IDLE_WARNINGS:,} more rows split a dim over "
            "more chips than it has"
        )
    return out
