"""What each chart draws, as plain dataclasses built from the results (pure, no matplotlib):
the HBM roofline and the network roofline of a chip, the sweep charts (the book's Q3 figure),
and the summary of bounds per hardware (docs/outputs.md#charts)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipeline.i18n import _
from pipeline.model.roofline import BOUNDS
from pipeline.model.roofs import Peak, Roofs
from pipeline.render import format as fmt
from pipeline.render.charts.labels import chart_title

LABEL_LIMIT = 20  # at most this many labelled items (points + sweep series) get name labels
SCATTER_LIMIT = 5_000  # above this many points a chart shows binned density instead
SWEEP_LINES_PER_CHART = 10  # more lines than this go onto further pages of the same sweep


@dataclass(frozen=True)
class Ceiling(Peak):
    """A compute roof as a chart draws it: the model's peak (model.roofs.Peak), labelled."""

    @property
    def label(self) -> str:
        return _("{family} peak {rate}", family=self.family, rate=fmt.flop_rate(self.peak))


@dataclass(frozen=True)
class Slope:
    bandwidth: float  # bytes/s
    label: str


@dataclass(frozen=True)
class Ridge:
    family: str
    x: float  # intensity where the slope meets the ceiling (model.roofs.Ridge)
    y: float
    slope: int  # which slope


@dataclass(frozen=True)
class DeratedRoof:
    """The roof of rows that reach only a fraction of the chip's rates (drawn dashed): the
    slope at e x bandwidth, each ceiling at e x its peak."""

    bandwidth: float
    peaks: tuple[float, ...]
    label: str
    rows: int
    efficiencies: tuple[float, float] = (1.0, 1.0)  # (compute, the bandwidth's)
    ridges: tuple[float, ...] = ()  # where the slope meets each peak (model.roofs.Derated)


@dataclass(frozen=True)
class Points:
    """Scenario points: position, bound code (index into BOUNDS), fits, part of a sweep."""

    x: np.ndarray
    y: np.ndarray
    bound: np.ndarray
    fits: np.ndarray
    in_sweep: np.ndarray
    hidden: int  # rows not drawn (no FLOPs or no bytes)
    weight: np.ndarray | None = None  # scenarios per point: a grid's bins (charts.grid)


@dataclass(frozen=True)
class Label:
    text: str
    x: float
    y: float


@dataclass(frozen=True)
class Trail:
    """A sweep series drawn through its points on a roofline."""

    text: str
    x: np.ndarray
    y: np.ndarray


@dataclass(frozen=True)
class RooflineData:
    """An HBM roofline (kind "roofline") or a network roofline (kind "network") of one chip."""

    kind: str
    hardware: str
    title: str
    subtitle: str
    x_label: str
    y_label: str
    slopes: tuple[Slope, ...]
    ceilings: tuple[Ceiling, ...]
    ridges: tuple[Ridge, ...]
    points: Points
    counts: Mapping[str, int]
    not_fitting: int
    overridden: int  # rows with their own peak/HBM/link numbers, drawn at their own values
    labels: tuple[Label, ...]
    trails: tuple[Trail, ...]
    derated: tuple[DeratedRoof, ...] = ()
    collectives: int = 0  # collective rows of the chip, not on a roofline (no FLOPs)


@dataclass(frozen=True)
class SweepLine:
    series: str
    label: str
    x: np.ndarray
    y: np.ndarray
    bound: np.ndarray
    fits: np.ndarray
    critical: float | None  # the first swept value at which the line is compute-bound
    critical_y: float | None
    reach: str = ""  # what the legend says of the line, when not the compute-bound value
    detail: str = ""  # the label's end in brackets (the line's other dims), kept when cut


@dataclass(frozen=True)
class SweepData:
    """Attainable FLOP/s against one swept dim of one chip, a line per series; or, for a
    collective's swept `bytes` (measure "time"), its time, each line's knee marked where it
    stops being latency-bound."""

    hardware: str
    dim: str
    title: str
    subtitle: str
    x_label: str
    y_label: str
    log_x: bool
    ceilings: tuple[Ceiling, ...]
    lines: tuple[SweepLine, ...]
    measure: str = "flops"  # "flops": attainable FLOP/s; "time": seconds (log-log)


# ---------------------------------------------------------------- helpers


