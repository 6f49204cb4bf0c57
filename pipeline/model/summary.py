"""The statistics of a run, computed once from its results: bound counts (per hardware and per
op), rows that do not fit, rows that override the catalog, critical batches per series, sweep
series, and the findings a reviewer looks at first. Every output (terminal, manifest, charts,
workbook, report, batch index) reads them from here (docs/outputs.md)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from pipeline.model.catalog import LINKS
from pipeline.model.dtypes import DTYPES, PEAK_FAMILIES
from pipeline.model.roofline import BOUNDS

COUNT_COLUMNS = (*BOUNDS, "not_fitting", "total")
SLOWEST_ROWS = 10  # series listed in "slowest scenarios"
FINDING_ROWS = 20  # series listed per finding; the finding's count covers every row
MEASURED_RANGE = (0.5, 2.0)  # measured / predicted outside this is called out


@dataclass(frozen=True, eq=False)
class Summary:
    """What a run found, over every scenario. Counts are plain ints; tables are DataFrames."""

    scenarios: int
    source_rows: int
    rejected_rows: int  # input lines with at least one problem
    problems: int  # problems found (a line may have several)
    bounds: Mapping[str, int]  # compute / memory / network -> scenarios
    not_fitting: int
    per_hardware: pd.DataFrame  # index hardware: compute, memory, network, not_fitting, total
    per_op: pd.DataFrame  # index op: the same columns
    overrides: Mapping[str, int]  # hardware -> rows using their own peak/HBM/link numbers
    critical_batches: pd.DataFrame  # per series with one: hardware, op, dtypes, low, high
    _results: pd.DataFrame = field(repr=False)

    @cached_property
    def series(self) -> pd.DataFrame:
        """Per sweep series: rows, hardware, bound counts, critical batch range, best fraction of
        peak, range of t_lower."""
        return series_table(self._results)

    @cached_property
    def findings(self) -> dict:
        """The slowest scenarios, the communication-bound ones, those that do not fit, and
        those whose measured time is far from the prediction (a sweep listed once)."""
        return findings(self._results)


def summarize(
    results: pd.DataFrame, hardware: list[dict], source_rows: int, rejected: int, problems: int
) -> Summary:
    """The Summary of a run's results; `hardware` holds the catalog records of its chips."""
    counts = results["bound"].value_counts()
    return Summary(
        scenarios=len(results),
        source_rows=source_rows,
        rejected_rows=rejected,
        problems=problems,
        bounds={b: int(counts.get(b, 0)) for b in BOUNDS},
        not_fitting=int(not_fitting(results).sum()),
        per_hardware=bound_counts(results, "hardware"),
        per_op=bound_counts(results, "op"),
        overrides=override_counts(results, hardware),
        critical_batches=critical_batches(results),
        _results=results,
    )


def not_fitting(results: pd.DataFrame) -> pd.Series:
    """True for rows whose footprint is over the chip's HBM capacity (unknown: they fit)."""
    return ~results["fits"].astype("boolean").fillna(True).astype(bool)


def bound_counts(results: pd.DataFrame, key: str) -> pd.DataFrame:
    """Per value of `key`: compute-, memory-, network-bound, not fitting and total rows."""
    groups = results[key].astype(str)
    table = pd.crosstab(groups, results["bound"].astype(str)).reindex(
        columns=list(BOUNDS), fill_value=0
    )
    table["not_fitting"] = not_fitting(results).astype(int).groupby(groups).sum()
    table["total"] = table[list(BOUNDS)].sum(axis=1)
    table.index.name = key
    table.columns.name = None
    return table.astype("int64").sort_index()


def critical_batches(results: pd.DataFrame) -> pd.DataFrame:
    """Per series with a critical batch, in file order: hardware, op, dtypes, lowest and
    highest critical batch."""
    columns = ["hardware", "op", "dtypes", "low", "high"]
    has = results[results["critical_batch"].notna()]
    if has.empty:
        return pd.DataFrame(columns=columns, index=pd.Index([], name="series"))
    grouped = has.groupby("series", sort=False, observed=True)
    first = grouped[["hardware", "op", "x_dtype", "y_dtype", "compute_dtype"]].first()
    table = pd.DataFrame(
        {
            "hardware": first["hardware"].astype(str),
            "op": first["op"].astype(str),
            "dtypes": first["x_dtype"].astype(str)
            + " × "
            + first["y_dtype"].astype(str)
            + " → "
            + first["compute_dtype"].astype(str),
            "low": grouped["critical_batch"].min().astype("int64"),
            "high": grouped["critical_batch"].max().astype("int64"),
        }
    )
    table.index = table.index.astype(str).rename("series")
    return table


def override_counts(results: pd.DataFrame, hardware: list[dict]) -> dict[str, int]:
    """Per chip: rows whose peak, HBM bandwidth or capacity, or link bandwidth (when they
    communicate) differ from the catalog's."""
    out = {}
    by_chip = results.groupby(results["hardware"].astype(str), sort=False).indices
    records = {str(r["name"]): r for r in hardware}
    for chip, idx in by_chip.items():
        rec = records.get(chip)
        out[chip] = _overrides(results.iloc[idx], rec) if rec else 0
    return out


def _value(rec: dict, key: str) -> float:
    value = rec.get(key)
    return float("nan") if value is None else float(value)


