"""The Models table (docs/outputs.md): one line per transformer step, the slowest first and
every fleet point's best among them (summary.steps), with what a planner asks of it: how
long a step and a token take, tokens per second, what bounds it and by how much, the weights
and the KV cache, whether they fit in HBM, the largest batch that does, and the op taking the
most time. Plain records (SI numbers beside their words, worded by render.format) for the
report, the workbook's Models sheet and the notebook; read from the Summary's ranked steps
(summary.steps), never from the rows."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.i18n import _
from pipeline.model.dtypes import DTYPE_COLUMNS
from pipeline.model.roofline import BOUNDS
from pipeline.model.step_totals import NO_LIMIT
from pipeline.record import Record
from pipeline.render import format as fmt
from pipeline.render.text.answer import bound_word
from pipeline.words import dtype_labels


def models_table(record: Record, limit: int | None = None) -> dict:
    """The run's ranked steps (Summary.steps: at most the run's `models_rows`), the first
    `limit` of them if given, as plain records, how many steps there are and how many are
    left out; no rows when the run has no step. Whole-run facts on either engine (a Dask
    run's sample plays no part)."""
    summary = record.summary
    steps = summary.steps if limit is None else summary.steps.head(limit)
    labels = step_dtypes(steps)
    rows = [_row(step, label) for step, label in zip(steps.to_dict("records"), labels, strict=True)]
    return {
        "rows": rows,
        # some step stands for n > 1 steps (`count`): the time is said as the n steps'
        "counted": any(r["count"] != 1 for r in rows),
        "total": summary.steps_total,
        "more": summary.steps_total - len(rows),
    }


def step_dtypes(steps: pd.DataFrame) -> np.ndarray:
    """Each step's dtypes in words, as a fleet point says them: 'fp8'; 'bf16 × fp8 → bf16'
    (fp8 weights); ', KV fp8' added when its KV cache is not at its activations' dtype; ''
    for a step without dtypes."""
    if not len(steps) or not set(DTYPE_COLUMNS) <= set(steps.columns):
        return np.full(len(steps), "", dtype=object)
    labels = dtype_labels(*(steps[c].astype(str) for c in DTYPE_COLUMNS))
    if "kv_dtype" not in steps.columns:
        return labels
    kv = steps["kv_dtype"].astype(str).to_numpy(dtype=object)
    other = (kv != "") & (kv != "nan") & (kv != steps["x_dtype"].astype(str).to_numpy(dtype=object))
    return np.where(other, labels + ", KV " + kv, labels)


def _row(step: dict, dtype: str = "") -> dict:
    """One step's line: its numbers (SI) and their words."""
    top = (step["top_op"], step["top_time"]) if step["top_op"] else None
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
        "dtype": str(dtype),
        "chips": int(step["chips"]),
        # its fleet point's best: the most tokens/s of its steps that fit (summary.steps)
        "best": bool(step.get("best", False)),
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
