"""The rooflines' points binned (docs/outputs.md#charts), a partial like every statistic
(summary.partial): a frame's points counted on one fixed log grid (GRID_STEPS bins per
decade, the same for every frame, so grids add up) per chart, chip, bound and fit, and its
derated rows per efficiency pair. A run whose charts are drawn from a sample of its rows (the
Dask engine's) draws every scenario's density and exact counts from them
(render.charts.grid)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipeline.summary.codes import bound_codes_of, fits

GRID_STEPS = 64  # bins per decade of the fine grid: 4x finer than a density chart's bins
HIDDEN = np.iinfo(np.int32).min  # the bin of a row not drawn (no bytes or no FLOPs)
KEYS = ["chart", "hardware", "bound", "fits", "ix", "iy"]
DERATED_KEYS = ["chart", "hardware", "compute", "rate"]
RATE = {"roofline": "hbm_efficiency", "network": "network_efficiency"}


@dataclass(frozen=True)
class Grids:
    """The binned points (KEYS and `scenarios`) and derated rows (DERATED_KEYS, `rows`) of
    every chart; "collective" rows are counted per chip (not drawn: no FLOPs)."""

    bins: pd.DataFrame
    derated: pd.DataFrame

    def __add__(self, other: Grids) -> Grids:
        return Grids(_sum(self.bins, other.bins, KEYS, "scenarios"),
                     _sum(self.derated, other.derated, DERATED_KEYS, "rows"))  # fmt: skip


def _sum(a: pd.DataFrame, b: pd.DataFrame, keys: list[str], value: str) -> pd.DataFrame:
    both = pd.concat([a, b], ignore_index=True)
    return both.groupby(keys, as_index=False, sort=False)[value].sum()


def with_flops(rows: pd.DataFrame) -> np.ndarray:
    """Rows a roofline can place: every op but a collective row (no FLOPs, drawn on the
    sweep chart of its bytes and listed in the tables)."""
    return (rows["kind"] != "collective").to_numpy(dtype=bool)


def talks(rows: pd.DataFrame) -> np.ndarray:
    """Rows a network roofline places: multi-chip ops with FLOPs and a collective, and a
    network intensity to place them by (a step's or group's total has none: its ops are
    placed, one by one)."""
    talking = ((rows["chips"] > 1) & (rows["network_bytes"] > 0)).to_numpy() & with_flops(rows)
    if "network_intensity" in rows.columns:
        x = rows["network_intensity"].to_numpy(dtype=float, na_value=np.nan)
        talking &= np.isfinite(x)
    return talking


def chart_grids(frame: pd.DataFrame) -> Grids:
    """The grids of `frame` (results and facts side by side)."""
    codes, chips = pd.factorize(frame["hardware"])  # no string per row: named at the end
    y = frame["attainable_flops"].to_numpy(dtype=float, na_value=np.nan)
    flops, talking = with_flops(frame), talks(frame)
    bound, fit = bound_codes_of(frame).astype(np.int8), fits(frame)
    charts = (("roofline", flops, frame["intensity"]),
              ("network", talking, frame["network_intensity"]),
              ("collective", ~flops, None))  # fmt: skip
    bins, derated = [], []
    for chart, keep, x_column in charts:
        if not keep.any():
            continue
        part = {"chart": chart, "hardware": codes[keep], "bound": bound[keep], "fits": fit[keep]}
        if x_column is None:
            ix = iy = np.full(int(keep.sum()), HIDDEN, dtype=np.int64)
        else:
            x = x_column.to_numpy(dtype=float, na_value=np.nan)[keep]
            ix, iy = _bin(x, y[keep])
        bins.append(pd.DataFrame({**part, "ix": ix, "iy": iy}).value_counts(sort=False))
        if chart in RATE and {"compute_efficiency", RATE[chart]} <= set(frame.columns):
            c = frame["compute_efficiency"].to_numpy(dtype=float, na_value=1.0)[keep]
            r = frame[RATE[chart]].to_numpy(dtype=float, na_value=1.0)[keep]
            low = (c < 1) | (r < 1)
            rows = pd.DataFrame({"chart": chart, "hardware": codes[keep][low],
                                 "compute": c[low], "rate": r[low]})  # fmt: skip
            derated.append(rows.value_counts(sort=False))
    named = [_table(t, k, v) for t, k, v in ((bins, KEYS, "scenarios"),
                                              (derated, DERATED_KEYS, "rows"))]  # fmt: skip
    names = np.asarray([str(c) for c in chips], dtype=object)
    for table in named:
        table["hardware"] = (
            names[table["hardware"].to_numpy(dtype=np.int64)]
            if len(table)
            else table["hardware"].astype(object)
        )
    return Grids(*named)


def _table(counts: list[pd.Series], keys: list[str], value: str) -> pd.DataFrame:
    if not counts:
        return pd.DataFrame({**{k: [] for k in keys}, value: []})
    return pd.concat(counts).rename(value).reset_index()


def _bin(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    ok = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    ix = np.full(len(x), HIDDEN, dtype=np.int64)
    iy = ix.copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        ix[ok] = np.floor(np.log10(x[ok]) * GRID_STEPS).astype(np.int64)
        iy[ok] = np.floor(np.log10(y[ok]) * GRID_STEPS).astype(np.int64)
    return ix, iy
