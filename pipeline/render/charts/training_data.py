"""The data of a training chart (docs/outputs.md#training): one train series' step time against
the chip count (or the tokens a step, whichever the series sweeps), a line per configuration
(model, chip, precision, parallelism without the degrees that grow with the chips), from
Summary.training, the lines in the ranking's order; and on each line the compute-bound
threshold: the chip count (tokens a step) at which the tokens a chip equal the batch a chip
its communication needs to hide behind compute (critical_tokens_per_chip)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipeline.i18n import _
from pipeline.render import format as fmt
from pipeline.render.charts.labels import chart_text
from pipeline.render.text.training import days

TRAINING_CHARTS = 20  # train series a run draws charts of at most (file order)
TRAINING_LINES = 16  # configurations a chart draws at most (the best ranked; the rest counted)
LINE = ["model", "hardware", "dtype", "scheme"]  # what makes a line, besides the other axis


@dataclass(frozen=True)
class TrainingLine:
    """One configuration over the swept axis: its label, what its best point says, x and the
    step time per point in x order, which points have the compute-bound batch and which fit;
    `threshold` the x where its tokens a chip reach the compute-bound batch (None: no
    communication to hide); colour and style indices."""

    label: str
    best: str
    x: np.ndarray
    y: np.ndarray
    compute_bound: np.ndarray
    fits: np.ndarray
    threshold: float | None = None
    color: int = 0
    style: int = 0


@dataclass(frozen=True)
class TrainingData:
    """A train series' chart; `axis` 'chips' or 'tokens' (what x is)."""

    series: str
    title: str
    subtitle: str
    axis: str
    x_label: str
    y_label: str
    lines: tuple[TrainingLine, ...]
    more: str = ""  # the configurations left out (past TRAINING_LINES)


def swept_axis(part: pd.DataFrame) -> str | None:
    """'chips' when a series' rows differ in chip count, else 'tokens' when they differ in
    tokens a step, else None (nothing to draw a line over)."""
    for axis in ("chips", "tokens"):
        if part[axis].nunique() > 1:
            return axis
    return None


def training_series(training: pd.DataFrame | None) -> list[str]:
    """The train series of Summary.training that sweep chips or tokens a step, in file order."""
    if training is None or training.empty:
        return []
    by = training.groupby(training["series"], sort=False)  # in file order
    swept = (by["chips"].nunique() > 1) | (by["tokens"].nunique() > 1)
    return [str(name) for name in swept.index[swept.to_numpy()]]


def training_title(training: pd.DataFrame, series: str) -> str:
    """A train series' chart title: 'NAME: step time against chips' (or tokens a step)."""
    part = training[training["series"].astype(str) == series]
    name = chart_text(series)
    if (swept_axis(part) or "chips") == "chips":
        return _("{series}: step time against chips", series=name)
    return _("{series}: step time against tokens a step", series=name)


