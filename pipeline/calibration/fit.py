"""Fitting a calibration to measured times (DESIGN.md §20; issues 32, 41): per group
(calibration.groups: chip x op kind x compute dtype, a collective's chip x op x link x N),
the efficiencies (1e-6 <= e <= 1), the fixed overhead per op (0 to an hour) and, for a matmul
group of MIN_ROWS["roofline+shape"] rows or more, the shape correction (calibration.shape)
that bring the roofline to the rows' `measured_seconds`.

A group's form (calibration.estimate) by its rows: a matmul group with MIN_ROWS
["roofline+shape"] rows (m, n, k known) `roofline+shape`, a matmul or custom one with
MIN_ROWS["roofline"] `roofline`, a collective's with MIN_ROWS["alpha_beta"] `alpha_beta`;
with fewer, the group falls back to its wider group (every dtype; any N: fitted on every
row of the chip and kind, or op and link) and says so in its `reason`.

The roofline fit (scipy.optimize.least_squares, trust-region reflective, analytic Jacobian)
is over 1 <= s = 1 / e <= 1 / MIN_EFFICIENCY and 0 <= overhead <= MAX_OVERHEAD_SECONDS,
minimizing the robust (soft_l1, scale F_SCALE) sum of r = log(t_estimate / measured): a
relative error, the same weight for a 1 µs op as for a 1 s one. The alpha_beta form is the
same fit of a collective's bandwidth time without its latency floor (the network term and
the overhead, its alpha). What the roofline fit frees (said in `reason`, never guessed):
- an efficiency only when its term is the raw roofline's bound on at least MIN_TERM_ROWS rows;
  otherwise it stays 1. No such term: the group is not fitted.
- the overhead only when some fitted term's rows span a factor of MIN_SPREAD or more in
  their roofline time per op: within less, an overhead cannot be told from an efficiency.

Errors: the symmetric error (calibration.estimate.symmetric_errors), its median and p90 over
the group's rows for the floor (t_lower), the fit in sample and the fit held out: `folds`
folds by a hash of each row's shape (its dims, bytes, chips and einsum: the same for every
dtype and chip), so a shape is never in the fit and the check at once. A fitted group is
`used` when its held-out median beats the floor's (fit_warnings names the others).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np
import pandas as pd
from scipy.optimize import least_squares

from pipeline.calibration.estimate import (
    EFFICIENCIES,
    ERRORS,
    MAX_OVERHEAD_SECONDS,
    MIN_EFFICIENCY,
    Calibration,
    apply_parameters,
    bandwidth_times,
    error_figures,
    group_table,
    roofline_times,
    symmetric_errors,
)
from pipeline.calibration.groups import KEYS, KINDS, group_name, op_kinds, resolve, row_keys, wider
from pipeline.calibration.shape import dumps, fit_shape, log_dims, mnk, shape_factor
from pipeline.model.ops import is_dim
from pipeline.model.roofline import BOUNDS, bound_codes

MIN_ROWS = {"roofline+shape": 200, "roofline": 25, "alpha_beta": 6}  # a group's rows, per form
MIN_TERM_ROWS = 3  # rows a term must be the bound on for its efficiency to be fitted
MIN_SPREAD = 1.5  # the factor a term's roofline times must span for an overhead to be fitted
EXTRA_ROWS = 2  # rows a fold's fit needs beyond its number of parameters
LOSS, F_SCALE = "soft_l1", 0.05  # residuals past ~5 % count linearly, not squared
SLOWEST = 1.0 / MIN_EFFICIENCY  # the largest slowdown (1 / efficiency) fitted
MIX = np.uint64(0x9E3779B97F4A7C15)  # a seed's mix into the shapes' hash


@dataclass(frozen=True)
class Plan:
    """What a group's fit frees: which of the three efficiencies, and the overhead."""

    free: np.ndarray  # bool[3], EFFICIENCIES' order
    overhead: bool

    @property
    def parameters(self) -> int:
        return int(self.free.sum()) + int(self.overhead)


@dataclass(frozen=True)
class Rows:
    """A fit's usable rows: roofline times (a collective's network term without its floor),
    counts, measured times, log2 m, n, k and folds."""

    times: np.ndarray
    count: np.ndarray
    measured: np.ndarray
    logs: np.ndarray
    fold: np.ndarray

    def take(self, at: np.ndarray) -> Rows:
        return Rows(*(getattr(self, k)[at] for k in ("times", "count", "measured", "logs", "fold")))


