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
KEY_LIMIT = 2**62  # distinct rows _counted can number as one int64 key
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
        rates = np.zeros(int(keep.sum()), dtype=np.int8) if rate is None else rate[keep]
        table = _counted(
            {"hardware": codes[keep], "rate": rates, "value": _floats(frame[column][keep])},
            "rows",
        )
        rate_names = table["rate"] if rate is not None else HBM
        values.append(table.assign(chart=chart, kind=kind, rate=rate_names))
    for chart, keep, x_column in charts:
        if not keep.any():
            continue
        part = {"hardware": codes[keep], "bound": bound[keep], "fits": fit[keep]}
        if x_column is None:
            ix = iy = np.full(int(keep.sum()), HIDDEN, dtype=np.int64)
        else:
            x = x_column.to_numpy(dtype=float, na_value=np.nan)[keep]
            ix, iy = _bin(x, y[keep])
        bins.append(_counted({**part, "ix": ix, "iy": iy}, "scenarios").assign(chart=chart))
        if chart in RATE and {"compute_efficiency", RATE[chart]} <= set(frame.columns):
            c = frame["compute_efficiency"].to_numpy(dtype=float, na_value=1.0)[keep]
            r = frame[RATE[chart]].to_numpy(dtype=float, na_value=1.0)[keep]
            low = (c < 1) | (r < 1)
            rows = {"hardware": codes[keep][low], "compute": c[low], "rate": r[low]}
            derated.append(_counted(rows, "rows").assign(chart=chart))
    names = np.asarray([str(c) for c in chips], dtype=object)
    tables = []
    for counted, keys, value in ((bins, KEYS, "scenarios"), (derated, DERATED_KEYS, "rows"),
                                 (values, VALUE_KEYS, "rows")):  # fmt: skip
        if not counted:
            table = pd.DataFrame({**{k: [] for k in keys}, value: []})
            tables.append(table.assign(hardware=table["hardware"].astype(object)))
            continue
        table = pd.concat(counted, ignore_index=True)[[*keys, value]]
        table["hardware"] = names[table["hardware"].to_numpy(dtype=np.int64)]
        if "kind" in table and not len(table):  # typed as a frame of rows would be
            table = table.astype({"rate": "str"})
        tables.append(table)
    return Grids(*tables)


def _counted(columns: dict[str, np.ndarray], value: str) -> pd.DataFrame:
    """The distinct rows of `columns` (arrays of one length) and how many times each
    occurs (`value`), in order of first appearance: each column factorized to codes, the
    codes joined into one key (mixed radix), the keys counted and read back into codes (no
    tuple or string per row)."""
    coded = [pd.factorize(v, use_na_sentinel=False) for v in columns.values()]
    radix = [max(len(u), 1) for _, u in coded]
    if np.prod(radix, dtype=float) >= KEY_LIMIT:  # too many distinct rows for one key: rare
        frame = pd.DataFrame({k: c for k, (c, _) in zip(columns, coded, strict=True)})
        counts = frame.value_counts(sort=False).reset_index()
        return pd.DataFrame({**{k: np.asarray(u)[counts[k].to_numpy()]
                                for k, (_, u) in zip(columns, coded, strict=True)},
                             value: counts["count"].to_numpy(dtype=np.int64)})  # fmt: skip
    key = np.zeros(len(coded[0][0]), dtype=np.int64)
    for (codes, _), r in zip(coded, radix, strict=True):
        key = key * r + codes
    group, keys = pd.factorize(key)
    out = {}
    for name, (_, uniques), r in reversed(list(zip(columns, coded, radix, strict=True))):
        keys, code = np.divmod(keys, r)
        out[name] = np.asarray(uniques)[code]
    counts = np.bincount(group, minlength=len(out[name])).astype(np.int64)
    return pd.DataFrame({**{k: out[k] for k in columns}, value: counts})


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
