"""Fitting a calibration to measured times (DESIGN.md §20; issue 32): per hardware x op kind,
the efficiencies (1e-6 <= e <= 1) and the fixed overhead per op (0 to an hour) that bring
the roofline to the rows' `measured_seconds`.

The fit (scipy.optimize.least_squares, trust-region reflective, analytic Jacobian) is over
the parameters 1 <= s = 1 / e <= 1 / MIN_EFFICIENCY and 0 <= overhead <= MAX_OVERHEAD_SECONDS
(what a calibration file may say: calibration.estimate), simple bounds, minimizing the robust
(soft_l1, scale F_SCALE) sum of r = log(t_estimate / measured): a relative error, the same
weight for a 1 µs op as for a 1 s one, and a few wild measurements cannot drag it.

What is fitted, per group (said in the group's `reason`, never guessed):
- an efficiency only when its term (t_math, t_hbm, t_network) is the raw roofline's bound on
  at least MIN_TERM_ROWS rows; otherwise it stays 1. No such term: the group is not fitted.
- the overhead only when some fitted term's rows span a factor of MIN_SPREAD or more in
  their roofline time per op: within less, an overhead cannot be told from an efficiency,
  so the efficiencies alone are fitted and the overhead stays 0.
- a group with fewer than its parameters + EXTRA_ROWS rows is not fitted (values NaN).

Errors (calibration.relative_errors): the mean of |t / measured - 1| over the group's rows,
t the raw t_lower (before), the fit (after), or the fit of the other folds (held out: k-fold,
k = min(folds, rows), so leave-one-out below `folds` rows; folds drawn with a fixed seed).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np
import pandas as pd
from scipy.optimize import least_squares

from pipeline.calibration.estimate import (
    EFFICIENCIES,
    KINDS,
    MAX_OVERHEAD_SECONDS,
    MIN_EFFICIENCY,
    Calibration,
    apply_parameters,
    group_table,
    kind_codes,
    op_kinds,
    relative_errors,
    roofline_times,
)
from pipeline.model.roofline import BOUNDS, bound_codes

MIN_TERM_ROWS = 3  # rows a term must be the bound on for its efficiency to be fitted
MIN_SPREAD = 1.5  # the factor a term's roofline times must span for an overhead to be fitted
EXTRA_ROWS = 2  # rows a group needs beyond its number of parameters
LOSS, F_SCALE = "soft_l1", 0.05  # residuals past ~5 % count linearly, not squared
SLOWEST = 1.0 / MIN_EFFICIENCY  # the largest slowdown (1 / efficiency) fitted
# a measurement's unit in doubt (unit_warnings): a group's median measured / t_lower past
# SLOW or a fitted efficiency under LOW (1 %), or its median under FAST (a tenth of the floor)
SLOW, LOW, FAST = 100.0, 0.01, 0.1
UNITS = (("nanoseconds", 1e9), ("microseconds", 1e6), ("milliseconds", 1e3))
TERMS = ("compute", "HBM", "network")  # EFFICIENCIES' terms as calibrate's lines say them


@dataclass(frozen=True)
class Plan:
    """What a group's fit frees: which of the three efficiencies, and the overhead."""

    free: np.ndarray  # bool[3], EFFICIENCIES' order
    overhead: bool

    @property
    def parameters(self) -> int:
        return int(self.free.sum()) + int(self.overhead)