def fit(
    results: pd.DataFrame,
    *,
    source: str = "",
    source_sha256: str = "",
    folds: int = 5,
    seed: int = 0,
    facts: pd.DataFrame | None = None,
) -> Calibration:
    """A Calibration fitted to the rows of `results` with a finite positive
    `measured_seconds` (and a finite positive t_lower), one group per key
    (calibration.groups) and the wider groups its small groups fall back to. A collective's
    bandwidth time needs its latency knee: `facts`' (row for row) or a `latency_knee` column
    of `results`; without one, its t_network (floor and all) stands for it."""
    if isinstance(folds, bool) or not isinstance(folds, int) or folds < 2:
        raise ValueError(f"folds must be a whole number of at least 2, not {folds!r}")
    times, count = roofline_times(results)
    n = len(results)
    measured = (
        results["measured_seconds"].to_numpy(dtype=float)
        if "measured_seconds" in results.columns
        else np.full(n, np.nan)
    )
    with np.errstate(invalid="ignore"):
        t_lower = times.max(axis=1) if n else np.zeros(0)
        use = (
            np.isfinite(measured) & (measured > 0) & np.isfinite(t_lower) & (t_lower > 0)
            & np.isfinite(count) & (count > 0)
        )  # fmt: skip
    at = np.flatnonzero(use)
    codes, keys = row_keys(results)
    codes = codes[at]
    knee = (facts if facts is not None else results).get("latency_knee")
    collective = np.isin(op_kinds(results), KINDS[2:])
    times[:, 2] = np.where(collective, bandwidth_times(results, count, knee), times[:, 2])
    logs = log_dims(mnk(results)) if n else np.zeros((0, 3))
    data = Rows(times[at], count[at], measured[at], logs[at], shape_folds(results, folds, seed)[at])
    floor = t_lower[at]
    members = _members(codes, keys)
    records, errors = {}, {}
    for key, rows in members.items():
        if key not in records:
            records[key], errors[key] = _fit_group(key, data.take(rows), floor[rows], members)
    table = group_table(list(records.values()))
    own, _ = resolve(keys, table)
    per_row = np.full((3, len(at)), np.nan)  # each row by the group that estimates it
    for g, key in enumerate(table[list(KEYS)].itertuples(index=False, name=None)):
        rows, err = members[key], errors[key]
        took = own[codes[rows]] == g
        per_row[:, rows[took]] = err[:, took]
    figures = [x for e in per_row for x in error_figures(e)]
    return Calibration(
        groups=table,
        created=datetime.now(UTC).date().isoformat(),
        source=source,
        source_sha256=source_sha256,
        **dict(zip(ERRORS, figures, strict=True)),
    )


def _members(codes: np.ndarray, keys: pd.DataFrame) -> dict:
    """The rows (positions) of each group key, and of each wider group a small group falls
    back to (every row of its chip and kind, or op and link), in keys' order."""
    order = np.argsort(codes, kind="stable")
    split = np.split(order, np.flatnonzero(np.diff(codes[order])) + 1) if len(codes) else []
    members = {}
    for rows in split:
        k = keys.iloc[codes[rows[0]]]
        key = (str(k["hardware"]), k["kind"], k["dtype"], int(k["chips"]), k["link"])
        members[key] = rows
    own = dict(members)
    for key, rows in own.items():
        if len(rows) < _least(key) and wider(key) != key:
            pooled = np.sort(np.concatenate([r for k, r in own.items() if wider(k) == wider(key)]))
            if len(pooled) > len(rows):  # the same rows again would fit no better
                members[wider(key)] = pooled
    return members


def _least(key: tuple) -> int:
    return MIN_ROWS["alpha_beta" if key[1] in KINDS[2:] else "roofline"]