def training_data(training: pd.DataFrame, series: str) -> TrainingData:
    """One train series' chart from Summary.training."""
    part = training[training["series"].astype(str) == series].reset_index(drop=True)
    axis = swept_axis(part) or "chips"
    other = "tokens" if axis == "chips" else "chips"
    keys = LINE + ([other] if part[other].nunique() > 1 else [])
    line, first = _codes(part, keys)  # in the ranking's order: the best line first
    color, style = _looks(part.iloc[first], keys)
    several = part["model"].nunique() > 1
    lines = []
    for k, at in enumerate(first[:TRAINING_LINES]):
        mine = part[line == k].sort_values(axis, kind="stable")
        r = part.iloc[at]
        x = mine[axis].to_numpy(dtype=float)
        lines.append(
            TrainingLine(
                label=chart_text(_label(r, several, other if other in keys else None), 44),
                best=_best(r, axis),
                x=x,
                y=mine["step_time"].to_numpy(dtype=float),
                compute_bound=mine["compute_bound_batch"].astype("boolean").fillna(True)
                .to_numpy(dtype=bool),
                fits=mine["fits"].astype(bool).to_numpy(),
                threshold=_threshold(mine, axis),
                color=int(color[k]),
                style=int(style[k]),
            )
        )  # fmt: skip
    first_row = part.iloc[0]
    about = [str(first_row["model"])] if first_row["model"] and not several else []
    if not fmt.missing(first_row["train_tokens"]) and part["train_tokens"].nunique() == 1:
        about.append(_("{tokens} tokens", tokens=fmt.parameters(first_row["train_tokens"])))
    if axis == "chips" and part["tokens"].nunique() == 1:
        about.append(_("{tokens} tokens a step", tokens=fmt.parameters(first_row["tokens"])))
    if axis == "tokens" and part["chips"].nunique() == 1:
        about.append(_("{chips} chips", chips=fmt.count(first_row["chips"])))
    left = len(first) - len(lines)
    return TrainingData(
        series=series,
        title=training_title(training, series),
        subtitle=chart_text(" · ".join(about), 140),
        axis=axis,
        x_label=_("Chips") if axis == "chips" else _("Tokens a step (global batch)"),
        y_label=_("Step time (faster below)"),
        lines=tuple(lines),
        more=_("… and {n} more configurations; see the Training sheet", n=fmt.count(left))
        if left else "",
    )  # fmt: skip


def _threshold(mine: pd.DataFrame, axis: str) -> float | None:
    """Where a line's tokens a chip equal its compute-bound batch: chips = tokens / critical
    (fewer chips are compute-bound), or tokens = critical x chips (more tokens are); the
    median over its points (the critical batch moves a little with the chip count)."""
    critical = mine["critical_tokens_per_chip"].to_numpy(dtype=float)
    other = mine["tokens" if axis == "chips" else "chips"].to_numpy(dtype=float)
    at = other / critical if axis == "chips" else critical * other
    at = at[np.isfinite(at) & (at > 0)]
    return float(np.median(at)) if len(at) else None


def _label(r, several: bool, other: str | None) -> str:
    """A line's configuration: 'h100 bf16 fsdp tp=8', its model first when the series has
    several, its other axis last when that varies too ('h100 bf16 fsdp, 4.00M a step')."""
    text = f"{r['hardware']} {r['dtype']} {r['scheme']}".strip()
    if several:
        text = f"{r['model']} {text}"
    if other == "tokens":
        text += ", " + _("{tokens} tokens a step", tokens=fmt.parameters(r["tokens"]))
    elif other == "chips":
        text += f" \u00d7{fmt.count(r['chips'])}"
    return text


def _best(r, axis: str) -> str:
    """What a line's best point says in the legend: '40.3 days at 4,096 chips', or that none
    of its points fits."""
    if fmt.missing(r["rank"]):
        return _("does not fit in HBM")
    at = fmt.count(r["chips"]) if axis == "chips" else fmt.parameters(r["tokens"])
    if fmt.missing(r["days"]):
        return _("{time} a step at {at}", time=fmt.seconds(r["step_time"]), at=at)
    return _("{days} days at {at}", days=days(r["days"]), at=at)


def _codes(part: pd.DataFrame, columns: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Each row's line, numbered in order of first appearance, and each line's first row."""
    key = np.zeros(len(part), dtype=np.int64)
    for c in columns:
        codes, uniques = pd.factorize(part[c])
        key = pd.factorize(key * (len(uniques) + 1) + codes)[0].astype(np.int64)
    _, first = np.unique(key, return_index=True)
    return key, first


def _looks(firsts: pd.DataFrame, keys: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Colour and style indices per line (`firsts`: each line's first row): a colour per
    chip, a style per the other `keys` that vary."""
    color = pd.factorize(firsts["hardware"].astype(str).to_numpy())[0]
    rest = [c for c in keys if c != "hardware" and firsts[c].nunique() > 1]
    if not rest:
        return color, np.zeros(len(firsts), dtype=np.int64)
    style = pd.factorize(pd.MultiIndex.from_frame(firsts[rest].astype(str)))[0]
    return color, style