def fit(
    results: pd.DataFrame,
    *,
    source: str = "",
    source_sha256: str = "",
    folds: int = 5,
    seed: int = 0,
) -> Calibration:
    """A Calibration fitted to the rows of `results` with a finite positive
    `measured_seconds` (and a finite positive t_lower), one group per hardware x kind."""
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
    rows = np.flatnonzero(use)
    hw_codes, hardware = pd.factorize(results["hardware"].to_numpy()[rows])
    key = hw_codes.astype(np.int64) * len(KINDS) + kind_codes(results)[rows]
    order = np.argsort(key, kind="stable")
    records, errors = [], []
    for part in np.split(order, np.flatnonzero(np.diff(key[order])) + 1) if len(rows) else []:
        at, g = rows[part], key[part[0]]  # a group's rows: one chip, one kind
        record, per_row = _fit_group(times[at], count[at], measured[at], folds, seed)
        hw, kind = str(hardware[g // len(KINDS)]), KINDS[g % len(KINDS)]
        records.append({"hardware": hw, "kind": kind, **record})
        if record["fitted"]:
            errors.append(per_row)
    # over every row of the fitted groups: a group weighs as its rows
    means = np.concatenate(errors, axis=1).mean(axis=1) if errors else np.full(3, np.nan)
    return Calibration(
        groups=group_table(records),
        created=datetime.now(UTC).date().isoformat(),
        source=source,
        source_sha256=source_sha256,
        error_before=float(means[0]),
        error_after=float(means[1]),
        heldout_error=float(means[2]),
    )


def _fit_group(
    times: np.ndarray, count: np.ndarray, measured: np.ndarray, folds: int, seed: int
) -> tuple[dict, np.ndarray]:
    """One group's record (GROUP_COLUMNS but hardware and kind) and its rows' errors
    (3 x rows: before, after, held out)."""
    n = len(measured)
    before = relative_errors(times.max(axis=1), measured)
    dominant = bound_codes(times[:, 0], times[:, 1], times[:, 2])
    plan, reasons = _plan(times, count, dominant)
    record = {"rows": n, "error_before": float(before.mean())}
    if plan is None:
        nan = dict.fromkeys((*EFFICIENCIES, "overhead_seconds", "error_after", "heldout_error"))
        return {**record, **nan, "fitted": False, "reason": "; ".join(reasons)}, before[None]
    slowdown, overhead = _solve(times, count, measured, dominant, plan)
    after = relative_errors(_predict(times, count, slowdown, overhead), measured)
    k = min(folds, n)
    fold = np.random.default_rng(seed).permutation(n) % k
    heldout = np.empty(n)
    for f in range(k):
        test = fold == f
        train = ~test
        s, o = _solve(times[train], count[train], measured[train], dominant[train], plan)
        heldout[test] = relative_errors(_predict(times[test], count[test], s, o), measured[test])
    record.update(zip(EFFICIENCIES, (1.0 / slowdown).tolist(), strict=True))
    record.update(
        overhead_seconds=float(overhead),
        error_after=float(after.mean()),
        heldout_error=float(heldout.mean()),
        fitted=True,
        reason="; ".join(reasons),
    )
    return record, np.vstack([before, after, heldout])


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


def _predict(
    times: np.ndarray, count: np.ndarray, slowdown: np.ndarray, overhead: float
) -> np.ndarray:
    return apply_parameters(times, count, slowdown[None, :], np.float64(overhead))[0]


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


def unit_warnings(rows: pd.DataFrame, calibration: Calibration) -> tuple[str, ...]:
    """What the measurements' size says of their unit: a group (chip x kind) whose median
    measured / t_lower is past SLOW, or whose fit gives an efficiency under LOW, looks measured
    in milliseconds (or µs, ns: the largest unit that leaves the times above the floor); one
    whose median is under FAST is below the floor, which no measured time can be."""
    measured = rows["measured_seconds"].to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = measured / rows["t_lower"].to_numpy(dtype=float)
    usable = np.isfinite(ratio) & (ratio > 0)
    names = rows["hardware"].astype(str).to_numpy(dtype=object) + " " + op_kinds(rows)
    median = pd.Series(ratio[usable]).groupby(names[usable], sort=False).median()
    groups = calibration.groups
    fitted = groups[groups["fitted"].to_numpy(dtype=bool)]
    low = {}
    for g in fitted.to_dict("records"):  # a few chips x kinds
        under = [f"{w} {g[e] * 100:.2g} %" for w, e in zip(TERMS, EFFICIENCIES, strict=True)
                 if g[e] < LOW]  # fmt: skip
        if under:
            low[f"{g['hardware']} {g['kind']}"] = ", ".join(under)
    slow = [n for n in median.index if median[n] > SLOW or n in low]
    fast = [n for n in median.index if median[n] < FAST]
    said = []
    if slow:
        typical = float(np.median(ratio[usable & np.isin(names, slow)]))
        where = "; ".join(f"{n} {low[n]}" if n in low else n for n in slow)
        unit = next(((u, f) for u, f in UNITS if typical / f >= 1.0), None)
        what = f"a median {typical:,.0f}\u00d7 the roofline's floor ({where})"
        if unit is None:
            said.append(
                f"measured_seconds are far above the floor, {what}: are they in seconds, and "
                "each the time of its row's op (times its count)?"
            )
        else:
            said.append(
                f"measured_seconds look like {unit[0]}: {what}; measured_seconds is in "
                f"seconds: divide them by {unit[1]:,.0f}"
            )
    if fast:
        typical = float(np.median(ratio[usable & np.isin(names, fast)]))
        said.append(
            f"measured_seconds are far below the roofline's floor, which no measured time can "
            f"beat: a median {typical:.2g}\u00d7 it ({', '.join(fast)}); are they in seconds, "
            "and are the rows' chip and count the ones measured?"
        )
    return tuple(said)
