"""A calibration: per chip and op kind, the efficiencies and fixed overhead that bring the
roofline floor to measured times, and the estimate they give (DESIGN.md §20; issue 32).

    t_estimate = max(t_math / e_compute, t_hbm / e_hbm, t_network / e_network)
                 + overhead_seconds x count

What a calibration may say keeps every estimate finite (docs/promises.md: no result is ever
inf): each efficiency from MIN_EFFICIENCY to 1, each overhead from 0 to MAX_OVERHEAD_SECONDS
(an hour per op; a row's count is at most 2^53), and an estimate that float64 cannot hold
all the same (a floor past 1e302 s, derated) is none, never inf.

The three times are the results' own (already n x one op's for a row with a `count`, and
already derated by any efficiency columns the row was given: a calibration's efficiencies
are relative to them). The network term's latency floor is scaled with its bandwidth time.
calibration_fit.fit() builds a Calibration, calibration_file reads and writes one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import PurePath

import numpy as np
import pandas as pd

from pipeline.model.roofline import BOUNDS, bound_codes
from pipeline.version import __version__

# the op kinds a calibration tells apart: einsums (matmul, dot, any einsum string), custom
# ops (given FLOPs and bytes) and each collective row
KINDS = ("matmul", "custom", "all_gather", "reduce_scatter", "all_reduce", "all_to_all")
MATMUL, CUSTOM = 0, 1
# the parameter of each roofline term, in the order of BOUNDS (compute, memory, network)
EFFICIENCIES = ("compute_efficiency", "hbm_efficiency", "network_efficiency")
TIMES = ("t_math", "t_hbm", "t_network")
# the range of what a calibration may say (fitted or in a file): see the module
MIN_EFFICIENCY = 1e-6  # a term a million times slower than its roof: past it, a unit mistake
MAX_OVERHEAD_SECONDS = 3600.0  # an hour per op
ERRORS = ("error_before", "error_after", "heldout_error")
# one row per hardware x kind, in this order and with these dtypes (group_table)
GROUP_COLUMNS = {
    "hardware": object,
    "kind": object,
    **dict.fromkeys(EFFICIENCIES, "float64"),
    "overhead_seconds": "float64",
    "rows": "int64",
    **dict.fromkeys(ERRORS, "float64"),
    "fitted": "bool",
    "reason": object,
}


def op_kinds(results: pd.DataFrame) -> np.ndarray:
    """Each row's kind (an object array of KINDS' names): a row with an einsum is "matmul"
    (a sharded one that ends in an AllReduce too: roofline.compute_record gives it
    collective all_reduce but t_math and t_hbm of its own), a row without one is the
    collective its `collective` column names, else "custom"."""
    return np.asarray(KINDS, dtype=object)[kind_codes(results)]


def kind_codes(results: pd.DataFrame) -> np.ndarray:
    """op_kinds() as codes into KINDS (int8), worked out per distinct value, not per row."""
    n = len(results)
    einsum = _codes_and_values(results["einsum"]) if "einsum" in results else None
    if einsum is None:
        has_einsum = np.zeros(n, dtype=bool)
    else:
        codes, values = einsum
        named = np.array([isinstance(v, str) and v.strip() != "" for v in values], dtype=bool)
        has_einsum = np.append(named, False)[codes]  # code -1 (missing): no einsum
    codes, values = _codes_and_values(results["collective"])
    # a collective's code into KINDS; "" (no collective) and anything unknown: custom
    table = np.array(
        [KINDS.index(v) if v in KINDS[2:] else CUSTOM for v in values] + [CUSTOM],
        dtype=np.int8,
    )
    return np.where(has_einsum, MATMUL, table[codes]).astype(np.int8)


def _codes_and_values(column: pd.Series) -> tuple[np.ndarray, list]:
    """Codes (-1: missing) and the distinct values of a column, categorical or not."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return column.cat.codes.to_numpy(), list(column.cat.categories)
    codes, uniques = pd.factorize(column, use_na_sentinel=True)
    return codes, list(uniques)


def relative_errors(t: np.ndarray, measured: np.ndarray) -> np.ndarray:
    """|t / measured - 1| per row: the error every calibration figure averages."""
    return np.abs(t / measured - 1.0)


def group_table(rows: list[dict] | pd.DataFrame) -> pd.DataFrame:
    """The groups of a Calibration from records (or a frame) with GROUP_COLUMNS: those
    columns in that order and dtype, sorted by hardware then KINDS' order, index 0..n-1."""
    frame = pd.DataFrame(rows, columns=list(GROUP_COLUMNS))
    frame = frame.astype(GROUP_COLUMNS)
    order = frame["kind"].map({k: i for i, k in enumerate(KINDS)})
    keys = pd.DataFrame({"hardware": frame["hardware"].astype(str), "order": order})
    frame = frame.loc[keys.sort_values(["hardware", "order"], kind="stable").index]
    return frame.reset_index(drop=True)


@dataclass(frozen=True, eq=False)
class Calibration:
    """Fitted efficiencies and overheads per hardware x kind (`groups`, GROUP_COLUMNS), with
    where they came from and their errors over every row of the fitted groups (mean
    |t / measured - 1|: before = the raw t_lower, after = the fit, held out = k-fold)."""

    groups: pd.DataFrame
    created: str
    source: str = ""
    source_sha256: str = ""
    error_before: float = math.nan
    error_after: float = math.nan
    heldout_error: float = math.nan
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

    def group(self, hardware: str, kind: str) -> pd.Series:
        """The row of one hardware x kind (KeyError when the calibration has none)."""
        at = (self.groups["hardware"] == hardware) & (self.groups["kind"] == kind)
        if not at.any():
            raise KeyError(f"no calibration for {hardware} {kind}")
        return self.groups[at].iloc[0]


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