def _overrides(rows: pd.DataFrame, rec: dict) -> int:
    family = rows["compute_dtype"].astype(str).map({k: v[2] for k, v in DTYPES.items()})
    peak = family.map({f: _value(rec, f"peak_{f}") for f in PEAK_FAMILIES})
    link_bw = rows["link"].astype(str).map({k: _value(rec, f"{k}_bandwidth") for k in LINKS})

    def differs(column: str, catalog) -> np.ndarray:
        given = rows[column].to_numpy(dtype=float)
        expected = np.broadcast_to(np.asarray(catalog, dtype=float), given.shape)
        same = np.isclose(given, expected, rtol=1e-9, atol=0.0) | (
            np.isnan(given) & np.isnan(expected)
        )
        return ~same

    changed = (
        differs("peak_flops", peak)
        | differs("hbm_bandwidth", _value(rec, "hbm_bandwidth"))
        | differs("hbm_capacity", _value(rec, "hbm_capacity"))
        | (differs("link_bandwidth", link_bw) & (rows["collective"].astype(str) != "").to_numpy())
    )
    return int(changed.sum())


def series_table(results: pd.DataFrame) -> pd.DataFrame:
    """Per sweep series (rows whose name is not their series'): see Summary.series."""
    rows = results[results["name"].astype(str) != results["series"].astype(str)]
    columns = [
        "rows",
        "hardware",
        "critical_min",
        "critical_max",
        "best_fraction",
        "t_min",
        "t_max",
        *BOUNDS,
    ]
    if rows.empty:
        return pd.DataFrame(columns=columns, index=pd.Index([], name="series"))
    key = rows["series"].astype(str)
    grouped = rows.groupby(key, sort=False)
    bounds = pd.crosstab(key, rows["bound"].astype(str)).reindex(columns=list(BOUNDS), fill_value=0)
    table = pd.DataFrame(
        {
            "rows": grouped.size(),
            "hardware": grouped["hardware"].agg(
                lambda s: ", ".join(sorted(s.astype(str).unique()))
            ),
            "critical_min": grouped["critical_batch"].min(),
            "critical_max": grouped["critical_batch"].max(),
            "best_fraction": grouped["peak_fraction"].max(),
            "t_min": grouped["t_lower"].min(),
            "t_max": grouped["t_lower"].max(),
        }
    ).join(bounds)
    table.index.name = "series"
    return table


def _worst_per_series(table: pd.DataFrame, key: str, n: int, series: pd.Series) -> pd.DataFrame:
    """The rows with the n largest `key` values, one per series (a sweep shows its worst point),
    each with `in_series`: how many of the table's rows belong to its series. `series` numbers
    the series of every row of the run (its index holds the table's)."""
    codes = series.loc[table.index].to_numpy()
    counts = np.bincount(codes)[codes] if len(codes) else codes
    order = np.argsort(-table[key].to_numpy(float), kind="stable")  # NaN last, ties in order
    first = np.unique(codes[order], return_index=True)[1]  # each series' worst row, ranked
    picks = order[np.sort(first)[:n]]
    return table.iloc[picks].assign(in_series=counts[picks])


def findings(results: pd.DataFrame) -> dict:
    """See Summary.findings: tables capped (SLOWEST_ROWS, FINDING_ROWS), counts complete."""
    base = results[["name", "series", "hardware", "bound", "chips"]]
    series = pd.Series(pd.factorize(results["series"])[0], index=results.index)
    slow = base.assign(
        t_lower=results["t_lower"], t_upper=results["t_upper"], t_math=results["t_math"]
    )
    slow_top = _worst_per_series(slow, "t_lower", SLOWEST_ROWS, series)

    comm = results.loc[results["bound"] != "compute"]
    t_comm = np.maximum(comm["t_hbm"].to_numpy(float), comm["t_network"].to_numpy(float))
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = t_comm / comm["t_math"].to_numpy(float)
    comm_table = base.loc[comm.index].assign(
        t_math=comm["t_math"], t_comm=t_comm, factor=np.where(np.isnan(factor), np.inf, factor)
    )
    comm_top = _worst_per_series(comm_table, "factor", FINDING_ROWS, series)

    nofit = results.loc[not_fitting(results)]
    nofit_table = base.loc[nofit.index].assign(
        footprint=nofit["memory_footprint"],
        capacity=nofit["hbm_capacity"],
        over=nofit["memory_footprint"] / nofit["hbm_capacity"],
    )
    nofit_top = _worst_per_series(nofit_table, "over", FINDING_ROWS, series)

    measured = results.loc[results["measured_seconds"].notna()]
    ratio = measured["measured_over_predicted"]
    low, high = MEASURED_RANGE
    off = measured.loc[~ratio.between(low, high)]
    off_table = base.loc[off.index].assign(
        measured=off["measured_seconds"],
        t_lower=off["t_lower"],
        ratio=off["measured_over_predicted"],
        distance=np.abs(np.log(off["measured_over_predicted"].to_numpy(float))),
    )
    off_top = _worst_per_series(off_table, "distance", FINDING_ROWS, series)
    return {
        "slowest": slow_top,
        "comm_total": len(comm),
        "comm_memory": int((comm["bound"] == "memory").sum()),
        "comm_network": int((comm["bound"] == "network").sum()),
        "comm_series": int(comm["series"].nunique()),
        "comm": comm_top,
        "nofit_total": len(nofit),
        "nofit_series": int(nofit["series"].nunique()),
        "nofit": nofit_top,
        "measured_total": len(measured),
        "measured_off_total": len(off),
        "measured_off_series": int(off["series"].nunique()),
        "measured_off": off_top.drop(columns="distance"),
        "measured_low": low,
        "measured_high": high,
        "listed": FINDING_ROWS,
        "slowest_listed": SLOWEST_ROWS,
    }