def floats(column: pd.Series) -> np.ndarray:
    """A numeric column (also Int64 with missing values) as floats, NaN where missing."""
    return pd.to_numeric(column, errors="coerce").to_numpy(dtype=float, na_value=np.nan)


def ceilings_of(peaks: tuple[Peak, ...]) -> tuple[Ceiling, ...]:
    """The model's peaks (Summary.roofs, model.roofs) as ceilings, lowest first."""
    return tuple(Ceiling(p.families, p.peak, p.source) for p in peaks)


def _drawn(roofs: Roofs, what: str) -> tuple[tuple, tuple, tuple]:
    """The model's roofs (model.roofs) as a chart draws them: ceilings, ridges and derated
    roofs, labelled; `what` names the derated bandwidth ("HBM", "link")."""
    ceilings = ceilings_of(roofs.peaks)
    ridges = tuple(Ridge(r.family, r.intensity, r.peak, r.slope) for r in roofs.ridges)
    derated = tuple(
        DeratedRoof(
            bandwidth=d.bandwidth,
            peaks=d.peaks,
            label=_(
                "derated: compute {compute}, {what} {rate}",
                compute=fmt.percent(d.compute),
                what=what,
                rate=fmt.percent(d.rate),
            ),  # fmt: skip
            rows=d.rows,
            efficiencies=(d.compute, d.rate),
            ridges=d.ridges,
        )
        for d in roofs.derated
    )
    return ceilings, ridges, derated


def _points(frame: pd.DataFrame, x: np.ndarray) -> Points:
    y = frame["attainable_flops"].to_numpy(dtype=float)
    ok = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    in_sweep = frame["in_sweep"].to_numpy(dtype=bool)
    bound, fits = frame["bound_code"].to_numpy(), frame["fits_hbm"].to_numpy(dtype=bool)
    return Points(x[ok], y[ok], bound[ok], fits[ok], in_sweep[ok], int((~ok).sum()))


def _counts(frame: pd.DataFrame) -> dict[str, int]:
    counts = frame["bound"].value_counts()
    return {b: int(counts.get(b, 0)) for b in BOUNDS}


def _trail_names(frame: pd.DataFrame) -> np.ndarray:
    """Each row's trail: its series, and for a fleet series over dtypes or chip counts its
    fleet point ('mlp (fp8)', 'tp (chips=4)'), so each point is one line through its own
    roofs instead of one zig-zagging between them (a chart is one chip's)."""
    series = frame["series"].astype(str).to_numpy(dtype=object)
    if "swept" not in frame:
        return series
    codes, kinds = pd.factorize(frame["swept"].to_numpy(dtype=object))  # a few tuples
    by_dtype = np.array([("dtype" in k) for k in kinds] + [False], dtype=bool)[codes]
    by_chips = np.array([("chips" in k) for k in kinds] + [False], dtype=bool)[codes]
    names = series.copy()
    if by_dtype.any():
        dtype = frame["compute_dtype"].astype(str).to_numpy(dtype=object)
        names[by_dtype] = names[by_dtype] + " (" + dtype[by_dtype] + ")"
    if by_chips.any():
        chips = frame["chips"].to_numpy(dtype=float).astype(np.int64).astype(str).astype(object)
        names[by_chips] = names[by_chips] + " (chips=" + chips[by_chips] + ")"
    return names


def _labels(frame: pd.DataFrame, x: np.ndarray) -> tuple[tuple[Label, ...], tuple[Trail, ...]]:
    """Name labels for single rows and one trail per sweep series (when few enough), a fleet
    series' dtypes and chip counts each a trail of its own (_trail_names)."""
    in_sweep = frame["in_sweep"].to_numpy(dtype=bool)
    y = frame["attainable_flops"].to_numpy(dtype=float)
    ok = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    if int(ok.sum()) > SCATTER_LIMIT:
        return (), ()
    name = frame["name"].astype(str).to_numpy(dtype=object)
    series = _trail_names(frame)
    single = ~in_sweep & ok
    sweep_series = pd.unique(series[in_sweep & ok])
    if int(single.sum()) + len(sweep_series) > LABEL_LIMIT:
        return (), ()
    labels = tuple(
        Label(str(n), float(a), float(b))
        for n, a, b in zip(name[single], x[single], y[single], strict=True)
    )
    trails = []
    for s in sweep_series:
        idx = np.flatnonzero((series == s) & in_sweep & ok)
        order = np.argsort(x[idx], kind="stable")
        trails.append(Trail(str(s), x[idx][order], y[idx][order]))
    return labels, tuple(trails)