def _fit_group(key: tuple, data: Rows, floor: np.ndarray, members: dict) -> tuple[dict, np.ndarray]:
    """One group's record (GROUP_COLUMNS) and its rows' errors (3 x rows: the floor, the fit,
    held out; NaN where there is none)."""
    n = len(data.measured)
    before = symmetric_errors(floor, data.measured)
    errors = np.full((3, n), np.nan)
    errors[0] = before
    record = dict(zip(KEYS, key, strict=True))
    record.update(rows=n, shape="", fitted=False, used=False)
    record.update(zip(ERRORS[:2], error_figures(before), strict=True))
    collective = key[1] in KINDS[2:]
    form = "alpha_beta" if collective else "roofline"
    if key[1] == KINDS[0] and n >= MIN_ROWS["roofline+shape"] and np.isfinite(data.logs).all():
        form = "roofline+shape"
    record["form"] = form
    if n < MIN_ROWS[form]:
        reason = f"{n:,} row{'s' * (n != 1)}, {MIN_ROWS[form]} needed"
        if wider(key) in members and wider(key) != key:
            what = f"N={key[3]}" if collective else key[2]
            reason = f"{n:,} row{'s' * (n != 1)}: {what} uses {group_name(wider(key))}"
        return {**record, "reason": reason}, errors
    dominant = bound_codes(data.times[:, 0], data.times[:, 1], data.times[:, 2])
    plan, reasons = _plan(data.times, data.count, dominant)
    if plan is None:
        return {**record, "reason": "; ".join(reasons)}, errors
    slowdown, overhead, shape = _solve_form(data, dominant, plan, form)
    errors[1] = symmetric_errors(_predict(data, slowdown, overhead, shape), data.measured)
    for f in np.unique(data.fold):
        test = data.fold == f
        train = ~test
        if train.sum() < plan.parameters + EXTRA_ROWS:
            continue  # too few rows left to fit: no held-out error for this fold
        s, o, c = _solve_form(data.take(train), dominant[train], plan, form)
        errors[2, test] = symmetric_errors(_predict(data.take(test), s, o, c), data.measured[test])
    record.update(zip(EFFICIENCIES, (1.0 / slowdown).tolist(), strict=True))
    record.update(zip(ERRORS[2:4], error_figures(errors[1]), strict=True))
    record.update(zip(ERRORS[4:], error_figures(errors[2]), strict=True))
    used = bool(record["heldout_median"] < record["floor_median"])
    if not used:
        reasons.append(
            f"not used: its held-out median error {record['heldout_median']:.1%} does not "
            f"beat the floor's {record['floor_median']:.1%}"
        )
    record.update(
        overhead_seconds=float(overhead),
        shape=dumps(shape) if shape is not None else "",
        fitted=True,
        used=used,
        reason="; ".join(reasons),
    )
    return record, errors


def _solve_form(data: Rows, dominant: np.ndarray, plan: Plan, form: str):
    """The slowdowns, overhead and (roofline+shape) shape correction of a form's fit."""
    slowdown, overhead = _solve(data.times, data.count, data.measured, dominant, plan)
    if form != "roofline+shape":
        return slowdown, overhead, None
    residual = np.log(data.measured / _predict(data, slowdown, overhead, None))
    return slowdown, overhead, fit_shape(data.logs, residual)


def _predict(data: Rows, slowdown: np.ndarray, overhead: float, shape) -> np.ndarray:
    t = apply_parameters(data.times, data.count, slowdown[None, :], np.float64(overhead))[0]
    return t if shape is None else t * shape_factor(data.logs, shape)


def shape_folds(results: pd.DataFrame, folds: int, seed: int = 0) -> np.ndarray:
    """Each row's fold (0 .. folds - 1) by a hash of its shape: its dims, chips and einsum,
    a custom op's FLOPs and bytes, a collective's bytes (per op): the same for every dtype
    and chip."""
    if not len(results):
        return np.zeros(0, dtype=np.int64)
    count = roofline_times(results)[1]
    parts = {c: results[c].to_numpy(dtype=float, na_value=np.nan) for c in results.columns
             if is_dim(c)}  # fmt: skip
    custom = op_kinds(results) == KINDS[1]
    for column, only in (("chips", None), ("flops", custom), ("bytes_read", custom),
                         ("network_bytes", None)):  # fmt: skip
        if column in results.columns:
            value = results[column].to_numpy(dtype=float, na_value=np.nan)
            value = value if column == "chips" else value / count
            parts[column] = value if only is None else np.where(only, value, 0.0)
    frame = pd.DataFrame(parts).fillna(-1.0)
    if "einsum" in results.columns:
        frame["einsum"] = results["einsum"].astype(str).to_numpy()
    hashed = pd.util.hash_pandas_object(frame, index=False).to_numpy()
    with np.errstate(over="ignore"):
        mixed = (hashed ^ (np.uint64(seed) * MIX)) * np.uint64(0xBF58476D1CE4E5B9)
    return ((mixed >> np.uint64(33)) % np.uint64(folds)).astype(np.int64)


