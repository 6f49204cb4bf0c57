"""The total row of each transformer step (docs/model.md#transformer-steps): the plain sum of
its ops' rows (each already `count` x one op), and what a planner asks of a step: time per
step and per token, tokens per second, the share of the time per bound, the weights and the
KV cache in bytes, whether they fit in the chips' HBM with the largest activation, and the
largest batch that fits. One numpy pass over the steps (np.add.reduceat over each step's
consecutive rows: model.transformer keeps them together)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.model.dtypes import dtype_bytes
from pipeline.model.groups import BLOCK, GROUP
from pipeline.model.params import param_counts
from pipeline.model.roofline import BOUNDS, EXACT
from pipeline.model.transformer import OP_FLOPS, is_step

SUMMED = ("flops", "flops_per_chip", "bytes_read", "bytes_written", "hbm_bytes",
          "network_bytes", "t_math", "t_hbm", "t_network", "t_lower", "t_upper")  # fmt: skip
# the total row's own columns (NaN on every other row), in this order after `fits`
STEP_COLUMNS = ("tokens_per_second", "time_per_token", *(f"{b}_share" for b in BOUNDS),
                "weight_bytes", "kv_cache_bytes", "max_batch")  # fmt: skip
STEP_ROWS = 50  # the steps (total rows) the Models table lists by default (summary.steps)
# what the Summary keeps of them (summary.steps.step_table), the optional columns if given
STEP_FIELDS = ("name", "model", "hardware", "chips", "B", "T", "S", "count", "t_lower", "bound",
               *(f"{b}_share" for b in BOUNDS), "fits", "memory_footprint", "hbm_capacity",
               "time_per_token", "tokens_per_second", "weight_bytes", "kv_cache_bytes",
               "max_batch")  # fmt: skip
# max_batch at most 2^53, the largest B the tool takes: there, every B it takes fits
NO_LIMIT = EXACT


def is_total(frame: pd.DataFrame) -> np.ndarray:
    """Which rows are totals: a transformer step's or a group's (op `group`)."""
    op = frame["op"]
    if isinstance(op.dtype, pd.CategoricalDtype) and GROUP not in op.cat.categories:
        return is_step(frame)
    return is_step(frame) | (op == GROUP).to_numpy(dtype=bool)


def with_step_totals(results: pd.DataFrame, frame: pd.DataFrame) -> pd.DataFrame:
    """`results` (row for row with the expanded `frame`) with each total row (a step's or a
    group's) filled and the STEP_COLUMNS added; unchanged when there is no total."""
    total, ops, first = _blocks(frame)
    if not len(total):
        return results
    out = results.copy(deep=False)  # columns are replaced, never written in place
    out["flops"] = _op_totals(out, frame, ops)
    estimated = "t_estimate" in out.columns  # a calibration's (calibration.estimate)
    for c in (*SUMMED, "t_estimate") if estimated else SUMMED:
        values = out[c].to_numpy(dtype=float, copy=True)
        values[total] = np.add.reduceat(values[ops], first)
        out[c] = values
    if estimated:  # the estimate's bound: the one whose rows take most of the estimate
        out["estimate_bound"] = _largest_share(out, "t_estimate", "estimate_bound", ops, first,
                                               total)  # fmt: skip
        if "measured_over_estimate" in out.columns:
            ratio = out["measured_over_estimate"].to_numpy(dtype=float, copy=True)
            ratio[total] = (out["measured_seconds"].to_numpy(dtype=float)[total]
                            / out["t_estimate"].to_numpy(dtype=float)[total])  # fmt: skip
            out["measured_over_estimate"] = ratio
    bound_codes = pd.Categorical(out["bound"], categories=list(BOUNDS)).codes
    t = out["t_lower"].to_numpy(dtype=float)
    shares = {}
    for k, b in enumerate(BOUNDS):
        of_bound = np.where(bound_codes[ops] == k, t[ops], 0.0)
        shares[b] = np.add.reduceat(of_bound, first) / t[total]
    pick = np.argmax(np.column_stack([shares[b] for b in BOUNDS]), axis=1)
    bounds = out["bound"].astype(str).to_numpy(dtype=object)
    bounds[total] = np.asarray(BOUNDS, dtype=object)[pick]
    out["bound"] = pd.Categorical(bounds, categories=list(BOUNDS))
    flops_pc = out["flops_per_chip"].to_numpy(dtype=float)
    hbm = out["hbm_bytes"].to_numpy(dtype=float)
    for c, value in (
        ("intensity", flops_pc[total] / hbm[total]),
        ("attainable_flops", flops_pc[total] / t[total]),
        ("peak_fraction", flops_pc[total] / t[total] / out["peak_flops"].to_numpy()[total]),
        ("measured_over_predicted", out["measured_seconds"].to_numpy()[total] / t[total]),
    ):
        column = out[c].to_numpy(dtype=float, na_value=np.nan, copy=True)
        column[total] = value
        out[c] = column
    critical = out["critical_batch"].copy()
    critical.iloc[total] = pd.NA  # a step has no one critical batch: its ops have theirs
    out["critical_batch"] = critical
    count = frame["count"].to_numpy(dtype=float) if "count" in frame.columns else np.ones(len(t))
    largest = np.maximum.reduceat(
        out["bytes_written"].to_numpy(dtype=float)[ops] / count[ops], first
    )
    step = is_step(frame)[total]
    extra = _group_figures(frame.iloc[total], t[total], out["memory_footprint"], ops, first)
    if step.any():
        mine = _step_figures(frame.iloc[total[step]], t[total[step]], largest[step])
        for c, value in mine.items():
            extra[c][step] = value
    capacity = out["hbm_capacity"].to_numpy(dtype=float)[total]
    footprint = out["memory_footprint"].to_numpy(dtype=float, copy=True)
    footprint[total] = extra.pop("footprint")
    out["memory_footprint"] = footprint
    fits = out["fits"].copy()
    fits.iloc[total] = footprint[total] <= capacity
    out["fits"] = fits
    extra["max_batch"] = _max_batch(capacity, extra.pop("weights_per_chip"),
                                    extra.pop("per_unit"), extra.pop("unit"))  # fmt: skip
    for b in BOUNDS:
        extra[f"{b}_share"] = shares[b]
    at = out.columns.get_loc("fits") + 1
    for k, c in enumerate(STEP_COLUMNS):
        column = np.full(len(out), np.nan)
        column[total] = extra[c]
        out.insert(at + k, c, column)
    return out


def _blocks(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The total rows (positions), the rows summed into them (those after a total summed into
    the same one, in order) and where each total's rows start among those."""
    if BLOCK not in frame.columns:
        return np.array([], np.intp), np.array([], np.intp), np.array([], np.intp)
    total = np.flatnonzero(is_total(frame))
    block = frame[BLOCK].to_numpy()
    marker = np.full(len(frame), -1)
    marker[total] = total
    last = np.maximum.accumulate(marker)  # each row's latest total row at or before it
    ops = np.flatnonzero((last >= 0) & (marker < 0) & (block == block[np.maximum(last, 0)]))
    return total, ops, np.searchsorted(ops, total + 1)


def top_rows(results: pd.DataFrame, frame: pd.DataFrame) -> np.ndarray | None:
    """Per row of `results` (row for row with the expanded `frame`): for a total, the row
    summed into it that takes the most time (t_lower; the first of equals), else -1; -1 for a
    total without such a row; None when there is no total."""
    total, ops, first = _blocks(frame)
    if not len(total):
        return None
    top = np.full(len(results), -1, dtype=np.int64)
    t = results["t_lower"].to_numpy(dtype=float)[ops]
    has = np.r_[first[1:], len(ops)] > first  # a total with rows of its own
    if len(ops):
        owner = np.repeat(np.arange(len(total)), np.diff(np.r_[first, len(ops)]))
        order = np.lexsort((-np.nan_to_num(t, nan=-np.inf), owner))  # per total, slowest first
        pick = ops[order[first[has]]]
        top[total[has]] = np.where(np.isfinite(results["t_lower"].to_numpy(float)[pick]), pick, -1)
    return top


def _largest_share(out, time: str, bound: str, ops, first, total) -> pd.Categorical:
    """`bound` with each total's the bound whose rows take the largest share of `time`
    (missing where the total's time is)."""
    codes = pd.Categorical(out[bound], categories=list(BOUNDS)).codes.copy()
    t = out[time].to_numpy(dtype=float)
    shares = np.column_stack(
        [np.add.reduceat(np.where(codes[ops] == k, t[ops], 0.0), first) for k in range(3)]
    )
    codes[total] = np.where(np.isnan(t[total]), -1, np.argmax(shares, axis=1))
    return pd.Categorical.from_codes(codes, categories=list(BOUNDS))


def _group_figures(totals: pd.DataFrame, t: np.ndarray, footprint: pd.Series, ops, first):
    """Per total, a group's figures (a step's are model.step_totals._step_figures'): tokens
    per second and time per token where the total has a batch B (T tokens each, 1 when it
    has no T), its largest row's footprint (which operands stay in HBM is not said by plain
    rows), and no weights, KV cache or largest batch."""
    n = len(totals)
    b = totals["B"].to_numpy(dtype=float) if "B" in totals.columns else np.full(n, np.nan)
    tokens_t = totals["T"].to_numpy(dtype=float) if "T" in totals.columns else np.ones(n)
    tokens_t = np.where(np.isnan(tokens_t), 1.0, tokens_t)
    largest = np.maximum.reduceat(footprint.to_numpy(dtype=float)[ops], first)
    nothing = np.full(n, np.nan)
    return {
        "tokens_per_second": b * tokens_t / t,
        "time_per_token": np.where(np.isnan(b), np.nan, t / tokens_t),
        "weight_bytes": nothing.copy(),
        "kv_cache_bytes": nothing.copy(),
        "footprint": largest,
        "per_unit": nothing.copy(),
        "unit": nothing.copy(),
        "weights_per_chip": nothing.copy(),
    }


def _step_figures(steps: pd.DataFrame, t: np.ndarray, largest: np.ndarray) -> dict:
    """Per step: tokens per second, time per token, the weights and KV cache (bytes), and the
    footprint of its busiest chip: the weights on it plus, per `unit` of the batch it holds
    (a sequence; with expert parallelism, `chips` sequences, one on each chip, the busiest
    holding ceil(B / chips) of them), that unit's KV cache and activation (`per_unit`, the
    same at any B: the largest op's output grows with B as the KV cache does)."""
    shape = steps.rename(columns={"moe_k": "k", "moe_width": "F_expert"})
    counts = param_counts(shape)
    params = counts["params"].to_numpy(dtype=float)
    f = {c: steps[c].to_numpy(dtype=float) for c in ("B", "T", "S", "L", "K", "H")}
    weight = params * _bytes(steps["y_dtype"])
    kv_per_sequence = 2 * f["S"] * f["L"] * f["K"] * f["H"] * _bytes(steps["kv_dtype"])
    chips = steps["chips"].to_numpy(dtype=float)
    split = (steps["chips"] > 1).to_numpy(dtype=bool)
    ep = split & (steps["shard"].astype(str) == "E").to_numpy(dtype=bool)
    # tensor parallel: every weight split, a KV head on each chip up to K; expert parallel:
    # the experts split, the rest of the weights on every chip, the batch (and its KV) split
    # as the einsum rows split it (model.transformer: shard B, ceil(B / chips) a chip)
    kv_heads = np.where(split & ~ep, np.minimum(chips, f["K"]), 1.0)
    experts = counts["mlp"].to_numpy(dtype=float) * _bytes(steps["y_dtype"])
    weights_pc = np.where(
        ep, weight - experts + experts / chips, weight / np.where(split, chips, 1.0)
    )
    unit = np.where(ep, chips, 1.0)  # sequences per unit of the batch
    units = np.ceil(f["B"] / unit)
    per_unit = kv_per_sequence / kv_heads + largest / units
    # `count` = n steps one after another: n times the tokens in n times the time
    n = steps["count"].to_numpy(dtype=float) if "count" in steps.columns else np.ones(len(t))
    tokens = f["B"] * f["T"] * n
    return {
        "tokens_per_second": tokens / t,
        "time_per_token": t / (f["T"] * n),
        "weight_bytes": weight,
        "kv_cache_bytes": f["B"] * kv_per_sequence,
        "footprint": _footprint(weights_pc, units, per_unit),
        "per_unit": per_unit,
        "unit": unit,
        "weights_per_chip": weights_pc,
    }


def _footprint(weights_pc: np.ndarray, units: np.ndarray, per_unit: np.ndarray) -> np.ndarray:
    """A step's footprint on its busiest chip holding `units` of its batch: the one formula
    both `fits` and `max_batch` use, so that they agree to the byte."""
    return weights_pc + units * per_unit


def _max_batch(capacity, weights_pc, per_unit, unit) -> np.ndarray:
    """The largest B whose footprint fits (0: none; NaN for a group), at most NO_LIMIT: the
    largest whole units, a division's rounding put right by the footprint itself, times the
    sequences a unit holds."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        units = np.floor((capacity - weights_pc) / per_unit)
        units = np.where(_footprint(weights_pc, units + 1, per_unit) <= capacity, units + 1, units)
        units = np.where(_footprint(weights_pc, units, per_unit) > capacity, units - 1, units)
        most = np.minimum(units * unit, NO_LIMIT)
    return np.where(most >= 1, most, np.where(np.isnan(most), np.nan, 0.0))


def _op_totals(out: pd.DataFrame, frame: pd.DataFrame, ops: np.ndarray) -> np.ndarray:
    """`flops` with each custom op row of a step (or group) the op's total, as an einsum
    row's `flops` is (docs/outputs.md): a step's op's own total (model.transformer's
    OP_FLOPS, its `flops_per_chip` being the busiest chip's share) times its `count`, a row
    of the file's own the work of one chip times the chips sharing it."""
    flops = out["flops"].to_numpy(dtype=float, copy=True)
    custom = ops[(frame["op"].to_numpy()[ops] == "custom")]
    chips = out["chips"].to_numpy(dtype=float)[custom]
    flops[custom] = out["flops_per_chip"].to_numpy(dtype=float)[custom] * chips
    if OP_FLOPS in frame.columns:
        total = frame[OP_FLOPS].to_numpy(dtype=float)[custom]
        count = frame["count"].to_numpy(dtype=float)[custom] if "count" in frame.columns else 1.0
        flops[custom] = np.where(np.isnan(total), flops[custom], total * count)
    return flops


def _bytes(column: pd.Series) -> np.ndarray:
    codes, names = pd.factorize(column.astype(str))
    return np.asarray([dtype_bytes(n) for n in names], dtype=float)[codes]


def step_memory(steps: pd.DataFrame, largest: np.ndarray) -> dict[str, np.ndarray]:
    """Transformer steps' memory by their total rows' own formulas, for step rows `steps` of
    the frame (at any B and S) whose largest op writes `largest` bytes: `weight_bytes`,
    `kv_cache_bytes`, the `footprint` on the busiest chip and what max_batch takes (its
    `weights_per_chip`, `per_unit`, `unit`): model.serve_totals asks them at another S."""
    figures = _step_figures(steps, np.ones(len(steps)), largest)
    return {k: figures[k] for k in ("weight_bytes", "kv_cache_bytes", "footprint",
                                    "weights_per_chip", "per_unit", "unit")}  # fmt: skip


def largest_batch(capacity, weights_pc, per_unit, unit) -> np.ndarray:
    """The largest B whose footprint fits (0: none), as a step's `max_batch` is worked out."""
    return _max_batch(capacity, weights_pc, per_unit, unit)
