"""A roofline's facts from the whole run, on either engine (docs/outputs.md#charts): a chart
drawn from its chip's rows (on the Dask engine, a sample of them) given every scenario's
counts and, past SCATTER_LIMIT points, their density from the run's grids (Summary.grids,
summary.grids: binned by the one partial, or every partition's merged)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from pipeline.model.roofline import BOUNDS
from pipeline.render.charts.data import SCATTER_LIMIT, Points, RooflineData, chart_title
from pipeline.summary.grids import GRID_STEPS, HIDDEN, Grids

__all__ = ["Grids", "with_grid"]


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
