"""Checks of the dimension cells (whole numbers or sweeps, per op; a collective's bytes too)
and of the numbers each row takes from the catalog (peak FLOP/s of its compute dtype, HBM
bandwidth and capacity, efficiencies)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from pipeline.errors import quoted
from pipeline.model.catalog import EFFICIENCY_COLUMNS, EFFICIENCY_RANGE
from pipeline.model.dtypes import DTYPES, peak_family
from pipeline.scenarios.coded import combine
from pipeline.scenarios.sweeps import (
    SWEEP_FORMS,
    TOO_BIG,
    Sweep,
    is_sweep,
    parse_sweep,
    parse_whole,
)

if TYPE_CHECKING:
    from pipeline.scenarios.checks import Checker

MAX_OP_LOG2 = 1000  # an op's dims may multiply to 2^1000; float64 ends near 2^1024


def _parse_dim_cell(text: str) -> int | Sweep | str | None:
    """A dim cell: its whole number, its Sweep, None when blank, or the reason it is bad."""
    if text == "":
        return None
    try:
        return parse_sweep(text) if is_sweep(text) else parse_whole(text)
    except ValueError as exc:
        if is_sweep(text):
            return f"{quoted(text)}: {exc}"
        if str(exc) == TOO_BIG:
            return f"{quoted(text)} {TOO_BIG}"
        return f"{quoted(text)} is not a positive integer or a sweep ({SWEEP_FORMS})"


def check_dims(ck: Checker, out: dict, dims: list[str]):
    """Each dim's value per row (NaN where blank, swept or bad) and its sweeps: per dim,
    the rows that sweep it and each one's Sweep (parsed once per distinct cell)."""
    values: dict[str, np.ndarray] = {}
    sweeps: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    needed: dict[str, np.ndarray] = {d: np.zeros(ck.n, dtype=bool) for d in dims}
    for code, s in enumerate(ck.sig.uniques):
        if s is None:
            continue
        rows = ck.sig.codes == code
        if not rows.any():
            continue
        for d in s.dims:
            if d not in needed:
                ck.add(rows, d, f"op {s.op} needs dim {d}, and the file has no column '{d}'")
            else:
                needed[d] |= rows
    for d in dims:
        values[d], sweeps[d] = _whole_or_sweep(
            ck,
            d,
            needed[d],
            lambda p, d=d: f"empty; op {out['op'].at(p)} needs a value for dim {d}",
        )
    _check_size(ck, out, dims, values, sweeps)
    # a collective's bytes (V, the whole array) is a whole number or a sweep, like a dim
    collective = ck.collective
    values["bytes"], sweeps["bytes"] = _whole_or_sweep(
        ck,
        "bytes",
        collective,
        lambda p: (
            f"empty; op {out['op'].at(p)} needs bytes, the size of the whole array in bytes "
            "(V, before it is split over the chips)"
        ),
    )
    out["bytes"] = np.where(collective, values.pop("bytes"), out["bytes"])
    return values, sweeps


def _whole_or_sweep(ck: Checker, name: str, need: np.ndarray, empty):
    """A column whose cells (in `need` rows) are whole numbers or sweeps: its value per row
    (NaN where blank, swept or bad) and its sweeps (rows, Sweep per row), each distinct cell
    parsed once; problems go to `ck`, `empty(p)` says what a blank cell needs."""
    col = ck.col(name)
    parsed = col.derive(_parse_dim_cell)
    kinds = np.array([type(v).__name__ for v in parsed.uniques], dtype=object)
    ck.add(need & col.is_(""), name, empty)
    ck.add_per_value(need & parsed.per_row(kinds == "str"), name, parsed, str)  # the reason
    number = np.array(
        [float(v) if isinstance(v, int) else np.nan for v in parsed.uniques], dtype=float
    )
    swept = need & parsed.per_row(kinds == "Sweep")
    return (
        np.where(need, parsed.per_row(number), np.nan),
        (np.flatnonzero(swept), parsed.values()[swept]),
    )


def _check_size(ck: Checker, out: dict, dims: list[str], values: dict, sweeps: dict) -> None:
    """An op whose dims multiply past what float64 can count (each dim <= 2^53, but an
    einsum may have many) is rejected rather than computed as infinity."""
    log2 = np.zeros(ck.n)
    for d in dims:
        largest = values[d].copy()
        rows, cells = sweeps[d]
        largest[rows] = [c.largest for c in cells]
        log2 += np.log2(np.where(np.isnan(largest), 1.0, largest))
    ck.add(
        log2 > MAX_OP_LOG2,
        "op",
        lambda p: (
            f"its dims multiply to about 2^{log2[p]:.0f}; the tool counts FLOPs and bytes "
            f"up to 2^{MAX_OP_LOG2} (float64)"
        ),
    )


def check_peak(ck: Checker, out: dict) -> None:
    """peak_flops, hbm_bandwidth and hbm_capacity per row: the row's own, else the catalog's."""
    chips = ck.catalog.chips
    hw = out["hardware"]
    compute = out["compute_dtype"]

    def catalog_peak(chip: str, dtype: str) -> float:
        if chip not in chips.index or dtype not in DTYPES:
            return np.nan
        return chips.at[chip, f"peak_{peak_family(dtype)}"]

    peak = combine(catalog_peak, hw, compute, dtype=float).values()
    override = out["peak_flops"]
    peak = np.where(np.isnan(override), peak, override)
    known = ~hw.is_("") & ~compute.is_("") & ~ck.collective  # a collective needs no peak
    ck.add(
        known & np.isnan(peak) & ck.col("peak_flops").is_(""),
        "compute_dtype",
        lambda p: (
            f"chip {hw.at(p)} has no {compute.at(p)} peak in the catalog;"
            " give a peak_flops column (FLOP/s) or a --hardware file with "
            f"peak_{peak_family(compute.at(p))}"
        ),
    )
    out["peak_flops"] = peak
    for name in ("hbm_bandwidth", "hbm_capacity"):
        cat = hw.derive(lambda c, n=name: chips[n].get(c, np.nan), dtype=float).values()
        out[name] = np.where(np.isnan(out[name]), cat, out[name])
    ck.add(
        ~hw.is_("") & np.isnan(out["hbm_bandwidth"]),
        "hbm_bandwidth",
        lambda p: f"chip {hw.at(p)} has no HBM bandwidth; give hbm_bandwidth (bytes/s)",
    )
    for name in EFFICIENCY_COLUMNS:  # the row's own, else the chip's, else 1
        given = ck.number_col(name, what="an efficiency, 0 < e <= 1 (e.g. 0.9)").values()
        ck.add(
            given > 1,
            name,
            lambda p, g=given: f"{g[p]:g} is above 1; {EFFICIENCY_RANGE}",
        )
        cat = hw.derive(lambda c, n=name: chips[n].get(c, np.nan), dtype=float).values()
        out[name] = np.where(np.isnan(given), np.where(np.isnan(cat), 1.0, cat), given)
