"""What the charts read of the rows, as a partial like every statistic (summary.partial),
docs/outputs.md#charts: a frame's points counted on one fixed log grid (GRID_STEPS bins per
decade, the same for every frame, so grids add up) per chart, chip, bound and fit, its
derated rows per efficiency pair and the rates its rows are drawn against (the peaks, HBM and
link bandwidths: model.roofs.chip_roofs makes Summary.roofs of them). A run whose charts are
drawn from a sample of its rows (the Dask engine's) draws every scenario's density, exact
counts and roofs from them (render.charts.grid). `chart_frame`: the rows a chart draws, with
what each row is to a chart (its bound's code, whether it fits, which roofline places it)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipeline.model.ops import FLEET
from pipeline.model.roofs import HBM, peak_families
from pipeline.summary.codes import bound_codes_of, fits

GRID_STEPS = 64  # bins per decade of the fine grid: 4x finer than a density chart's bins
HIDDEN = np.iinfo(np.int32).min  # the bin of a row not drawn (no bytes or no FLOPs)
KEYS = ["chart", "hardware", "bound", "fits", "ix", "iy"]
DERATED_KEYS = ["chart", "hardware", "compute", "rate"]
VALUE_KEYS = ["chart", "hardware", "kind", "rate", "value"]  # kind: "peak", HBM or "link"
RATE = {"roofline": "hbm_efficiency", "network": "network_efficiency"}


@dataclass(frozen=True)
class Grids:
    """The binned points (KEYS and `scenarios`), derated rows (DERATED_KEYS, `rows`) and
    rates (VALUE_KEYS, `rows`: each peak family, HBM and link with the rows' own values) of
    every chart; "collective" rows are counted per chip (not drawn: no FLOPs)."""

    bins: pd.DataFrame
    derated: pd.DataFrame
    values: pd.DataFrame

    def __add__(self, other: Grids) -> Grids:
        return Grids(_sum(self.bins, other.bins, KEYS, "scenarios"),
                     _sum(self.derated, other.derated, DERATED_KEYS, "rows"),
                     _sum(self.values, other.values, VALUE_KEYS, "rows"))  # fmt: skip


def _sum(a: pd.DataFrame, b: pd.DataFrame, keys: list[str], value: str) -> pd.DataFrame:
    both = pd.concat([a, b], ignore_index=True)
    return both.groupby(keys, as_index=False, sort=False, dropna=False)[value].sum()


# the result columns the chart data reads (sweep charts also read their dim)
COLUMNS = (
    "name", "series", "hardware", "einsum", "compute_dtype", "peak_flops", "hbm_bandwidth",
    "intensity", "attainable_flops", "bound", "fits", "chips", "network_bytes",
    "flops_per_chip", "link", "link_bandwidth", "collective", "t_network", "compute_efficiency",
    "hbm_efficiency", "network_efficiency", "critical_batch",
)  # fmt: skip
# the facts the chart data reads beside those columns (Record.facts), and what each row is to
# a chart (chart_frame): its bound as an index into BOUNDS, whether it fits HBM (unknown: it
# does), whether a roofline places it (has_flops) and a network roofline (talks)
FACT_COLUMNS = (
    "kind", "in_sweep", "in_step", "swept", "network_intensity", "latency_floor",
    "latency_knee", "bound_code", "fits_hbm", "has_flops", "talks", "peak_family",
)  # fmt: skip


def chart_frame(record) -> pd.DataFrame:
    """The narrow frame every chart reads, of a record (pipeline.record.Record): the result
    columns it draws (COLUMNS, the dims and the fleet axes a sweep's lines are split by) and,
    row for row, the facts (FACT_COLUMNS): nothing a chart must work out again."""
    results, facts = record.results, record.facts
    columns = [c for c in dict.fromkeys((*COLUMNS, *FLEET, *record.dims)) if c in results]
    facts = facts[[c for c in FACT_COLUMNS if c in facts.columns]]
    frame = pd.concat([results[columns], facts], axis=1)
    return frame.assign(
        bound_code=bound_codes_of(frame).astype(np.int8),
        fits_hbm=fits(frame),
        has_flops=with_flops(frame),
        talks=talks(frame),
        peak_family=peak_families(frame["compute_dtype"]),
    )[[*columns, *FACT_COLUMNS]]


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
    bins, derated, values = [], [], []
    family = peak_families(frame["compute_dtype"])
    sends = talking & (frame["collective"] != "").to_numpy(dtype=bool)
    link = frame["link"].to_numpy(dtype=object)
    named = family != ""
    for chart, kind, keep, rate, column in (
        ("roofline", "peak", flops & named, family, "peak_flops"),
        ("roofline", HBM, flops, None, "hbm_bandwidth"),
        ("network", "peak", talking & named, family, "peak_flops"),
        ("network", "link", sends, link, "link_bandwidth"),
    ):
        rows = pd.DataFrame({"chart": chart, "hardware": codes[keep], "kind": kind,
                             "rate": HBM if rate is None else rate[keep].astype(str),
                             "value": _floats(frame[column][keep])})  # fmt: skip
        values.append(rows.value_counts(sort=False, dropna=False))
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
                                              (derated, DERATED_KEYS, "rows"),
                                              (values, VALUE_KEYS, "rows"))]  # fmt: skip
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


def _floats(column: pd.Series) -> np.ndarray:
    return pd.to_numeric(column, errors="coerce").to_numpy(dtype=float, na_value=np.nan)


def _bin(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    ok = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    ix = np.full(len(x), HIDDEN, dtype=np.int64)
    iy = ix.copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        ix[ok] = np.floor(np.log10(x[ok]) * GRID_STEPS).astype(np.int64)
        iy[ok] = np.floor(np.log10(y[ok]) * GRID_STEPS).astype(np.int64)
    return ix, iy
