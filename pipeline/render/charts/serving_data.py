"""The data of a serving chart (docs/outputs.md#the-serving-table-and-chart): one serve series'
configurations as lines over B of tokens/s per chip (or, priced, dollars per million tokens)
against tokens/s per user (Summary.serving_curves), in the ranking's order (Summary.serving),
the TPOT target as the tokens/s per user it asks for, and the front of the points meeting
the targets: those no other meeting point beats on both axes."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from pipeline.i18n import _
from pipeline.render import format as fmt
from pipeline.render.charts.labels import chart_text
from pipeline.render.text.serving_table import targets_text, usd

SERVING_CHARTS = 20  # serve series a run draws charts of at most (file order)
SERVING_LINES = 24  # configurations a chart draws at most (the best ranked; the rest counted)
AXES = ("model", "hardware", "dtype", "kv_dtype", "chips")  # what makes a configuration


@dataclass(frozen=True)
class ServingLine:
    """One configuration over B: its label ('1. b200 fp8 ×4'), what its best point says, x
    (tokens/s per user) and y per point in B order, which points meet the targets and fit,
    its colour and line style (indices: a colour per value of the first axis that varies, a
    style per combination of the others)."""

    label: str
    best: str
    x: np.ndarray
    y: np.ndarray
    B: np.ndarray
    meets: np.ndarray
    fits: np.ndarray
    color: int = 0
    style: int = 0


@dataclass(frozen=True)
class ServingData:
    """A serve series' chart: `cost` draws USD per million tokens (lower is better) in place
    of tokens/s per chip (higher is better)."""

    series: str
    title: str
    subtitle: str
    x_label: str
    y_label: str
    lines: tuple[ServingLine, ...]
    cost: bool = False
    target: float | None = None  # tokens/s per user the TPOT target asks for: 1 / tpot_target
    target_label: str = ""
    front_x: np.ndarray = field(
        default_factory=lambda: np.array([])
    )  # the front of the meeting points, by x
    front_y: np.ndarray = field(default_factory=lambda: np.array([]))
    front_B: np.ndarray = field(default_factory=lambda: np.array([]))
    more: str = ""  # the configurations left out (past SERVING_LINES)


def serving_series(serving: pd.DataFrame | None) -> list[str]:
    """The serve series of the serving answer (Summary.serving), in file order."""
    if serving is None or serving.empty:
        return []
    return list(dict.fromkeys(serving["series"].astype(str)))


def priced(curves: pd.DataFrame | None) -> bool:
    """Whether the serving points carry dollars per million tokens (a run with --prices)."""
    return (
        curves is not None
        and "usd_per_million_tokens" in curves.columns
        and bool(curves["usd_per_million_tokens"].notna().any())
    )


def serving_data(
    serving: pd.DataFrame, curves: pd.DataFrame, series: str, cost: bool = False
) -> ServingData:
    """One serve series' chart from Summary.serving and Summary.serving_curves."""
    ranking = serving[serving["series"].astype(str) == series].reset_index(drop=True)
    points = curves[curves["series"].astype(str) == series]
    color, style = _looks(ranking)  # by the ranking: a configuration looks alike on both charts
    ranking = ranking.assign(_color=color, _style=style)
    order = "cost_rank" if cost and "cost_rank" in ranking.columns else "rank"
    if order == "cost_rank":  # the cheapest first, then the misses
        ranking = ranking.sort_values(order, kind="stable", na_position="last")
    shown = ranking.head(SERVING_LINES)
    by_config = points.groupby(points["config"].astype(str), sort=False).indices
    y_column = "usd_per_million_tokens" if cost else "tokens_per_second_per_chip"
    lines = []
    for r in shown.to_dict("records"):
        idx = by_config.get(str(r["config"]), np.array([], dtype=np.intp))
        part = points.iloc[idx].sort_values("B", kind="stable")
        rank = "" if fmt.missing(r[order]) else f"{int(r[order])}. "
        lines.append(
            ServingLine(
                label=chart_text(rank + str(r["config"]), 40),
                best=_best(r, cost),
                x=part["tokens_per_second_per_user"].to_numpy(dtype=float),
                y=part[y_column].to_numpy(dtype=float),
                B=part["B"].to_numpy(dtype=float),
                meets=part["meets_target"].astype("boolean").fillna(True).to_numpy(dtype=bool),
                fits=part["fits"].astype(bool).to_numpy(),
                color=int(r["_color"]),
                style=int(r["_style"]),
            )
        )
    first = ranking.iloc[0]
    tpot_target = first["tpot_target"]
    target = None if fmt.missing(tpot_target) else 1.0 / float(tpot_target)
    front = _front(points, y_column, lower=cost)
    left = len(ranking) - len(shown)
    request = _("{isl} in / {osl} out", isl=fmt.count(first["isl"]), osl=fmt.count(first["osl"]))
    targets = targets_text(first["ttft_target"], first["tpot_target"])
    name = chart_text(series)
    return ServingData(
        series=series,
        title=_("{series}: dollars per million tokens against tokens/s per user", series=name)
        if cost
        else _("{series}: tokens/s per chip against tokens/s per user", series=name),
        subtitle=chart_text(" · ".join(p for p in (request, targets) if p), 140),
        x_label=_("Tokens/s per user (1 / TPOT): faster for each user →"),
        y_label=_("USD per million tokens (cheaper below)")
        if cost
        else _("Tokens/s per chip (more per chip above)"),
        lines=tuple(lines),
        cost=cost,
        target=target,
        target_label=_(
            "TPOT ≤ {t}: {rate} tokens/s per user and more",
            t=fmt.seconds(tpot_target),
            rate=fmt.number(target),
        )
        if target
        else "",  # fmt: skip
        front_x=front["tokens_per_second_per_user"].to_numpy(dtype=float),
        front_y=front[y_column].to_numpy(dtype=float),
        front_B=front["B"].to_numpy(dtype=float),
        more=_("… and {n} more configurations; see the Serving sheet", n=fmt.count(left))
        if left
        else "",
    )


