"""Rows whose numbers float64 cannot hold: a rate that underflows to 0 (an efficiency of
1e-300, a peak of 5e-324) or a time past about 1.8e308 s. compute_roofline() gives them inf
or NaN without a warning; refused_rows() says which rows, why, and which input to blame, so
that they are rejected like any other bad row (docs/promises.md: "Numbers are exact, or
refused")."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.errors import RowProblem, quoted

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


# the input columns a refusal can blame, in the order of the frame's `given` bits (a row
# gives a value in BLAMED[k] when bit k is set); one the row left blank came from its chip
BLAMED = ("peak_flops", "hbm_bandwidth", "link_bandwidth", "compute_efficiency",
          "hbm_efficiency", "network_efficiency", "bytes", "measured_seconds")  # fmt: skip
REFUSED_COLUMNS = ["line", "name", "series", "column", "reason", "points"]


def refusals(frame: pd.DataFrame, results: pd.DataFrame) -> tuple[np.ndarray, pd.DataFrame]:
    """The one refusal rule of both engines: which of `results` (computed from scenario rows
    `frame`, row for row) to keep, and per input line with a refused scenario its first one
    (line, name, series), the column to blame, why, and how many of its scenarios the model
    refused (`points`). Only the refused scenarios leave: a line's other scenarios (another
    chip of its fleet list, the sweep points that fit in float64) are computed. The column is
    the one the number came from when the row gave it, else `hardware` (its chip gave it)."""
    refused = refused_rows(results)
    keep = np.ones(len(results), dtype=bool)
    if refused.empty:
        return keep, pd.DataFrame(columns=REFUSED_COLUMNS)
    at = refused.index.to_numpy()
    keep[at] = False
    given = frame["given"].to_numpy()[at] if "given" in frame else np.zeros(len(at), np.int16)
    column = refused["column"].to_numpy(dtype=object)
    bit = np.asarray([BLAMED.index(c) if c in BLAMED else -1 for c in column])
    gave = (bit >= 0) & ((given >> np.maximum(bit, 0)) & 1).astype(bool)
    table = pd.DataFrame(
        {
            "line": frame["line"].to_numpy()[at].astype(np.int64),
            "name": results["name"].astype(str).to_numpy()[at],
            "series": results["series"].astype(str).to_numpy()[at],
            "column": np.where(gave, column, "hardware"),
            "reason": refused["reason"].to_numpy(dtype=object),
            "points": np.ones(len(at), dtype=np.int64),
        }
    )
    return keep, merge_refused([table])


def merge_refused(tables: list[pd.DataFrame]) -> pd.DataFrame:
    """Refusals of consecutive frames (in file order) as those of all their rows: per line
    its first refused scenario and the count of them all."""
    both = pd.concat([t for t in tables if len(t)] or tables[:1], ignore_index=True)
    if both.empty:
        return pd.DataFrame(columns=REFUSED_COLUMNS)
    both = both.sort_values("line", kind="stable")
    grouped = both.groupby("line", sort=True)
    first = grouped.first().reset_index()
    first["points"] = grouped["points"].sum().to_numpy()
    return first[REFUSED_COLUMNS]


def refused_problems(source: str, refused: pd.DataFrame) -> list[RowProblem]:
    """The merged refusals as problems, `FILE:LINE: column COL: reason`, one per line: a
    sweep or fleet row says which of its scenarios, and how many more were refused."""
    problems = []
    for line, name, series, column, reason, points in refused.itertuples(index=False):
        if name != series:  # a sweep or fleet point: which one
            more = f" and {points - 1:,} more of its scenarios" if points > 1 else ""
            reason = f"{reason} (at {quoted(name)}{more})"
        problems.append(RowProblem(source, int(line), series, column, reason))
    return problems


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
