"""The serve row of each `serve` scenario (docs/model.md#serving), filled from its steps once
their totals are (model.step_totals) and, with a calibration, their estimates: the time to the
first token (the prefill step), the time per output token (the decode step, with its draft
model's steps, over the tokens a step yields), the request's latency, tokens per second per
chip and per user, the targets met or missed, the memory of B requests at their full context,
and where speculative decoding stops paying. One numpy pass over the serve rows."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.model.params import param_counts
from pipeline.model.roofline import BOUNDS, int_or_na
from pipeline.model.serve import draft_tokens, has_draft, is_serve
from pipeline.model.step_totals import SUMMED, largest_batch, step_memory
from pipeline.model.transformer import is_step

# the serve row's own columns (NaN or NA on every other row), in this order after max_batch
SERVE_COLUMNS = ("isl", "osl", "ttft", "tpot", "request_latency", "tokens_per_second_per_chip",
                 "tokens_per_second_per_user", "ttft_target", "tpot_target", "batch_at_target",
                 "meets_target", "miss", "time_basis", "tokens_per_step", "critical_tokens",
                 "speculation_pays")  # fmt: skip
MISSES = ("ttft", "tpot", "memory")  # what a serve point can miss, in the order `miss` says
# every `miss` text, by its bits (1 ttft, 2 tpot, 4 memory): the same categories everywhere
MISS_TEXTS = tuple(", ".join(m for b, m in enumerate(MISSES) if k >> b & 1) for k in range(8))
# what the serve totals read of a serve row and of a step (model.step_totals' formulas)
SERVE_INPUTS = ("B", "chips", "isl", "osl", "ttft_target", "tpot_target", "batch_at_target",
                "draft_tokens", "acceptance", "draft_model")  # fmt: skip
STEP_INPUTS = ("B", "T", "S", "D", "F", "N", "K", "H", "L", "V", "E", "moe_k", "moe_width",
               "y_dtype", "kv_dtype", "chips", "shard", "count")  # fmt: skip
BASES = ("estimate", "floor")  # time_basis: a calibration's estimate of both steps, or the floor


def tokens_per_step(k: np.ndarray, a: np.ndarray) -> np.ndarray:
    """The tokens a decode step yields on average verifying k draft tokens, each accepted
    with chance a: 1 + a + ... + a^k = (1 - a^(k+1)) / (1 - a) (k + 1 at a = 1); 1 for k = 0."""
    with np.errstate(invalid="ignore", divide="ignore"):
        spec = np.where(a == 1, k + 1, (1 - a ** (k + 1)) / (1 - a))
    return np.where(k > 0, spec, 1.0)


def serve_steps(frame: pd.DataFrame) -> tuple[np.ndarray, ...]:
    """The positions of the serve rows of `frame` (model.serve's expansion) and of each one's
    prefill, decode and draft step total (-1: no draft step)."""
    serve = np.flatnonzero(is_serve(frame))
    steps = np.flatnonzero(is_step(frame))
    first = np.searchsorted(steps, serve)  # a serve row's steps come right after it
    drafted = has_draft(_rows(frame, serve, ("draft_model",)))
    pad = np.r_[steps, -1, -1, -1]
    return serve, pad[first], pad[first + 1], np.where(drafted, pad[first + 2], -1)


def with_serve_totals(results: pd.DataFrame, frame: pd.DataFrame) -> pd.DataFrame:
    """`results` (row for row with the expanded `frame`, step totals filled) with each serve
    row filled from its steps and the SERVE_COLUMNS added; unchanged without a serve row.
    Every time of a request is its steps' estimate where a calibration estimates each of
    them, else their floor (`time_basis`); the floor's columns (`t_lower`, `bound`, ...)
    are the floor's, `t_estimate` the estimate's."""
    serve, p, d, r = serve_steps(frame)
    if not len(serve):
        return results
    out = results.copy(deep=False)  # columns are replaced, never written in place
    rows = _rows(frame, serve, SERVE_INPUTS)
    drafted, rd = r >= 0, np.maximum(r, 0)
    k = draft_tokens(rows)
    a = rows["acceptance"].to_numpy(dtype=float) if "acceptance" in rows else np.ones(len(rows))
    per_step = tokens_per_step(k, a)
    isl, osl = (rows[c].to_numpy(dtype=float) for c in ("isl", "osl"))
    decodes = (osl - 1) / per_step  # the decode steps after the first token

    def request(values: np.ndarray) -> np.ndarray:  # the prefill, then the decode steps
        return values[p] + decodes * (values[d] + np.where(drafted, values[rd], 0.0))

    floor = out["t_lower"].to_numpy(dtype=float)
    shares = np.column_stack([  # each bound's time in the request, at the floor
        request(out[f"{b}_share"].to_numpy(dtype=float) * floor) for b in BOUNDS
    ])  # fmt: skip
    estimated = "t_estimate" in out.columns
    for c in (*SUMMED, "t_estimate") if estimated else SUMMED:
        _set(out, c, serve, request(out[c].to_numpy(dtype=float)))
    times = (floor[p], floor[d], floor[rd])  # the prefill's, the decode's, the draft's
    basis = np.zeros(len(serve), dtype=bool)
    if estimated:  # the estimate where it covers every step of the request
        est = out["t_estimate"].to_numpy(dtype=float)
        basis = np.isfinite(est[p]) & np.isfinite(est[d]) & (~drafted | np.isfinite(est[rd]))
        times = tuple(np.where(basis, est[at], f) for at, f in zip((p, d, rd), times, strict=True))
        parts = np.c_[est[p], decodes * est[d], np.where(drafted, decodes * est[rd], 0)]
        _estimate_labels(out, serve, (p, d, rd), parts)
    ttft = times[0]
    tpot = (times[1] + np.where(drafted, times[2], 0.0)) / per_step
    t = out["t_lower"].to_numpy(dtype=float)[serve]
    _set(out, "bound", serve, np.argmax(shares, axis=1))
    memory = _memory(frame, out, d, rd, drafted, isl + osl)
    capacity = out["hbm_capacity"].to_numpy(dtype=float)[serve]
    fits = memory["footprint"] <= capacity
    flops_pc, hbm = (out[c].to_numpy(dtype=float)[serve] for c in ("flops_per_chip", "hbm_bytes"))
    b = rows["B"].to_numpy(dtype=float)
    for c, v in {
        "intensity": flops_pc / hbm,
        "attainable_flops": flops_pc / t,
        "peak_fraction": flops_pc / t / out["peak_flops"].to_numpy(dtype=float)[serve],
        "memory_footprint": memory["footprint"],
        "fits": fits,
        "tokens_per_second": b / tpot,
        "time_per_token": tpot,
        **{f"{bound}_share": shares[:, j] / t for j, bound in enumerate(BOUNDS)},
        "weight_bytes": memory["weight_bytes"],
        "kv_cache_bytes": memory["kv_cache_bytes"],
        "max_batch": largest_batch(
            capacity, memory["weights_per_chip"], memory["per_unit"], memory["unit"]
        ),  # fmt: skip
    }.items():
        _set(out, c, serve, v)
    own = _serve_columns(rows, _critical_tokens(frame, out, d), ttft, tpot, per_step, fits,
                         basis, k)  # fmt: skip
    at = out.columns.get_loc("max_batch") + 1
    for j, (c, v) in enumerate(own.items()):
        out.insert(at + j, c, _owned(out, _placed(v, serve, len(out))))
    return out


def _serve_columns(rows, critical, ttft, tpot, per_step, fits, basis, k) -> dict:
    """The SERVE_COLUMNS of the serve rows `rows`, in order, each (its kind, its values):
    _placed makes the column."""
    n = len(rows)
    b, chips, osl = (rows[c].to_numpy(dtype=float) for c in ("B", "chips", "osl"))
    target = {c: rows[c].to_numpy(dtype=float) if c in rows else np.full(n, np.nan)
              for c in ("ttft_target", "tpot_target")}  # fmt: skip
    with np.errstate(invalid="ignore"):
        slow = (ttft > target["ttft_target"], tpot > target["tpot_target"], ~fits)
    missed = sum(np.where(m, 1 << j, 0) for j, m in enumerate(slow))
    asked = ~np.isnan(target["ttft_target"]) | ~np.isnan(target["tpot_target"])
    at_target = rows["batch_at_target"] if "batch_at_target" in rows else np.full(n, np.nan)
    return {
        "isl": ("whole", rows["isl"].to_numpy(dtype=float)),
        "osl": ("whole", osl),
        "ttft": ("number", ttft),
        "tpot": ("number", tpot),
        "request_latency": ("number", ttft + (osl - 1) * tpot),
        "tokens_per_second_per_chip": ("number", b / (tpot * chips)),
        "tokens_per_second_per_user": ("number", 1 / tpot),
        **{c: ("number", v) for c, v in target.items()},
        "batch_at_target": ("whole", np.asarray(at_target, dtype=float)),
        "meets_target": ("bool", np.where(asked, missed == 0, np.nan)),
        "miss": (MISS_TEXTS, missed),
        "time_basis": (BASES, np.where(basis, 0, 1)),
        "tokens_per_step": ("number", per_step),
        "critical_tokens": ("whole", critical),
        "speculation_pays": ("bool", np.where(k > 0, b * (k + 1) < critical, np.nan)),
    }


def _rows(frame: pd.DataFrame, at: np.ndarray, columns: tuple[str, ...]) -> pd.DataFrame:
    """The rows of `frame` at positions `at`, only those of `columns` it has (a take of a few
    columns, not of every column of a frame of millions of rows)."""
    taken = {c: frame[c].take(at).array for c in columns if c in frame.columns}
    return pd.DataFrame(taken, index=pd.RangeIndex(len(at)))


def _placed(column: tuple[object, np.ndarray], serve: np.ndarray, n: int):
    """A serve column's values at the serve rows' positions, missing elsewhere, typed as its
    kind says: whole numbers (Int64), numbers, booleans (boolean, NA for NaN) or a text of
    a fixed set (Categorical of codes)."""
    kind, values = column
    if isinstance(kind, tuple):
        codes = np.full(n, -1, dtype=np.int8)
        codes[serve] = values
        return pd.Categorical.from_codes(codes, categories=list(kind))
    full = np.full(n, np.nan)
    full[serve] = values
    if kind == "whole":
        return int_or_na(full)
    if kind == "bool":
        return pd.arrays.BooleanArray(np.nan_to_num(full) > 0, np.isnan(full))
    return full


def _set(out: pd.DataFrame, column: str, at: np.ndarray, values: np.ndarray) -> None:
    """Column `column` of `out` with its values at positions `at` replaced (a new column,
    of the kind it was: a Categorical of bounds takes codes, a nullable boolean booleans)."""
    old = out[column]
    if isinstance(old.dtype, pd.CategoricalDtype):
        codes = old.cat.codes.to_numpy(copy=True)
        codes[at] = values
        out[column] = _owned(out, pd.Categorical.from_codes(codes, old.cat.categories))
    elif isinstance(old.dtype, pd.BooleanDtype):
        new = old.array.copy()
        new[at] = values
        out[column] = _owned(out, new)
    else:
        new = old.to_numpy(dtype=float, na_value=np.nan, copy=True)
        new[at] = values
        out[column] = _owned(out, new)


def _owned(out: pd.DataFrame, values) -> pd.Series:
    """New values of a column of `out`, which only it holds, as a Series pandas takes as it
    is (an array would be copied: 14 MB a column at a million and a half rows)."""
    return pd.Series(values, index=out.index, copy=False)


def _estimate_labels(out: pd.DataFrame, serve: np.ndarray, steps: tuple, parts: np.ndarray):
    """A serve row's estimate_bound (the bound of its step taking most of the estimate: the
    prefill, the decodes or the drafts) and calibration label (its decode step's)."""
    if "estimate_bound" in out.columns:
        largest = np.argmax(np.nan_to_num(parts, nan=-1.0), axis=1)
        codes = out["estimate_bound"].cat.codes.to_numpy()
        chosen = np.choose(largest, [codes[s] for s in steps])
        _set(out, "estimate_bound", serve, np.where(np.isnan(parts).any(axis=1), -1, chosen))
    if "calibration" in out.columns:
        _set(out, "calibration", serve, out["calibration"].cat.codes.to_numpy()[steps[1]])
    if "measured_over_estimate" in out.columns:
        _set(out, "measured_over_estimate", serve, np.nan)


def _memory(frame, out, d, rd, drafted, context) -> dict[str, np.ndarray]:
    """The memory of the serve rows' B requests at their full `context` (isl + osl), by the
    step totals' formulas: the decode step's (its largest activation as at its own S) and,
    with a draft model, its draft step's added (weights, KV cache, per-sequence bytes)."""
    total = _at_context(frame, out, d, context)
    if drafted.any():
        mine = np.flatnonzero(drafted)
        draft = _at_context(frame, out, rd[mine], context[mine])
        for c in ("weight_bytes", "kv_cache_bytes", "footprint", "weights_per_chip", "per_unit"):
            total[c][mine] = total[c][mine] + draft[c]
    return total


def _at_context(frame, out, steps, context) -> dict[str, np.ndarray]:
    """The memory of the step totals at positions `steps` with S = `context` (their largest
    op's output, as at their own S: the footprint past their weights and KV cache)."""
    rows = _rows(frame, steps, STEP_INPUTS)
    footprint = out["memory_footprint"].to_numpy(dtype=float)[steps]
    largest = footprint - step_memory(rows, np.zeros(len(steps)))["footprint"]
    return step_memory(rows.assign(S=context), largest)


def _critical_tokens(frame: pd.DataFrame, out: pd.DataFrame, d: np.ndarray) -> np.ndarray:
    """The decode step's critical batch in tokens B·T: where the math of its weights (2 FLOPs
    per active parameter a token) takes as long as reading them (every parameter once), at
    its derated rates ("How to Scale Your Model", Inference: B > bytes per parameter x
    FLOP/s / (2 x HBM bytes/s), x total / active parameters for an MoE)."""
    steps = _rows(frame, d, STEP_INPUTS).rename(columns={"moe_k": "k", "moe_width": "F_expert"})
    active = param_counts(steps)["active_params"].to_numpy(dtype=float)
    rate, hbm = (out[c].to_numpy(dtype=float)[d] * out[e].to_numpy(dtype=float)[d]
                 for c, e in (("peak_flops", "compute_efficiency"),
                              ("hbm_bandwidth", "hbm_efficiency")))  # fmt: skip
    weights = out["weight_bytes"].to_numpy(dtype=float)[d]
    return np.ceil(weights * rate / (2 * active * hbm))