def subtitle(chip: dict, ceilings: tuple[Ceiling, ...], bandwidth_text: str) -> str:
    parts = [bandwidth_text]
    if chip.get("hbm_capacity"):
        parts.append(_("{size} HBM", size=fmt.size(chip["hbm_capacity"])))
    parts += [f"{c.family} {fmt.flop_rate(c.peak)}" for c in ceilings]
    return " · ".join(parts)


# ---------------------------------------------------------------- the charts


def roofline_data(
    rows: pd.DataFrame, chip: Mapping, roofs: Roofs, overridden: int = 0
) -> RooflineData:
    """The HBM roofline of one chip's rows (summary.grids.chart_frame) against its roofs
    (Summary.roofs[chip].hbm): slope, ceilings, ridges, points by bound."""
    name = str(chip["name"])
    keep = rows["has_flops"].to_numpy(dtype=bool)
    collectives = int((~keep).sum())
    rows = rows[keep]
    ((_link, bw),) = roofs.slopes
    ceilings, ridges, derated = _drawn(roofs, "HBM")
    x = rows["intensity"].to_numpy(dtype=float)
    labels, trails = _labels(rows, x)
    return RooflineData(
        kind="roofline",
        hardware=name,
        title=chart_title("roofline", name, len(rows)),
        subtitle=subtitle(chip, ceilings, f"HBM {fmt.bandwidth(bw)}"),
        x_label=_("Arithmetic intensity (FLOP/byte)"),
        y_label=_("Attainable FLOP/s (per chip)"),
        slopes=(Slope(bw, f"HBM {fmt.bandwidth(bw)}"),),
        ceilings=ceilings,
        ridges=ridges,
        points=_points(rows, x),
        counts=_counts(rows),
        not_fitting=int((~rows["fits_hbm"].to_numpy(dtype=bool)).sum()),
        overridden=overridden,
        labels=labels,
        trails=trails,
        derated=derated,
        collectives=collectives,
    )


def network_data(rows: pd.DataFrame, chip: Mapping, roofs: Roofs | None) -> RooflineData | None:
    """The network roofline of one chip's communicating rows (`talks`) against its roofs
    (Summary.roofs[chip].network), or None when there are none.

    x = per-chip FLOPs / network bytes (the array each chip contributes to the collective);
    the slope is the one-way link bandwidth and the ridge peak / one-way bandwidth (book,
    "Network communication rooflines": D/2 > 1.97e14 / 4.5e10 = 4377 on v5e). That is the
    exact boundary for a two-chip AllReduce on a ring; on a switch with N > 2 chips an
    AllReduce takes 2(N-1)/N V/W, so points sit somewhat right of where the line would put
    them. Points are drawn at their own attainable FLOP/s (HBM limits included).
    """
    name = str(chip["name"])
    rows = rows[rows["talks"].to_numpy(dtype=bool)]
    if rows.empty or roofs is None:
        return None
    slopes = [
        Slope(bw, _("{link} {bandwidth} one-way", link=link.upper(), bandwidth=fmt.bandwidth(bw)))
        for link, bw in roofs.slopes
    ]
    ceilings, ridges, derated = _drawn(roofs, _("link"))
    x = rows["network_intensity"].to_numpy(dtype=float)
    labels, trails = _labels(rows, x)
    return RooflineData(
        kind="network",
        hardware=name,
        title=chart_title("network", name, len(rows)),
        subtitle=subtitle(chip, ceilings, " · ".join(s.label for s in slopes)),
        x_label=_("Network intensity (FLOP per byte sent between chips)"),
        y_label=_("Attainable FLOP/s (per chip)"),
        slopes=tuple(slopes),
        ceilings=ceilings,
        ridges=ridges,
        points=_points(rows, x),
        counts=_counts(rows),
        not_fitting=int((~rows["fits_hbm"].to_numpy(dtype=bool)).sum()),
        overridden=0,
        labels=labels,
        trails=trails,
        derated=derated,
    )
