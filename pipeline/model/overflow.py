"""Rows whose numbers float64 cannot hold: a rate that underflows to 0 (an efficiency of
1e-300, a peak of 5e-324) or a time past about 1.8e308 s. compute_roofline() gives them inf
or NaN without a warning; refused_rows() says which rows, why, and which input to blame, so
that they are rejected like any other bad row (docs/promises.md: "Numbers are exact, or
refused")."""

from __future__ import annotations

import numpy as np
import pandas as pd

PAST = "is past the largest float64 (about 1.8e308): the tool refuses numbers it cannot hold"
# each time: (column, its work, the work's unit, the efficiency, the nominal rate, its unit)
TIMES = (
    ("t_math", "flops_per_chip", "FLOP", "compute_efficiency", "peak_flops", "FLOP/s"),
    ("t_hbm", "hbm_bytes", "bytes", "hbm_efficiency", "hbm_bandwidth", "bytes/s"),
    ("t_network", "network_bytes", "bytes", "network_efficiency", "link_bandwidth", "bytes/s"),
)
# the other derived numbers that can overflow: (column, the input it points at, numerator,
# denominator), the t_upper sum apart
RATIOS = (
    ("t_upper", "peak_flops", "", ""),
    ("attainable_flops", "peak_flops", "flops_per_chip", "t_lower"),
    ("peak_fraction", "peak_flops", "attainable_flops", "peak_flops"),
    ("intensity", "bytes", "flops_per_chip", "hbm_bytes"),
    ("critical_intensity", "hbm_bandwidth", "compute rate", "HBM rate"),
    ("measured_over_predicted", "measured_seconds", "measured_seconds", "t_lower"),
)


def refused_rows(results: pd.DataFrame) -> pd.DataFrame:
    """The rows of compute_roofline's results to refuse, by position: `column` (the input
    column the number comes from: an efficiency, a rate, bytes or measured_seconds) and
    `reason`. A time must be finite; the other numbers may be empty (NaN) but not infinite."""
    col = {c: results[c].to_numpy(dtype=float, na_value=np.nan) for c in _columns(results)}
    checks = [~np.isfinite(col[t]) for t, *_ in TIMES]
    checks += [np.isinf(col[c]) if c in col else np.zeros(len(results), bool) for c, *_ in RATIOS]
    failed = np.stack(checks) if len(results) else np.zeros((len(checks), 0), bool)
    positions = np.flatnonzero(failed.any(axis=0))
    first = failed[:, positions].argmax(axis=0)  # each row's first number that failed
    rows = [_why(col, int(p), int(k)) for p, k in zip(positions, first, strict=True)]
    return pd.DataFrame(rows, index=positions, columns=["column", "reason"])


def _columns(results: pd.DataFrame) -> list[str]:
    wanted = {c for term in TIMES for c in term[:2] + term[3:5]}
    wanted |= {c for term in RATIOS for c in term}
    return [c for c in results.columns if c in wanted]


def _why(col: dict[str, np.ndarray], p: int, k: int) -> tuple[str, str]:
    """The input to blame and the reason for row p, whose k-th number (TIMES, RATIOS) failed."""
    if k < len(TIMES):
        time, work, unit, eff, nominal, rate_unit = TIMES[k]
        w, e, r = col[work][p], col[eff][p], col[nominal][p]
        # at the nominal rate the time would be finite: the efficiency is what breaks it
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            blame = eff if e < 1 and np.isfinite(w / r) else nominal
        if e * r == 0:
            return blame, (
                f"{eff} × {nominal} = {e:g} × {r:g} {rate_unit} underflows to 0 in float64, so "
                f"{time} would be infinite; the rate must be a positive float64"
            )
        if np.isnan(col[time][p]):
            return blame, f"{time} of {w:g} {unit} at {e:g} × {r:g} {rate_unit} is not a number"
        return blame, f"{time} = {w:g} {unit} / ({e:g} × {r:g} {rate_unit}) {PAST}"
    name, blame, top, bottom = RATIOS[k - len(TIMES)]
    if name == "t_upper":
        parts = [col[t][p] for t, *_ in TIMES]
        return TIMES[int(np.argmax(parts))][4], (
            f"t_upper = t_math + t_hbm + t_network = {' + '.join(f'{x:g}' for x in parts)} s {PAST}"
        )
    if name == "critical_intensity":
        a = col["compute_efficiency"][p] * col["peak_flops"][p]
        b = col["hbm_efficiency"][p] * col["hbm_bandwidth"][p]
    else:
        a, b = col[top][p], col[bottom][p]
    return blame, f"{name} = {top} / {bottom} = {a:g} / {b:g} {PAST}"
