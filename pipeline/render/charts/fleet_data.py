"""The data of a fleet chart (docs/outputs.md#the-fleet-answer): one fleet series' points
(chip x precision x chip count) in ranking order, each with its curve of time along the
series' sweep (Summary.fleet_curves) and the ranking's chosen points on it; a series that
sweeps only its fleet axes has no curves and is drawn as bars of its one ranking."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipeline.i18n import _
from pipeline.render import format as fmt
from pipeline.render.charts.labels import chart_text
from pipeline.render.text.fleet import at_text, point_labels, sentence
from pipeline.summary.fleet import POINT

FLEET_CHARTS = 20  # fleet charts a run draws at most (the first fleet series, file order)
FLEET_LINES = 30  # fleet points a chart draws at most (the fastest; the rest counted)


@dataclass(frozen=True)
class FleetPoint:
    """One fleet point at the point its ranking leads with (the critical batch, else the
    first): its rank (1 the fastest), time, ratio to the fastest, bound, whether it fits, and
    its colour and line style (indices: a colour per value of the first axis that varies,
    a style per combination of the others)."""

    label: str
    rank: int
    t_lower: float
    ratio: float
    bound: str
    fits: bool
    color: int = 0
    style: int = 0


@dataclass(frozen=True)
class FleetLine:
    """The curve of `points[point]`: time along the swept dim, and where the ranking's chosen
    points sit on it (`marks`, the chosen points' names; `mark_bound` their bounds)."""

    point: int
    x: np.ndarray
    y: np.ndarray
    mark_x: np.ndarray
    mark_y: np.ndarray
    mark_bound: tuple[str, ...]
    mark_fits: np.ndarray
    marks: tuple[str, ...]


@dataclass(frozen=True)
class FleetData:
    """A fleet series' chart: lines of time against its swept dim (`lines`), or with none,
    bars of its ranking (`points`, fastest first, always given)."""

    series: str
    title: str
    subtitle: str
    dim: str  # the swept dim of the lines ('' for bars)
    x_label: str
    y_label: str
    points: tuple[FleetPoint, ...]
    lines: tuple[FleetLine, ...] = ()
    guide: float | None = None  # the x the ranking leads with (its critical batch point)
    guide_label: str = ""
    more: str = ""  # the points left out (past FLEET_LINES), said under the legend


def fleet_series(fleet: pd.DataFrame) -> list[str]:
    """The fleet series of a ranking (Summary.fleet), in file order."""
    return list(dict.fromkeys(fleet["series"].astype(str))) if len(fleet) else []


def fleet_data(fleet: pd.DataFrame, curves: pd.DataFrame, series: str) -> FleetData:
    """One fleet series' chart from Summary.fleet and Summary.fleet_curves."""
    ranking = fleet[fleet["series"].astype(str) == series].reset_index(drop=True)
    ranking = ranking.assign(label=point_labels(ranking))
    groups = list(ranking.groupby(["point", "at"], sort=False))
    lead = next((k for k, ((p, _), _) in enumerate(groups) if p == "critical batch"), 0)
    whole = groups[lead][1].sort_values("rank", kind="stable")
    lead_group, left_out = _drawn(whole)
    keys = [tuple(k) for k in lead_group[POINT].astype(str).to_numpy()]
    color, style = _looks(lead_group)
    points = tuple(
        FleetPoint(
            label=chart_text(r.label or series, 40),
            rank=int(r.rank),
            t_lower=float(r.t_lower),
            ratio=float(r.ratio),
            bound=str(r.bound),
            fits=bool(r.fits),
            color=int(c),
            style=int(s),
        )
        for r, c, s in zip(lead_group.itertuples(index=False), color, style, strict=True)
    )
    mine = curves[curves["series"].astype(str) == series] if len(curves) else curves
    compared = _compared(whole)
    lead_at = str(groups[lead][0][1])
    base = {
        "series": series,
        "subtitle": sentence(whole),
        "y_label": _("Time per step (t_lower)"),
        "points": points,
        "more": _("… and {n} more fleet points; see the Fleet sheet", n=fmt.count(left_out))
        if left_out
        else "",
    }
    if mine.empty:
        name = chart_text(series)
        return FleetData(
            title=_(
                "{series}: {compared} ranked by time at {at}",
                series=name,
                compared=compared,
                at=at_text(lead_at),
            )
            if lead_at
            else _("{series}: {compared} ranked by time", series=name, compared=compared),
            dim="",
            x_label=_("Time per step (t_lower)"),
            **base,
        )
    dim = str(mine["line_dim"].iloc[0])
    by_point = mine.groupby([mine[c].astype(str) for c in POINT], sort=False).indices
    lines = []
    for k, key in enumerate(keys):  # FLEET_LINES fleet points at most
        idx = by_point.get(key)
        if idx is None:
            continue
        part = mine.iloc[idx]
        x = part["line_value"].to_numpy(dtype=float)
        order = np.argsort(x, kind="stable")
        lines.append(_line(k, x[order], part["t_lower"].to_numpy(dtype=float)[order],
                           ranking, key, dim))  # fmt: skip
    guide = _value(lead_at, dim) if groups[lead][0][0] == "critical batch" else None
    shown = fmt.size(guide) if dim == "bytes" else fmt.count(guide)
    return FleetData(
        title=_(
            "{series}: {compared} compared as {dim} grows",
            series=chart_text(series),
            compared=compared,
            dim=dim,
        ),
        dim=dim,
        x_label=_("{dim} (swept dimension)", dim=dim) if dim != "bytes" else _("bytes (swept)"),
        lines=tuple(lines),
        guide=guide,
        guide_label=_("{dim} = {value}: critical batch, ranked here", dim=dim, value=shown)
        if guide
        else "",
        **base,
    )


def _line(k: int, x, y, ranking: pd.DataFrame, key: tuple, dim: str) -> FleetLine:
    """Point k's curve, with the ranking's chosen points that lie on it (a chosen point of a
    sweep of several dims, its last, may be off the line along `dim`)."""
    own = ranking[(ranking[POINT].astype(str).to_numpy() == np.array(key)).all(axis=1)]
    at = np.array([_value(str(a), dim) for a in own["at"]], dtype=float)
    t = own["t_lower"].to_numpy(dtype=float)
    hit = np.isin(at, x)
    on = hit & np.isclose(t, np.interp(at, x, y), rtol=1e-9)
    return FleetLine(
        point=k,
        x=x,
        y=y,
        mark_x=at[on],
        mark_y=t[on],
        mark_bound=tuple(own["bound"].astype(str).to_numpy()[on]),
        mark_fits=own["fits"].to_numpy(dtype=bool)[on],
        marks=tuple(own["point"].astype(str).to_numpy()[on]),
    )


def _drawn(lead: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """The points a chart draws of its ranking (fastest first): the first FLEET_LINES, the
    fastest that fits in HBM among them (the answer) when it is further down; and how many
    are left out."""
    if len(lead) <= FLEET_LINES:
        return lead, 0
    shown = lead.iloc[:FLEET_LINES]
    fitting = np.flatnonzero(lead["fits"].to_numpy(dtype=bool))
    if len(fitting) and fitting[0] >= FLEET_LINES:
        shown = pd.concat([lead.iloc[: FLEET_LINES - 1], lead.iloc[fitting[:1]]])
    return shown, len(lead) - len(shown)


def _value(at: str, dim: str) -> float:
    """The value of `dim` in a chosen point's 'B=256, D=8192' (NaN when it has none)."""
    for part in filter(None, at.split(", ")):
        name, _, value = part.partition("=")
        if name == dim:
            return float(value)
    return float("nan")


def _varying(group: pd.DataFrame) -> list[str]:
    return [c for c in POINT if group[c].nunique() > 1]


def _looks(group: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Colour and style indices per ranked point: the first varying axis picks the colour,
    the others together the style (decode_fp4: a colour per chip, a style per precision);
    one axis alone, the colours in ranking order."""
    varying = _varying(group) or ["hardware"]
    color = pd.factorize(group[varying[0]].to_numpy())[0]
    rest = varying[1:]
    if not rest:
        return color, np.zeros(len(group), dtype=np.int64)
    style = pd.factorize(pd.MultiIndex.from_frame(group[rest]))[0]
    return color, style


def _compared(group: pd.DataFrame) -> str:
    """What a series compares, from what varies: '12 chips', '4 chips × 3 precisions'."""
    parts = [_counted(c, int(group[c].nunique())) for c in _varying(group)]
    if parts:
        return " × ".join(parts)
    n = len(group)
    return _("{n} fleet point", n=fmt.count(n)) if n == 1 else _("{n} fleet points", n=fmt.count(n))


def _counted(axis: str, n: int) -> str:
    """A fleet point's varying part counted: '12 chips', '1 precision', '3 chip counts'."""
    if n == 1:
        return {
            "model": _("{n} model", n=n),
            "hardware": _("{n} chip", n=n),
            "dtype": _("{n} precision", n=n),
            "chips": _("{n} chip count", n=n),
        }[axis]
    return {
        "model": _("{n} models", n=n),
        "hardware": _("{n} chips", n=n),
        "dtype": _("{n} precisions", n=n),
        "chips": _("{n} chip counts", n=n),
    }[axis]
