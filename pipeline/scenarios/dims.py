"""Checks of the dimension cells (whole numbers or sweeps, per op; a collective's bytes too)
and of the numbers each row takes from the catalog (peak FLOP/s of its compute dtype, HBM
bandwidth and capacity, efficiencies)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from pipeline.catalogs.hardware import EFFICIENCY_COLUMNS, EFFICIENCY_RANGE
from pipeline.errors import quoted
from pipeline.model.dtypes import DTYPES, peak_family
from pipeline.scenarios.coded import Col, combine
from pipeline.scenarios.problems import EMPTY_ITEM, RANGE, Found, flag, flag_per_value
from pipeline.scenarios.sweeps import (
    MAX_EXACT,
    SWEEP_FORMS,
    TOO_BIG,
    Sweep,
    is_sweep,
    parse_sweep,
    parse_whole,
)

MAX_OP_LOG2 = 1000  # an op's dims may multiply to 2^1000; float64 ends near 2^1024

Sweeps = tuple[np.ndarray, np.ndarray]  # the rows that sweep a column, and each one's Sweep


# a list in a cell of each kind, for messages (the fleet's columns: scenarios.lists)
LIST_EXAMPLES = {"hardware": "h100|b200", "chips": "1|2|4", "dtype": "bf16|fp8"}
_RANGE_PARTS = re.compile(r"^\s*(\d{1,17})\s*\.\.\s*(\d{1,17})\s*(?:\*\s*(\d{1,17})\s*)?$")


def list_reason(text: str, example: str = "128|256") -> str | None:
    """Why a `|` list has an empty item (`8||16`, `h100|`, `|`): a doubled or stray `|`, the
    same problem in every column, refusing the row (None when every item has a value)."""
    parts = [part.strip() for part in text.split("|")]
    empty = [str(i) for i, part in enumerate(parts, start=1) if not part]
    if "|" not in text or not empty:
        return None
    which = f"item {empty[0]}" if len(empty) == 1 else f"items {', '.join(empty[:5])}"
    which += ", ..." if len(empty) > 5 else ""
    kept = [part for part in parts if part]
    fix = f"write {quoted('|'.join(kept))}" if kept else f"give its values, e.g. {example}"
    return (
        f"{EMPTY_ITEM} in the list {quoted(text)} ({which} of {len(parts)}); values are "
        f"separated by one '|': {fix}"
    )


def range_reason(text: str) -> str | None:
    """Why a range `lo..hi` or `lo..hi*factor` that reads as one is not a sweep: it starts
    below 1, goes down (`8..1`) or never grows (`1..64*1`), and the range meant (None: it
    is fine, or not a range of plain digits)."""
    m = _RANGE_PARTS.match(text)
    if m is None:
        return None
    lo, hi, factor = (None if g is None else int(g) for g in m.groups())
    if max(lo, hi, factor or 0) > MAX_EXACT:  # parse_sweep says it is too big
        return None
    if min(lo, hi) < 1:
        what = f"that starts at {min(lo, hi)}"
    elif hi < lo:
        what = "that goes down"
    elif factor is not None and factor < 2:
        what = f"that never grows (a factor of {factor})"
    else:
        return None
    fix = f"{max(min(lo, hi), 1)}..{max(lo, hi, 1)}" + ("" if factor is None else "*2")
    return (
        f"{RANGE} {what}: {quoted(text)}; a range goes up from 1 or more, by one (1..64) "
        f"or times 2 or more (1..64*2): write {quoted(fix)}"
    )


def _parse_dim_cell(text: str) -> int | Sweep | str | None:
    """A dim cell: its whole number, its Sweep, None when blank, or the reason it is bad."""
    if text == "":
        return None
    try:
        return parse_sweep(text) if is_sweep(text) else parse_whole(text)
    except ValueError as exc:
        if is_sweep(text):
            return list_reason(text) or range_reason(text) or f"{quoted(text)}: {exc}"
        if str(exc) == TOO_BIG:
            return f"{quoted(text)} {TOO_BIG}"
        return f"{quoted(text)} is not a positive integer or a sweep ({SWEEP_FORMS})"


def check_dims(
    sig: Col, op: Col, cells: dict[str, Col], optional: np.ndarray | None = None
) -> tuple[dict[str, np.ndarray], dict[str, Sweeps], Found]:
    """Each dim's value per row (NaN where blank, swept or bad), its sweeps (parsed once per
    distinct cell) and the problems: a dim the op needs that is missing, blank or bad, and
    dims that multiply past float64. `sig` holds each row's op signature, `op` its name,
    `cells` the file's dim columns; `optional`: rows whose other dims are read where given."""
    found: Found = []
    n = len(sig.codes)
    needed = {d: np.zeros(n, dtype=bool) for d in cells}
    for code, s in enumerate(sig.uniques):
        if s is None:
            continue
        rows = sig.codes == code
        if not rows.any():
            continue
        for d in s.dims:
            if d not in needed:
                found += flag(rows, d, f"op {s.op} needs dim {d}, and the file has no column '{d}'")
            else:
                needed[d] |= rows
    if optional is not None:  # rows whose dims are read where given (a transformer step's)
        for d, col in cells.items():
            needed[d] |= optional & ~col.is_("")
    values: dict[str, np.ndarray] = {}
    sweeps: dict[str, Sweeps] = {}
    for d, col in cells.items():
        values[d], sweeps[d], bad = whole_or_sweep(
            col,
            d,
            needed[d],
            lambda p, d=d: f"empty; op {op.at(p)} needs a value for dim {d}",
        )
        found += bad
    return values, sweeps, found + _check_size(values, sweeps, n)


