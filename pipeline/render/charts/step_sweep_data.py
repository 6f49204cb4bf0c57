"""The data of a model chart (issue 31: "a sweep over B or S draws tokens/s and step time"):
the total rows of one transformer series that sweeps B or S (docs/model.md#transformer-steps),
a line per chip (and per value of its other swept axes), each point with its tokens per
second, step time (t_lower), bound and whether it fits in HBM, and where the fitting stops:
the largest batch that fits (max_batch) along B, the largest swept S that fits along S."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipeline.i18n import _
from pipeline.model.groups import GROUP, TOTAL_OPS
from pipeline.model.step_totals import NO_LIMIT
from pipeline.render import format as fmt
from pipeline.render.charts.data import floats
from pipeline.render.charts.labels import chart_text

MODEL_CHARTS = 20  # model charts a run draws at most (the first swept steps, file order)
DIMS = ("B", "S")  # the dims a model chart is drawn against (B first when both are swept)
# the total-row columns a model chart reads (Record.results), beside the `swept` fact
COLUMNS = ("name", "series", "op", "model", "hardware", "chips", "compute_dtype", "kv_dtype",
           "B", "T", "S", "tokens_per_second", "t_lower", "bound", "fits", "max_batch")  # fmt: skip
# a swept axis' results column where it is not the axis' own (a `dtype` list sets them all)
AXIS_COLUMN = {"dtype": "compute_dtype"}


@dataclass(frozen=True)
class ModelLine:
    """One line of a model chart: its points along the swept dim (ascending), and where the
    fitting stops (`limit`: max_batch along B, the largest fitting S along S; NaN if none)."""

    label: str
    x: np.ndarray
    tokens_per_second: np.ndarray
    t_lower: np.ndarray
    fits: np.ndarray  # bool
    bound: tuple[str, ...]
    limit: float
    limit_label: str
    last_fit: int = -1  # the point furthest along the sweep that fits (-1: none fits)


@dataclass(frozen=True)
class ModelSweepData:
    """A swept transformer series' chart: tokens/s and step time against `dim` (B or S)."""

    series: str
    dim: str
    title: str
    subtitle: str
    lines: tuple[ModelLine, ...]


def model_frame(record) -> pd.DataFrame:
    """The total rows of the transformer steps that sweep B or S (COLUMNS and `swept`, and
    the columns of their other swept axes), in file order; empty when there are none."""
    results, facts = record.results, record.facts
    if "op" not in results.columns or "tokens_per_second" not in results.columns:
        return pd.DataFrame(columns=[*COLUMNS, "swept"])
    steps = np.flatnonzero(results["op"].astype(str).isin(TOTAL_OPS).to_numpy(dtype=bool))
    swept = facts["swept"].iloc[steps].to_numpy(dtype=object)
    codes, kinds = pd.factorize(swept)  # a few distinct tuples, however many rows
    drawn = np.array([any(d in axes for d in DIMS) for axes in kinds], dtype=bool)
    rows = steps[drawn[codes]] if len(kinds) else steps[:0]
    axes = {AXIS_COLUMN.get(a, a) for k in kinds[drawn] for a in k} if len(kinds) else set()
    columns = [c for c in dict.fromkeys([*COLUMNS, *sorted(axes)]) if c in results.columns]
    frame = results[columns].iloc[rows].reset_index(drop=True)
    return frame.assign(swept=swept[drawn[codes]] if len(kinds) else swept[:0])


def model_series(frame: pd.DataFrame) -> list[str]:
    """The swept transformer series of a model_frame, in file order."""
    return list(dict.fromkeys(frame["series"].astype(str))) if len(frame) else []


def model_sweep_data(frame: pd.DataFrame, series: str) -> ModelSweepData:
    """One swept transformer series' chart from its model_frame."""
    rows = frame[frame["series"].astype(str) == series].reset_index(drop=True)
    axes = tuple(rows["swept"].iloc[0])
    dim = next(d for d in DIMS if d in axes)
    others = [a for a in axes if a != dim and AXIS_COLUMN.get(a, a) in rows.columns]
    split = ["hardware", *(a for a in others if a != "hardware")]
    keys = pd.DataFrame({a: rows[AXIS_COLUMN.get(a, a)].to_numpy() for a in split})
    line_of = keys.groupby(split, sort=False, dropna=False).ngroup().to_numpy()
    x_all = floats(rows[dim])
    lines = []
    for k in range(int(line_of.max()) + 1 if len(rows) else 0):  # a line per chip and value
        part = np.flatnonzero(line_of == k)
        part = part[np.argsort(x_all[part], kind="stable")]
        first = keys.iloc[part[0]]
        label = ", ".join(
            [str(first["hardware"]), *(f"{a} = {_shown(first[a])}" for a in split[1:])]
        )
        lines.append(_line(rows.iloc[part], chart_text(label, 40), dim))
    return ModelSweepData(
        series=series,
        dim=dim,
        title=chart_text(_title(rows, dim), 90),
        subtitle=chart_text(_subtitle(rows, series, dim, axes), 140),
        lines=tuple(lines),
    )