def _best(r: dict, cost: bool) -> str:
    """What a configuration's line says in the legend: its best point, or that it misses."""
    if fmt.missing(r["rank"]):
        return _("misses at every B")
    if cost and not fmt.missing(r.get("usd_per_million_tokens")):
        return chart_text(
            _("{usd} per M tokens at B = {B}", usd=usd(r["usd_per_million_tokens"]),
              B=fmt.count(r["B"])), 60)  # fmt: skip
    return _("{rate}/chip at B = {B}", rate=fmt.number(r["tokens_per_second_per_chip"]),
             B=fmt.count(r["B"]))  # fmt: skip


def _front(points: pd.DataFrame, y: str, lower: bool) -> pd.DataFrame:
    """The points meeting the targets (and fitting) that no other such point beats on both
    axes: more tokens/s per user and more per chip (or, `lower`, fewer dollars); by x."""
    ok = points["meets_target"].astype("boolean").fillna(True).to_numpy(dtype=bool)
    ok &= points["fits"].astype(bool).to_numpy()
    ok &= np.isfinite(points[y].to_numpy(dtype=float))
    mine = points[ok]
    if mine.empty:
        return mine
    x = mine["tokens_per_second_per_user"].to_numpy(dtype=float)
    v = mine[y].to_numpy(dtype=float)
    v = -v if lower else v
    order = np.lexsort((-v, -x))  # by x, the fastest for each user first; ties: best y first
    best_so_far = np.maximum.accumulate(v[order])
    keep = np.r_[True, v[order][1:] > best_so_far[:-1]]
    return mine.iloc[np.sort(order[keep])].sort_values("tokens_per_second_per_user")


def _looks(ranking: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Colour and style indices per configuration: the first varying axis of AXES after the
    model (the chip, when several) picks the colour, the others together the style."""
    axes = [a for a in AXES if a in ranking.columns]
    varying = [a for a in axes if ranking[a].astype(str).nunique() > 1]
    if "kv_dtype" in varying and "dtype" in varying:  # one precision said twice
        pairs = ranking[["dtype", "kv_dtype"]].astype(str)
        if pairs["dtype"].nunique() == len(pairs.drop_duplicates()):
            varying.remove("kv_dtype")
    lead = [a for a in varying if a != "model"][:1] or varying[:1] or ["hardware"]
    color = pd.factorize(ranking[lead[0]].astype(str).to_numpy())[0]
    rest = [a for a in varying if a != lead[0]]
    if not rest:
        return color, np.zeros(len(ranking), dtype=np.int64)
    style = pd.factorize(pd.MultiIndex.from_frame(ranking[rest].astype(str)))[0]
    return color, style