def check_bytes(col: Col, collective: np.ndarray, op: Col) -> tuple[np.ndarray, Sweeps, Found]:
    """A collective's bytes (V, the whole array): a whole number or a sweep, like a dim."""
    return whole_or_sweep(
        col,
        "bytes",
        collective,
        lambda p: (
            f"empty; op {op.at(p)} needs bytes, the size of the whole array in bytes "
            "(V, before it is split over the chips)"
        ),
    )


def whole_or_sweep(
    col: Col, name: str, need: np.ndarray, empty
) -> tuple[np.ndarray, Sweeps, Found]:
    """A column whose cells (in `need` rows) are whole numbers or sweeps: its value per row
    (NaN where blank, swept or bad), its sweeps (rows, Sweep per row) and its problems, each
    distinct cell parsed once; `empty(p)` says what a blank cell needs."""
    parsed = col.derive(_parse_dim_cell)
    kinds = np.array([type(v).__name__ for v in parsed.uniques], dtype=object)
    found = flag(need & col.is_(""), name, empty)
    found += flag_per_value(need & parsed.per_row(kinds == "str"), name, parsed, str)  # reason
    number = np.array(
        [float(v) if isinstance(v, int) else np.nan for v in parsed.uniques], dtype=float
    )
    swept = need & parsed.per_row(kinds == "Sweep")
    return (
        np.where(need, parsed.per_row(number), np.nan),
        (np.flatnonzero(swept), parsed.values()[swept]),
        found,
    )


def _check_size(values: dict[str, np.ndarray], sweeps: dict[str, Sweeps], n: int) -> Found:
    """An op whose dims multiply past what float64 can count (each dim <= 2^53, but an
    einsum may have many) is rejected rather than computed as infinity."""
    log2 = np.zeros(n)
    for d, value in values.items():
        largest = value.copy()
        rows, cells = sweeps[d]
        largest[rows] = [c.largest for c in cells]
        log2 += np.log2(np.where(np.isnan(largest), 1.0, largest))
    return flag(
        log2 > MAX_OP_LOG2,
        "op",
        lambda p: (
            f"its dims multiply to about 2^{log2[p]:.0f}; the tool counts FLOPs and bytes "
            f"up to 2^{MAX_OP_LOG2} (float64)"
        ),
    )


def check_peak(
    chips: pd.DataFrame,
    hw: Col,
    compute: Col,
    collective: np.ndarray,
    given: dict[str, np.ndarray],
    peak_blank: np.ndarray,
) -> tuple[dict[str, np.ndarray], Found]:
    """peak_flops, hbm_bandwidth, hbm_capacity and the efficiencies per row: the row's own
    (`given`, NaN where blank), else the catalog's (`chips`), an efficiency else 1."""

    def catalog_peak(chip: str, dtype: str) -> float:
        if chip not in chips.index or dtype not in DTYPES:
            return np.nan
        return chips.at[chip, f"peak_{peak_family(dtype)}"]

    peak = combine(catalog_peak, hw, compute, dtype=float).values()
    override = given["peak_flops"]
    peak = np.where(np.isnan(override), peak, override)
    known = ~hw.is_("") & ~compute.is_("") & ~collective  # a collective needs no peak
    found = flag(
        known & np.isnan(peak) & peak_blank,
        "compute_dtype",
        lambda p: (
            f"chip {hw.at(p)} has no {compute.at(p)} peak in the catalog;"
            " give a peak_flops column (FLOP/s) or a --hardware file with "
            f"peak_{peak_family(compute.at(p))}"
        ),
    )
    out = {"peak_flops": peak}
    for name in ("hbm_bandwidth", "hbm_capacity"):
        cat = hw.derive(lambda c, n=name: chips[n].get(c, np.nan), dtype=float).values()
        out[name] = np.where(np.isnan(given[name]), cat, given[name])
    # the chip's board power (W; NaN where unpublished), for energy (model.cost)
    tdp = chips["tdp"] if "tdp" in chips.columns else {}
    out["tdp"] = hw.derive(lambda c: tdp.get(c, np.nan), dtype=float).values()
    found += flag(
        ~hw.is_("") & np.isnan(out["hbm_bandwidth"]),
        "hbm_bandwidth",
        lambda p: f"chip {hw.at(p)} has no HBM bandwidth; give hbm_bandwidth (bytes/s)",
    )
    for name in EFFICIENCY_COLUMNS:  # the row's own, else the chip's, else 1
        own = given[name]
        found += flag(own > 1, name, lambda p, g=own: f"{g[p]:g} is above 1; {EFFICIENCY_RANGE}")
        cat = hw.derive(lambda c, n=name: chips[n].get(c, np.nan), dtype=float).values()
        out[name] = np.where(np.isnan(own), np.where(np.isnan(cat), 1.0, cat), own)
    return out, found