def group_codes(results: pd.DataFrame, groups: pd.DataFrame) -> np.ndarray:
    """Each row's position in `groups` (by hardware and kind); -1 when it has none."""
    names = pd.Index(groups["hardware"].astype(str).unique())
    codes, values = _codes_and_values(results["hardware"])
    hw = np.append(names.get_indexer([str(v) for v in values]), -1)[codes].astype(np.int64)
    kind = kind_codes(results).astype(np.int64)
    lookup = np.full((max(len(names), 1), len(KINDS)), -1, dtype=np.int64)
    hw_of_group = names.get_indexer(groups["hardware"].astype(str))
    kind_of_group = groups["kind"].map({k: i for i, k in enumerate(KINDS)}).to_numpy()
    lookup[hw_of_group, kind_of_group.astype(np.int64)] = np.arange(len(groups))
    return np.where(hw >= 0, lookup[np.maximum(hw, 0), kind], -1)


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
    report's and the workbook's line): its label, date, source, errors (mean |t / measured
    - 1| before, after and held out), each fitted group's values, and whether any of the
    run's series (`lines`, summary.series) got an estimate from it; None without one."""
    if calibration is None:
        return None
    estimated = (
        lines is not None
        and "e_max" in lines.columns
        and bool(np.isfinite(lines["e_max"].to_numpy(dtype=float)).any())
    )
    groups = calibration.groups
    fitted = groups[groups["fitted"].astype(bool)]
    return {
        "label": calibration_label(calibration),  # short: the source is said once, below
        "created": calibration.created,
        "source": calibration.source,
        "source_sha256": calibration.source_sha256,
        **{k: _number(getattr(calibration, k)) for k in ERRORS},
        "groups": [
            {k: (_number(v) if isinstance(v, float) else v) for k, v in row.items()}
            for row in fitted.drop(columns=["fitted"]).to_dict("records")
        ],
        "unfitted": [f"{h} {k}" for h, k in groups.loc[~groups["fitted"].astype(bool),
                                                        ["hardware", "kind"]].to_numpy()],
        "estimated": estimated,  # False: no row of the run has a chip and kind it fitted
    }  # fmt: skip


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
    estimate: it has no fitted table for the run's chips and op kinds."""
    if not said or said["estimated"]:
        return ()
    fitted = ", ".join(f"{g['hardware']} {g['kind']}" for g in said["groups"]) or "none"
    return (
        f"calibration {said['label']} gives no row an estimate: it has no fitted table for "
        f"this run's chips and op kinds (fitted: {fitted}); the times are the floor "
        "(t_lower) alone",
    )


def _number(value: float) -> float | None:
    return None if value != value else float(value)


# after `bound` (and measured_over_estimate after measured_over_predicted)
def with_estimate(results: pd.DataFrame, calibration: Calibration | None) -> pd.DataFrame:
    """`results` with t_estimate, estimate_bound and calibration after `bound` (each row's
    estimate, its bound, the calibration's label: docs/model.md#calibration); unchanged
    without a calibration. A total row's (a step's, a group's) are filled later, from its
    rows (model.step_totals)."""
    if calibration is None:
        return results
    t, bound = estimate(results, calibration)
    out = results.copy(deep=False)
    at = out.columns.get_loc("bound") + 1
    out.insert(at, "t_estimate", t)
    out.insert(at + 1, "estimate_bound", bound)
    label = calibration_label(calibration)
    out.insert(at + 2, "calibration", pd.Categorical([label] * len(out)))
    if "measured_over_predicted" in out.columns:  # the findings compare with the estimate
        measured = out["measured_seconds"].to_numpy(dtype=float)
        after = out.columns.get_loc("measured_over_predicted") + 1
        out.insert(after, "measured_over_estimate", measured / t)
    return out


def estimate(results: pd.DataFrame, calibration: Calibration) -> tuple[np.ndarray, pd.Categorical]:
    """t_estimate per row (seconds) and its bound (categories BOUNDS): the derated roofline
    terms' max plus the overhead per op. A row whose hardware x kind has no fitted group:
    NaN and a missing bound."""
    groups = calibration.groups
    at = group_codes(results, groups)
    fitted = groups["fitted"].to_numpy(dtype=bool)
    usable = at >= 0
    usable[usable] = fitted[at[usable]]
    with np.errstate(divide="ignore", over="ignore"):  # an unfitted group's nan, or 0
        params = np.column_stack(
            [1.0 / groups[c].to_numpy(dtype=float) for c in EFFICIENCIES]
            + [groups["overhead_seconds"].to_numpy(dtype=float)]
        )
    per_row = np.full((len(results), 4), np.nan)
    per_row[usable] = params[at[usable]]
    times, count = roofline_times(results)
    with np.errstate(invalid="ignore", over="ignore"):
        t, bound = apply_parameters(times, count, per_row[:, :3], per_row[:, 3])
    usable &= np.isfinite(t)  # past float64: no estimate, never inf
    t = np.where(usable, t, np.nan)
    codes = np.where(usable, bound, -1).astype(np.int8)
    return t, pd.Categorical.from_codes(codes, categories=list(BOUNDS))
