"""The Models table (docs/outputs.md): one line per transformer step, in file order, with what
a planner asks of it: how long a step and a token take, tokens per second, what bounds it and
by how much, the weights and the KV cache, whether they fit in HBM, the largest batch that
does, and the op taking the most time. Plain records (SI numbers beside their words, worded by
render.format) for the report, the workbook's Models sheet and the notebook; read from the
total rows of the results (model.step_totals) and their op rows, which follow them."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.i18n import _
from pipeline.model.groups import GROUP, TOTAL_OPS
from pipeline.model.roofline import BOUNDS
from pipeline.model.step_totals import NO_LIMIT
from pipeline.record import Record
from pipeline.render import format as fmt
from pipeline.render.answer import bound_word

MODEL_ROWS = 50  # steps a table shows (the rest: the total rows of results)


def models_table(record: Record, limit: int = MODEL_ROWS) -> dict:
    """The first `limit` steps of `record.results` as plain records, how many steps there are
    and how many are left out; no rows when the run has no step. A Dask run's sampled results
    give the steps of its sample (`sampled` says so)."""
    results = record.results
    is_total = results["op"].astype(str).isin(TOTAL_OPS).to_numpy(dtype=bool)
    totals = np.flatnonzero(is_total)
    shown = totals[:limit]
    # the shown steps' op rows come before the next step's total row
    end = totals[limit] if len(totals) > limit else len(results)
    steps = results.iloc[shown].to_dict("records")
    tops = _top_ops(results.iloc[:end]) if len(shown) else []
    rows = [_row(step, top) for step, top in zip(steps, tops, strict=True)]
    return {
        "rows": rows,
        # some step stands for n > 1 steps (`count`): the time is said as the n steps'
        "counted": any(r["count"] != 1 for r in rows),
        "total": len(totals),
        "more": len(totals) - len(shown),
        "sampled": bool(record.sampled),
    }


def _top_ops(results: pd.DataFrame) -> list[tuple[str, float] | None]:
    """Per total row of `results`, in order: the op that takes the most time among the rows
    after it named `<its name>/<op>` (a step's) or in its group (a group's, named by their
    series), and that op's time (None without such a row: a sample may leave them out). One
    grouped pass, no loop over the rows."""
    op_text = results["op"].astype(str)
    is_total = op_text.isin(TOTAL_OPS).to_numpy(dtype=bool)
    totals = np.flatnonzero(is_total)
    step = np.cumsum(is_total) - 1  # each row's latest total (by position), -1 before the first
    names = results["name"].astype(str)
    parts = names.str.rpartition("/")
    at = totals[np.maximum(step, 0)]
    owner = names.to_numpy()[at]
    t = results["t_lower"].to_numpy(dtype=float, na_value=np.nan)
    mine = parts[0].to_numpy() == owner
    label = parts[2].to_numpy(dtype=object)
    if "group" in results.columns:  # a group's rows: their group is the total's series
        group = results["group"].astype(str).to_numpy(dtype=object)
        in_group = (op_text.to_numpy()[at] == GROUP) & (group == results["series"].astype(str)
                                                           .to_numpy(dtype=object)[at])  # fmt: skip
        mine |= in_group
        label = np.where(in_group, results["series"].astype(str).to_numpy(dtype=object), label)
    mine &= ~is_total & (step >= 0) & np.isfinite(t)
    found: list[tuple[str, float] | None] = [None] * len(totals)
    if mine.any():
        at = pd.Series(t[mine], index=np.flatnonzero(mine)).groupby(step[mine]).idxmax()
        for k, position in at.items():  # one per total: at most the table's rows
            found[int(k)] = (str(label[position]), float(t[position]))
    return found


def _row(step: dict, top: tuple[str, float] | None) -> dict:
    """One step's line: its numbers (SI) and their words."""
    t = _number(step["t_lower"])
    bound = str(step["bound"])
    share = _number(step.get(f"{bound}_share")) if bound in BOUNDS else None
    fits, footprint, capacity = bool(step["fits"]), step["memory_footprint"], step["hbm_capacity"]
    top_share = top[1] / t if top and t else None
    n = _whole(step.get("count")) or 1  # `count` = n: n steps one after another
    time = (
        fmt.seconds(t) if n == 1 else _("{time} ({n} steps)", time=fmt.seconds(t), n=fmt.count(n))
    )
    return {
        "name": str(step["name"]),
        "model": _text(step.get("model")),
        "hardware": str(step["hardware"]),
        "chips": int(step["chips"]),
        **{d: _whole(step.get(d)) for d in ("B", "T", "S")},
        "count": n,
        "t_step": t,  # the n steps' time
        "time": time,
        "t_token": _number(step["time_per_token"]),
        "time_per_token": fmt.seconds(step["time_per_token"]),
        "tokens_per_second": _number(step["tokens_per_second"]),
        "tokens": fmt.number(step["tokens_per_second"]),
        "bound": bound,
        "bound_share": share,
        "bound_text": _("{bound} {share}", bound=bound_word(bound), share=fmt.percent(share))
        if share is not None
        else bound_word(bound),
        "weight_bytes": _number(step["weight_bytes"]),
        "weights": fmt.size(step["weight_bytes"]),
        "kv_cache_bytes": _number(step["kv_cache_bytes"]),
        "kv_cache": fmt.size(step["kv_cache_bytes"]),
        "fits": fits,
        "footprint": _number(footprint),
        "capacity": _number(capacity),
        "fits_text": _fits_text(fits, fmt.size(footprint), fmt.size(capacity)),
        # the report's cell: the word, then the sizes on a line of their own (narrower)
        "fits_word": _("yes") if fits else _("no"),
        "fits_sizes": _(
            "{footprint} of {capacity}", footprint=fmt.size(footprint), capacity=fmt.size(capacity)
        ),
        "max_batch": _whole(step["max_batch"]),
        "max_batch_text": _max_batch_text(step["max_batch"]),
        "top_op": top[0] if top else "",
        "top_share": top_share,
        "top_text": f"{top[0]} {fmt.percent(top_share)}" if top else fmt.DASH,
    }


def _fits_text(fits: bool, footprint: str, capacity: str) -> str:
    """'yes: 40.1 GB of 80.0 GB'."""
    if fits:
        return _("yes: {footprint} of {capacity}", footprint=footprint, capacity=capacity)
    return _("no: {footprint} of {capacity}", footprint=footprint, capacity=capacity)


def _max_batch_text(value) -> str:
    """'1,740'; at the cap (model.step_totals.NO_LIMIT) what it means: every B fits."""
    if not fmt.missing(value) and float(value) >= NO_LIMIT:
        return _("every B (to 2^53)")
    return fmt.count(value)


def _number(value) -> float | None:
    return None if fmt.missing(value) else float(value)


def _whole(value) -> int | None:
    return None if fmt.missing(value) else int(value)


def _text(value) -> str:
    return "" if fmt.missing(value) else str(value)