def _line(rows: pd.DataFrame, label: str, dim: str) -> ModelLine:
    x = floats(rows[dim])
    fits = rows["fits"].to_numpy(dtype=bool, na_value=False)
    most = floats(rows["max_batch"])
    # a group (no weights known, no largest batch), or a step every B fits (max_batch at
    # its cap: a line there would stretch the axis to 2^53)
    if dim == "B" and (np.isnan(most).all() or np.nanmax(most) >= NO_LIMIT):
        limit = np.nan
        text = (
            _("fits at every point")
            if fits.all()
            else _("fits at {n} of {total}", n=int(fits.sum()), total=len(fits))
        )
    elif dim == "B":  # one chip's max_batch along B: the same at every point of the line
        limit = float(np.nanmax(most)) if len(rows) else np.nan
        text = _("fits up to B = {b}", b=fmt.count(limit)) if limit >= 1 else _("fits at no batch")
        limit = limit if limit >= 1 else np.nan
    else:
        limit = float(x[fits].max()) if fits.any() else np.nan
        b = fmt.count(floats(rows["B"])[0])
        text = (
            _("B = {b} fits up to S = {s}", b=b, s=fmt.count(limit))
            if fits.any()
            else _("fits at no S")
        )
    return ModelLine(
        label=label,
        x=x,
        tokens_per_second=floats(rows["tokens_per_second"]),
        t_lower=floats(rows["t_lower"]),
        fits=fits,
        bound=tuple(rows["bound"].astype(str)),
        limit=limit,
        limit_label=text,
        last_fit=int(np.flatnonzero(fits)[-1]) if fits.any() else -1,
    )


def _title(rows: pd.DataFrame, dim: str) -> str:
    """'llama3-8b decode on h100: tokens/s and step time vs B'."""
    model = _listed(rows["model"]) if "model" in rows.columns else ""
    t, s = _dim(rows, "T"), _dim(rows, "S")
    phase = _("decode") if (t == 1).all() else _("prefill") if (t == s).all() else _("step")
    if (rows["op"].astype(str) == GROUP).all():  # a group of the user's rows (model.groups)
        phase = _("(group)")
    chips = rows["chips"].to_numpy(dtype=float)
    where = _listed(rows["hardware"])
    if (chips > 1).all() and len(np.unique(chips)) == 1:
        where = f"{fmt.count(chips[0])} × {where}"
    what = f"{model} {phase}" if model else f"{chart_text(rows['series'].iloc[0])} {phase}"
    return _("{what} on {where}: tokens/s and step time vs {dim}", what=what, where=where, dim=dim)


def _subtitle(rows: pd.DataFrame, series: str, dim: str, axes: tuple) -> str:
    """The series, its sweep and what it holds: 'd: B = 1 – 512, T = 1, S = 8,192, bf16'."""
    parts = []
    for d in ("B", "T", "S"):
        v = _dim(rows, d)
        if np.isnan(v).all():  # a group's dims are its first row's: T and S maybe none
            continue
        if d == dim or d in axes:
            parts.append(f"{d} = {fmt.span(np.nanmin(v), np.nanmax(v))}")
        else:
            parts.append(f"{d} = {fmt.count(v[0])}")
    dtype = _listed(rows["compute_dtype"])
    kv = _listed(rows["kv_dtype"]) if "kv_dtype" in rows.columns else ""
    parts.append(_("{dtype}, KV cache {kv}", dtype=dtype, kv=kv) if kv and kv != dtype else dtype)
    return f"{series}: {', '.join(parts)}"


def _dim(rows: pd.DataFrame, d: str) -> np.ndarray:
    """A dim's values (NaN where the rows have no such column)."""
    return floats(rows[d]) if d in rows.columns else np.full(len(rows), np.nan)


def _listed(column: pd.Series) -> str:
    """A column's distinct values, in order, joined ('h100, tpu-v5e')."""
    return ", ".join(dict.fromkeys(str(v) for v in column if not fmt.missing(v) and str(v)))


def _shown(value) -> str:
    if isinstance(value, int | float | np.integer | np.floating) and float(value).is_integer():
        return fmt.count(int(value))
    return str(value)


def model_cap_notice(frame: pd.DataFrame) -> str | None:
    """What the cap on model charts left out, said plainly (None when nothing)."""
    names = model_series(frame)
    if len(names) <= MODEL_CHARTS:
        return None
    return _(
        "Drew model charts of the first {shown} of {total} swept transformer steps (at most "
        "{shown} a run); every step's total rows are in the results.",
        shown=MODEL_CHARTS,
        total=f"{len(names):,}",
    )
