"""The rooflines of scenarios no one process holds (the Dask engine, docs/outputs.md#charts):
each partition bins its points on one fixed log grid (GRID_STEPS bins per decade, the same
for every partition, so the grids add up), per chart, chip, bound and fit, and counts its
derated rows per efficiency pair; the client adds the partitions' grids and draws each
chip's roofline from them: the density of every scenario, its counts exact."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from pipeline.model.roofline import BOUNDS
from pipeline.render.charts.data import (
    SCATTER_LIMIT,
    Points,
    RooflineData,
    bound_codes,
    chart_title,
    fits_of,
    talks,
    with_flops,
)

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


def chart_grids(frame: pd.DataFrame) -> Grids:
    """The grids of `frame` (results and facts side by side, as charts.data.chart_frame)."""
    codes, chips = pd.factorize(frame["hardware"])  # no string per row: named at the end
    y = frame["attainable_flops"].to_numpy(dtype=float, na_value=np.nan)
    flops, talking = with_flops(frame), talks(frame)
    charts = (("roofline", flops, frame["intensity"]),
              ("network", talking, frame["network_intensity"]),
              ("collective", ~flops, None))  # fmt: skip
    bins, derated = [], []
    for chart, keep, x_column in charts:
        if not keep.any():
            continue
        part = {"chart": chart, "hardware": codes[keep], "bound": bound_codes(frame)[keep],
                "fits": fits_of(frame)[keep]}  # fmt: skip
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
    for table in named:
        table["hardware"] = (
            np.asarray([str(c) for c in chips], dtype=object)[
                table["hardware"].to_numpy(dtype=np.int64)
            ]
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


def with_grid(data: RooflineData, grids: Grids) -> RooflineData:
    """`data` (a chart drawn from a sample of its chip's rows) with every scenario's counts,
    and, past SCATTER_LIMIT points, their density from the grid instead of the sample."""
    bins = grids.bins[
        (grids.bins["chart"] == data.kind) & (grids.bins["hardware"] == data.hardware)
    ]
    n = bins["scenarios"].to_numpy(dtype=np.int64)
    drawn = bins["ix"].to_numpy() != HIDDEN
    bound = bins["bound"].to_numpy(dtype=np.int8)
    fits = bins["fits"].to_numpy(dtype=bool)
    counts = {b: int(n[bound == k].sum()) for k, b in enumerate(BOUNDS)}
    points = data.points
    dense = int(n[drawn].sum()) > SCATTER_LIMIT
    if dense:
        center = lambda i: 10 ** ((i.astype(float) + 0.5) / GRID_STEPS)  # noqa: E731
        points = Points(center(bins["ix"].to_numpy()[drawn]), center(bins["iy"].to_numpy()[drawn]),
                        bound[drawn], fits[drawn], np.zeros(int(drawn.sum()), dtype=bool),
                        int(n[~drawn].sum()), weight=n[drawn])  # fmt: skip
    collective = grids.bins[(grids.bins["chart"] == "collective")
                            & (grids.bins["hardware"] == data.hardware)]  # fmt: skip
    derated = grids.derated[(grids.derated["chart"] == data.kind)
                            & (grids.derated["hardware"] == data.hardware)]  # fmt: skip
    rows = derated.groupby(["compute", "rate"])["rows"].sum()
    roofs = tuple(replace(d, rows=int(rows.get(d.efficiencies, 0))) for d in data.derated)
    return replace(
        data,
        title=chart_title(data.kind, data.hardware, int(n.sum())),
        points=points,
        counts=counts,
        not_fitting=int(n[~fits].sum()),
        labels=() if dense else data.labels,
        trails=() if dense else data.trails,
        derated=roofs,
        collectives=int(collective["scenarios"].sum()) if data.kind == "roofline" else 0,
    )