def _plan(times: np.ndarray, count: np.ndarray, dominant: np.ndarray) -> tuple[Plan | None, list]:
    """What the group's rows can tell apart, and why anything is left out (None: nothing)."""
    n = len(dominant)
    on = np.array([(dominant == k).sum() for k in range(3)])
    free = on >= MIN_TERM_ROWS
    reasons = [
        f"{EFFICIENCIES[k]} left at 1: {BOUNDS[k]}-bound on {on[k]} of {n} rows, "
        f"{MIN_TERM_ROWS} needed"
        for k in range(3)
        if not free[k] and (times[:, k] > 0).any()  # a term the kind never has: nothing to say
    ]
    if not free.any():
        if n < MIN_TERM_ROWS:
            return None, [f"too few rows: {n} measured, at least {MIN_TERM_ROWS} needed"]
        return None, [f"no roofline term is the bound on {MIN_TERM_ROWS} or more of {n} rows"]
    per_op = times.max(axis=1) / count
    spread = max(
        per_op[dominant == k].max() / per_op[dominant == k].min() for k in np.flatnonzero(free)
    )
    overhead = bool(spread >= MIN_SPREAD)
    if not overhead:
        reasons.append(
            f"overhead_seconds left at 0: each term's roofline times span a factor of "
            f"{spread:.3g}, under {MIN_SPREAD}, so an overhead cannot be told from an efficiency"
        )
    plan = Plan(free=free, overhead=overhead)
    if n < plan.parameters + EXTRA_ROWS:
        return None, [
            f"too few rows: {n} measured, {plan.parameters + EXTRA_ROWS} needed for its "
            f"{plan.parameters} parameters"
        ]
    return plan, reasons


def _solve(
    times: np.ndarray,
    count: np.ndarray,
    measured: np.ndarray,
    dominant: np.ndarray,
    plan: Plan,
) -> tuple[np.ndarray, float]:
    """The slowdowns (1 / efficiency, 3) and overhead (seconds) of the least-squares fit."""
    free = np.flatnonzero(plan.free)
    nf = len(free)
    scale = float(np.median(measured / count))  # the overhead in units of a typical op
    log_measured = np.log(measured)
    x0 = np.ones(nf + plan.overhead)
    for j, k in enumerate(free):  # start from the median ratio of the rows the term bounds
        ratio = measured[dominant == k] / times[dominant == k, k]
        start = float(np.exp(np.median(np.log(ratio)))) if len(ratio) else 1.0
        x0[j] = min(max(start, 1.0), SLOWEST)
    if plan.overhead:
        x0[nf] = 0.0
    rows = np.arange(len(measured))
    cache: dict = {}

    def model(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if cache.get("x") is None or not np.array_equal(cache["x"], x):
            slowdown = np.ones(3)
            slowdown[free] = x[:nf]
            derated = times * slowdown
            arg = derated.argmax(axis=1)
            t = derated[rows, arg]
            if plan.overhead:
                t = t + x[nf] * scale * count
            cache.update(x=x.copy(), t=t, arg=arg)
        return cache["t"], cache["arg"]

    def residuals(x: np.ndarray) -> np.ndarray:
        return np.log(model(x)[0]) - log_measured

    def jacobian(x: np.ndarray) -> np.ndarray:
        t, arg = model(x)
        jac = np.empty((len(t), len(x)))
        for j, k in enumerate(free):
            jac[:, j] = np.where(arg == k, times[:, k], 0.0) / t
        if plan.overhead:
            jac[:, nf] = scale * count / t
        return jac

    # within what a calibration file may say (calibration.estimate): every estimate finite
    lower = np.r_[np.ones(nf), np.zeros(int(plan.overhead))]
    upper = np.r_[np.full(nf, SLOWEST), np.full(int(plan.overhead), MAX_OVERHEAD_SECONDS / scale)]
    solution = least_squares(
        residuals, x0, jac=jacobian, bounds=(lower, upper), loss=LOSS, f_scale=F_SCALE,
        method="trf", x_scale="jac",
    )  # fmt: skip
    slowdown = np.ones(3)
    slowdown[free] = np.minimum(solution.x[:nf], SLOWEST)
    overhead = min(float(solution.x[nf] * scale), MAX_OVERHEAD_SECONDS) if plan.overhead else 0.0
    return slowdown, overhead
