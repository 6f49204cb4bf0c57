"""A calibration: per group (chip x op kind x compute dtype; a collective's chip x op x link
x chip count: calibration.groups), the efficiencies, fixed overhead and shape correction that
bring the roofline floor to measured times, and the estimate they give (DESIGN.md §20; issues
32, 41). A group's `form`:

    roofline        t = max(t_math / e_compute, t_hbm / e_hbm, t_network / e_network)
                        + overhead_seconds x count
    roofline+shape  the roofline form x the shape correction of m, n, k (calibration.shape)
    alpha_beta      t = overhead_seconds x count + t_bw / e_network (a collective: t_bw its
                        bandwidth time without the latency floor, the overhead its alpha)

What a calibration may say keeps every estimate finite (docs/promises.md: no result is ever
inf): each efficiency from MIN_EFFICIENCY to 1, each overhead from 0 to MAX_OVERHEAD_SECONDS
(an hour per op; a row's count is at most 2^53), and an estimate that float64 cannot hold
all the same (a floor past 1e302 s, derated) is none, never inf.

The three times are the results' own (already n x one op's for a row with a `count`, and
already derated by any efficiency columns the row was given: a calibration's efficiencies
are relative to them). Without the facts' latency knee, a collective's t_bw keeps the floor.
calibration.fit.fit() builds a Calibration, calibration.file reads and writes one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import PurePath

import numpy as np
import pandas as pd

from pipeline.calibration.groups import KEYS, KINDS, codes_and_values, group_name, resolve, row_keys
from pipeline.calibration.groups import kind_codes as kind_codes
from pipeline.calibration.groups import op_kinds as op_kinds
from pipeline.calibration.shape import loads as load_shape
from pipeline.calibration.shape import log_dims, mnk, shape_factor
from pipeline.model.groups import TOTAL_OPS
from pipeline.model.roofline import BOUNDS, bound_codes
from pipeline.version import __version__

# the parameter of each roofline term, in the order of BOUNDS (compute, memory, network)
EFFICIENCIES = ("compute_efficiency", "hbm_efficiency", "network_efficiency")
TIMES = ("t_math", "t_hbm", "t_network")
FORMS = ("roofline", "roofline+shape", "alpha_beta")
# the range of what a calibration may say (fitted or in a file): see the module
MIN_EFFICIENCY = 1e-6  # a term a million times slower than its roof: past it, a unit mistake
MAX_OVERHEAD_SECONDS = 3600.0  # an hour per op
# the symmetric error max(t / m, m / t) - 1's median and p90 over rows: the floor (t_lower),
# the fit in sample, the fit held out (folds by the shape's hash: calibration.fit)
ERRORS = ("floor_median", "floor_p90", "median", "p90", "heldout_median", "heldout_p90")
# one row per group, in this order and with these dtypes (group_table)
GROUP_COLUMNS = {
    "hardware": object,
    "kind": object,
    "dtype": object,
    "chips": "int64",
    "link": object,
    "form": object,
    **dict.fromkeys(EFFICIENCIES, "float64"),
    "overhead_seconds": "float64",
    "shape": object,
    "rows": "int64",
    **dict.fromkeys(ERRORS, "float64"),
    "fitted": "bool",
    "used": "bool",
    "reason": object,
}


def symmetric_errors(t: np.ndarray, measured: np.ndarray) -> np.ndarray:
    """max(t / measured, measured / t) - 1 per row: the error every calibration figure is a
    median or p90 of (0 for an exact estimate; 1 for one twice or half the measured time)."""
    ratio = t / measured
    return np.maximum(ratio, 1.0 / ratio) - 1.0


def error_figures(errors: np.ndarray) -> tuple[float, float]:
    """The median and p90 of errors (NaN ignored; NaN, NaN for none)."""
    errors = errors[np.isfinite(errors)]
    if not len(errors):
        return math.nan, math.nan
    median, p90 = np.quantile(errors, (0.5, 0.9))
    return float(median), float(p90)


def group_table(rows: list[dict] | pd.DataFrame) -> pd.DataFrame:
    """The groups of a Calibration from records (or a frame) with GROUP_COLUMNS: those
    columns in that order and dtype, sorted by hardware, KINDS' order, link, chips, dtype,
    index 0..n-1."""
    frame = pd.DataFrame(rows, columns=list(GROUP_COLUMNS))
    frame = frame.astype(GROUP_COLUMNS)
    keys = pd.DataFrame(
        {
            "hardware": frame["hardware"].astype(str),
            "order": frame["kind"].map({k: i for i, k in enumerate(KINDS)}),
            "link": frame["link"].astype(str),
            "chips": frame["chips"],
            "dtype": frame["dtype"].astype(str),
        }
    )
    frame = frame.loc[keys.sort_values(list(keys.columns), kind="stable").index]
    return frame.reset_index(drop=True)


@dataclass(frozen=True, eq=False)
class Calibration:
    """Fitted groups (`groups`, GROUP_COLUMNS), with where they came from and their errors
    (ERRORS: median and p90 of the symmetric error over every row a used group estimates,
    each by the group that estimates it: the floor, the fit, the fit held out)."""

    groups: pd.DataFrame
    created: str
    source: str = ""
    source_sha256: str = ""
    floor_median: float = math.nan
    floor_p90: float = math.nan
    median: float = math.nan
    p90: float = math.nan
    heldout_median: float = math.nan
    heldout_p90: float = math.nan
    version: str = field(default=__version__)
    # what results say was applied (the file's name and hash: with_estimate); not compared
    label: str = field(default="", compare=False)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Calibration):
            return NotImplemented
        scalars = ("created", "source", "source_sha256", "version")
        return (
            all(getattr(self, k) == getattr(other, k) for k in scalars)
            and all(_same(getattr(self, k), getattr(other, k)) for k in ERRORS)
            and self.groups.equals(other.groups)
            and list(self.groups.dtypes) == list(other.groups.dtypes)
        )

    __hash__ = None  # type: ignore[assignment]  # holds a DataFrame: not hashable

    def group(self, hardware: str, kind: str, dtype: str = "", chips: int = 0, link: str = ""):
        """The row of one group (KeyError when the calibration has none)."""
        g = self.groups
        at = (
            (g["hardware"] == hardware) & (g["kind"] == kind) & (g["dtype"] == dtype)
            & (g["chips"] == chips) & (g["link"] == link)
        )  # fmt: skip
        if not at.any():
            raise KeyError(f"no calibration for {group_name((hardware, kind, dtype, chips, link))}")
        return g[at].iloc[0]


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


def roofline_times(results: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """The three roofline times (n x 3, TIMES' order) and each row's count (1 when the
    results have no count column)."""
    times = np.column_stack([results[c].to_numpy(dtype=float) for c in TIMES])
    if "count" in results.columns:
        count = results["count"].to_numpy(dtype=float)
    else:
        count = np.ones(len(results))
    return times, count


def bandwidth_times(results: pd.DataFrame, count: np.ndarray, knee) -> np.ndarray:
    """A collective's t_network without its latency floor: scaled by V / knee below the
    knee (the facts' latency_knee, V one op's network bytes); t_network itself where the
    knee is unknown (None, NaN)."""
    t = results["t_network"].to_numpy(dtype=float)
    if knee is None or "network_bytes" not in results.columns:
        return t
    knee = np.asarray(knee, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = results["network_bytes"].to_numpy(dtype=float) / count / knee
    return np.where(np.isfinite(share), t * np.minimum(share, 1.0), t)


def apply_parameters(
    times: np.ndarray, count: np.ndarray, slowdown: np.ndarray, overhead: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The estimate and its bound's code per row, from per-row slowdowns (1 / efficiency,
    n x 3) and overheads: max of the derated terms plus overhead x count."""
    derated = times * slowdown
    top = derated.max(axis=1)
    bound = bound_codes(derated[:, 0], derated[:, 1], derated[:, 2])
    return top + overhead * count, bound


def calibration_summary(calibration: Calibration | None, lines=None) -> dict | None:
    """What a run says of the calibration it applied (summary.json's `calibration`, the
    report's and the workbook's line): its label, date, source, errors (ERRORS: median and
    p90 of the symmetric error, the floor's, the fit's and held out), each used group's
    values (but its shape correction), the groups not used, and whether any of the run's
    series (`lines`, summary.series) got an estimate from it; None without one."""
    if calibration is None:
        return None
    estimated = (
        lines is not None
        and "e_max" in lines.columns
        and bool(np.isfinite(lines["e_max"].to_numpy(dtype=float)).any())
    )
    groups = calibration.groups
    used = groups["used"].to_numpy(dtype=bool)
    return {
        "label": calibration_label(calibration),  # short: the source is said once, below
        "created": calibration.created,
        "source": calibration.source,
        "source_sha256": calibration.source_sha256,
        **{k: _number(getattr(calibration, k)) for k in ERRORS},
        "groups": [
            {k: (_number(v) if isinstance(v, float) else v) for k, v in row.items()}
            for row in groups[used].drop(columns=["shape", "fitted", "used"]).to_dict("records")
        ],
        "unfitted": [
            group_name(k) for k in groups.loc[~used, list(KEYS)].itertuples(index=False, name=None)
        ],  # fmt: skip
        "estimated": estimated,  # False: no row of the run has a chip and kind it fitted
    }


LABEL_LIMIT = 120  # characters of a label made from a source's name


def calibration_label(calibration: Calibration) -> str:
    """What the results (each row's `calibration`) and a run's summary call a calibration:
    its label (a file's name and hash), else its source's file name (its first LABEL_LIMIT
    characters), else 'calibration'; never the whole source, which the summary holds once."""
    if calibration.label:
        return calibration.label
    name = PurePath(calibration.source).name if calibration.source else ""
    if len(name) > LABEL_LIMIT:
        name = name[: LABEL_LIMIT - 1] + "\u2026"
    return name or "calibration"


def unused_warnings(said: dict | None) -> tuple[str, ...]:
    """The warning of a run whose calibration (calibration_summary's) gave no row an
    estimate: it has no used group for the run's chips and op kinds."""
    if not said or said["estimated"]:
        return ()
    names = [group_name(tuple(g[k] for k in KEYS)) for g in said["groups"]]
    return (
        f"calibration {said['label']} gives no row an estimate: it has no fitted table for "
        f"this run's chips and op kinds (fitted: {', '.join(names) or 'none'}); the times are "
        "the floor (t_lower) alone",
    )


def _number(value: float) -> float | None:
    return None if value != value else float(value)


# after `bound` (and measured_over_estimate after measured_over_predicted)
def with_estimate(
    results: pd.DataFrame, calibration: Calibration | None, facts: pd.DataFrame | None = None
) -> pd.DataFrame:
    """`results` with t_estimate, estimate_bound and calibration after `bound` (each row's
    estimate, its bound, the calibration's label, with the group a borrowed estimate comes
    from: docs/model.md#calibration); unchanged without a calibration. `facts` (row for row):
    a collective's latency knee, a row's place in a transformer step. A total row's (a
    step's, a group's) are filled later, from its rows (model.step_totals)."""
    if calibration is None:
        return results
    t, bound, borrowed = _estimate(results, calibration, facts)
    out = results.copy(deep=False)
    at = out.columns.get_loc("bound") + 1
    out.insert(at, "t_estimate", t)
    out.insert(at + 1, "estimate_bound", bound)
    label = calibration_label(calibration)
    keys = calibration.groups[list(KEYS)].itertuples(index=False, name=None)
    lends = [(i, k) for i, k in enumerate(keys) if k[1] == KINDS[0]]  # a matmul group may lend
    names = [label] + [f"{label} (borrowed: {group_name(k)})" for _, k in lends]
    code = np.zeros(len(calibration.groups) + 1, dtype=np.int64)  # -1 (none): the label alone
    code[[i for i, _ in lends]] = np.arange(1, len(lends) + 1)
    # the same categories in every partition of a run, whichever rows borrow
    out.insert(at + 2, "calibration", pd.Categorical.from_codes(code[borrowed], names))
    if "measured_over_predicted" in out.columns:  # the findings compare with the estimate
        measured = out["measured_seconds"].to_numpy(dtype=float)
        after = out.columns.get_loc("measured_over_predicted") + 1
        out.insert(after, "measured_over_estimate", measured / t)
    return out


def estimate(
    results: pd.DataFrame, calibration: Calibration, facts: pd.DataFrame | None = None
) -> tuple[np.ndarray, pd.Categorical]:
    """t_estimate per row (seconds) and its bound (categories BOUNDS), each row by the most
    specific used group of its key (calibration.groups), a transformer step's custom row
    without one by the matmul group it borrows (`facts`' in_step). A row with none, or whose
    estimate float64 cannot hold: NaN and a missing bound."""
    t, bound, _ = _estimate(results, calibration, facts)
    return t, bound


def _estimate(
    results: pd.DataFrame, calibration: Calibration, facts: pd.DataFrame | None
) -> tuple[np.ndarray, pd.Categorical, np.ndarray]:
    """estimate() and the group each row borrows from (-1: none)."""
    groups = calibration.groups
    n = len(results)
    codes, keys = row_keys(results)
    own, borrows = resolve(keys, groups)
    at, borrowed = own[codes], borrows[codes]
    in_step = (
        facts["in_step"].to_numpy(dtype=bool)
        if facts is not None and "in_step" in facts.columns
        else np.zeros(n, dtype=bool)
    )
    if in_step.any():  # a step's total row is not one of its ops: its sum comes later
        ops, names = codes_and_values(results["op"])
        total = np.append(np.isin(np.asarray(names, dtype=object), list(TOTAL_OPS)), False)
        in_step = in_step & ~total[ops]
    borrowed = np.where((at < 0) & in_step, borrowed, -1)
    with np.errstate(divide="ignore", over="ignore"):  # a file's nan, or 0
        slow = np.column_stack([1.0 / groups[c].to_numpy(dtype=float) for c in EFFICIENCIES])
    overhead = groups["overhead_seconds"].to_numpy(dtype=float)
    slowdown, per_op = np.full((n, 3), np.nan), np.full(n, np.nan)
    slowdown[at >= 0], per_op[at >= 0] = slow[at[at >= 0]], overhead[at[at >= 0]]
    lent = borrowed >= 0  # the matmul group's HBM efficiency and overhead alone
    slowdown[lent] = 1.0
    slowdown[lent, 1], per_op[lent] = slow[borrowed[lent], 1], overhead[borrowed[lent]]
    times, count = roofline_times(results)
    form = groups["form"].to_numpy(dtype=object)
    knee = (facts if facts is not None else results).get("latency_knee")
    beta = (at >= 0) & (np.append(form, "")[at] == "alpha_beta")
    if beta.any():
        times[beta, 2] = bandwidth_times(results, count, knee)[beta]
    # a sharded matmul that ends in an AllReduce: its GEMM by its own group, its AllReduce
    # by the chip's collective group (the GEMM's has no network fit), the larger of the two
    sends, net = _collective_terms(results, groups, at, count, knee)
    times[sends, 2] = 0.0
    with np.errstate(invalid="ignore", over="ignore"):
        t, bound = apply_parameters(times, count, slowdown, per_op)
        shaped = np.flatnonzero(form == "roofline+shape")
        logs = log_dims(mnk(results)) if np.isin(at, shaped).any() else None
        for g in shaped:  # a few groups
            rows = at == g
            if rows.any():
                t[rows] *= shape_factor(logs[rows], load_shape(groups["shape"].iat[g]))
        if sends.any():
            talk = net > t[sends]
            t[sends] = np.maximum(t[sends], net)
            bound[sends] = np.where(talk, 2, bound[sends])
    usable = ((at >= 0) | lent) & np.isfinite(t)  # past float64: no estimate, never inf
    t = np.where(usable, t, np.nan)
    codes = np.where(usable, bound, -1).astype(np.int8)
    return t, pd.Categorical.from_codes(codes, categories=list(BOUNDS)), borrowed


def _collective_terms(results: pd.DataFrame, groups: pd.DataFrame, at: np.ndarray,
                      count: np.ndarray, knee) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """The rows of matmul groups that end in an AllReduce with a used collective group of
    their chip, link and chip count (a mask) and that AllReduce's estimate per such row (its
    group's alpha + bandwidth time / efficiency, or its roofline form's)."""
    n = len(results)
    none = np.zeros(n, dtype=bool), np.zeros(0)
    if "collective" not in results.columns or not (at >= 0).any():
        return none
    talks = (
        (results["collective"].astype(str) == "all_reduce").to_numpy(dtype=bool)
        & (kind_codes(results) == KINDS.index("matmul"))
        & (at >= 0)
        & (results["t_network"].to_numpy(dtype=float) > 0)
    )
    if not talks.any():
        return none
    sub = results[talks].assign(einsum="")  # as the collective row it ends in
    codes, keys = row_keys(sub)
    group = resolve(keys, groups)[0][codes]
    rows = np.flatnonzero(talks)[group >= 0]
    group = group[group >= 0]
    sends = np.zeros(n, dtype=bool)
    sends[rows] = True
    efficiency = groups["network_efficiency"].to_numpy(dtype=float)[group]
    alpha = groups["overhead_seconds"].to_numpy(dtype=float)[group] * count[rows]
    beta = groups["form"].to_numpy(dtype=object)[group] == "alpha_beta"
    t_net = results["t_network"].to_numpy(dtype=float)[rows]
    t_bw = bandwidth_times(results, count, knee)[rows]
    with np.errstate(divide="ignore", over="ignore"):
        return sends, alpha + np.where(beta, t_bw, t_net) / efficiency
