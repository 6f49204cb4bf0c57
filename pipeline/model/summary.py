"""The statistics of a run, computed once from its results: bound counts (per hardware and per
op), rows that do not fit, rows that give their own numbers, critical batches per series, sweep
series, and the findings a reviewer looks at first. Every output (terminal, manifest, charts,
workbook, report, batch index) reads them from here (docs/outputs.md). Whole columns are
reduced with codes and numpy; only the rows a table lists are materialized."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from pipeline.model.catalog import RATE_EFFICIENCY
from pipeline.model.dtypes import dtype_labels
from pipeline.model.roofline import BOUNDS, EFFICIENCIES
from pipeline.model.series import bottom_line, series_lines

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
    overrides: Mapping[str, int]  # hardware -> rows giving their own peak/HBM/link numbers
    critical_batches: pd.DataFrame  # per series with one: hardware, op, dtypes, low, high
    _results: pd.DataFrame = field(repr=False)
    _facts: pd.DataFrame = field(repr=False)  # row for row beside _results (roofline.FACTS)
    # rows timed at less than a nominal rate: per hardware and distinct efficiencies
    # (compute, HBM, network), the rows using them, most used first per chip
    derated: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)
    # per chip used: its most used efficiencies and each catalog rate derated by them
    chips: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)
    # per series (a source row: a sweep or one scenario), the unit people read (model.series)
    lines: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)
    bottom: Mapping = field(default_factory=dict, repr=False)  # the run in numbers

    @cached_property
    def series(self) -> pd.DataFrame:
        """Per sweep series: rows, hardware, bound counts, critical batch range, best fraction of
        peak, range of t_lower."""
        return series_table(self.lines)

    @cached_property
    def findings(self) -> dict:
        """The slowest scenarios, the communication-bound ones (ops with FLOPs), those that do
        not fit, and those whose measured time is far from the prediction (a sweep listed
        once)."""
        return findings(self._results, self._collective)

    @property
    def _collective(self) -> np.ndarray:
        return (self._facts["kind"] == "collective").to_numpy(dtype=bool)


def summarize(
    results: pd.DataFrame,
    hardware: list[dict],
    source_rows: int,
    rejected: int,
    problems: int,
    own_numbers: np.ndarray | None = None,
    *,
    facts: pd.DataFrame,
) -> Summary:
    """The Summary of a run's results; `hardware` holds the catalog records of its chips,
    `own_numbers` marks the rows that gave their own peak, HBM or link numbers, `facts` are
    the rows' facts (model.roofline.compute_record)."""
    unfit = not_fitting(results).to_numpy()
    lines = series_lines(results, facts)
    derated = derated_table(results)  # the chips' table reads it too: computed once
    bounds = _bound_codes(results)
    counts = np.bincount(bounds, minlength=len(BOUNDS))
    per_hardware = bound_counts(results, "hardware", bounds, unfit)
    own = np.zeros(len(results), bool) if own_numbers is None else np.asarray(own_numbers, bool)
    codes, names = _codes(results["hardware"])
    overrides = np.bincount(codes, weights=own, minlength=len(names)).astype(int)
    return Summary(
        scenarios=len(results),
        source_rows=source_rows,
        rejected_rows=rejected,
        problems=problems,
        bounds={b: int(counts[i]) for i, b in enumerate(BOUNDS)},
        not_fitting=int(unfit.sum()),
        per_hardware=per_hardware,
        per_op=bound_counts(results, "op", bounds, unfit),
        overrides={n: int(overrides[i]) for i, n in enumerate(names) if n in per_hardware.index},
        critical_batches=critical_batches(results),
        _results=results,
        _facts=facts,
        derated=derated,
        chips=chip_table(hardware, derated),
        lines=lines,
        bottom=bottom_line(lines, len(results)),
    )


def _codes(column: pd.Series) -> tuple[np.ndarray, list[str]]:
    """A column as integer codes and the names they stand for (a categorical's own codes: no
    per-row Python work)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return column.cat.codes.to_numpy(), [str(c) for c in column.cat.categories]
    codes, uniques = pd.factorize(column.astype(str))
    return codes, [str(u) for u in uniques]


def _bound_codes(results: pd.DataFrame) -> np.ndarray:
    """Each row's bound as an index into BOUNDS."""
    bound = results["bound"]
    if isinstance(bound.dtype, pd.CategoricalDtype) and list(bound.cat.categories) == list(BOUNDS):
        return bound.cat.codes.to_numpy().astype(np.intp)
    return pd.Categorical(bound.astype(str), categories=list(BOUNDS)).codes.astype(np.intp)


def not_fitting(results: pd.DataFrame) -> pd.Series:
    """True for rows whose footprint is over the chip's HBM capacity (unknown: they fit)."""
    return ~results["fits"].astype("boolean").fillna(True).astype(bool)


def bound_counts(
    results: pd.DataFrame, key: str, bounds: np.ndarray | None = None, unfit=None
) -> pd.DataFrame:
    """Per value of `key`: compute-, memory-, network-bound, not fitting and total rows
    (counted with bincount over codes: linear, no per-row Python work)."""
    bounds = _bound_codes(results) if bounds is None else bounds
    unfit = not_fitting(results).to_numpy() if unfit is None else unfit
    codes, names = _codes(results[key])
    k = len(names)
    counts = np.bincount(codes * len(BOUNDS) + bounds, minlength=k * len(BOUNDS))
    table = pd.DataFrame(
        counts.reshape(k, len(BOUNDS)), index=pd.Index(names, name=key), columns=list(BOUNDS)
    )
    table["not_fitting"] = np.bincount(codes, weights=unfit, minlength=k).astype(np.int64)
    table["total"] = table[list(BOUNDS)].sum(axis=1)
    return table[table["total"] > 0].astype("int64").sort_index()


def critical_batches(results: pd.DataFrame) -> pd.DataFrame:
    """Per series with a critical batch, in file order: hardware, op, dtypes, lowest and
    highest critical batch; a fleet series (docs/input.md#sweeping-the-fleet) a row per chip
    and dtypes it sweeps, as the batch that pays differs by chip."""
    columns = ["hardware", "op", "dtypes", "low", "high"]
    batch = results["critical_batch"]
    has = batch.notna().to_numpy()
    if not has.any():
        return pd.DataFrame(columns=columns, index=pd.Index([], name="series"))
    dtypes = ["x_dtype", "y_dtype", "out_dtype", "compute_dtype"]
    rows = results.loc[has, ["series", "hardware", "op", *dtypes]]
    values = batch.to_numpy(dtype=float, na_value=np.nan)[has]
    key = np.zeros(len(rows), dtype=np.int64)  # series, chip and dtypes as one whole number
    for c in ("series", "hardware", *dtypes):
        column = rows[c]
        if isinstance(column.dtype, pd.CategoricalDtype):
            part, size = column.cat.codes.to_numpy(), len(column.cat.categories)
        else:
            part, uniques = pd.factorize(column.astype(str))  # no Python string per value
            size = len(uniques)
        key = key * (size + 1) + part
    codes, _ = pd.factorize(key)  # in order of first appearance
    order = np.argsort(codes, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(codes[order]) != 0])
    first = rows.iloc[order[starts]]
    uniques = first["series"].astype(str).array
    return pd.DataFrame(
        {
            "hardware": pd.Categorical(first["hardware"]),
            "op": pd.Categorical(first["op"]),
            "dtypes": pd.Categorical(dtype_labels(*(first[c] for c in dtypes))),
            "low": np.minimum.reduceat(values[order], starts).astype(np.int64),
            "high": np.maximum.reduceat(values[order], starts).astype(np.int64),
        },
        index=pd.Index(uniques, name="series"),
    )


def chip_table(hardware: list[dict], derated: pd.DataFrame) -> pd.DataFrame:
    """One row per chip used (index hardware): the efficiencies its derated rows use most
    (1 when none is), `derated_rows` (all its derated rows), `top_rows` (those of the most
    used efficiencies), and each catalog rate it has times its efficiency (`<rate>_derated`):
    what the report, the workbook and the notices say of a chip, computed once here."""
    names = [str(r["name"]) for r in hardware]
    first = derated.drop_duplicates("hardware").set_index("hardware")  # most used per chip
    table = pd.DataFrame(index=pd.Index(names, name="hardware"))
    for e in EFFICIENCIES:
        table[e] = first[e].reindex(names).fillna(1.0).astype(float).to_numpy()
    totals = derated.groupby("hardware")["rows"].sum() if len(derated) else pd.Series()
    table["derated_rows"] = totals.reindex(names).fillna(0).astype("int64").to_numpy()
    table["top_rows"] = first["rows"].reindex(names).fillna(0).astype("int64").to_numpy()
    for rate, e in RATE_EFFICIENCY.items():
        nominal = [_number(r.get(rate)) for r in hardware]
        table[f"{rate}_derated"] = np.asarray(nominal, dtype=float) * table[e].to_numpy()
    return table


def _number(value) -> float:
    return np.nan if value is None or value == "" else float(value)


def derated_table(results: pd.DataFrame) -> pd.DataFrame:
    """See Summary.derated: columns hardware, the three efficiencies, rows."""
    columns = ["hardware", *EFFICIENCIES, "rows"]
    if not set(EFFICIENCIES) <= set(results.columns):
        return pd.DataFrame(columns=columns)
    values = results[list(EFFICIENCIES)].to_numpy(dtype=float, na_value=1.0)
    derated = (values < 1).any(axis=1)
    if not derated.any():
        return pd.DataFrame(columns=columns)
    rows = pd.DataFrame(values[derated], columns=list(EFFICIENCIES))
    rows.insert(0, "hardware", results["hardware"].astype(str).to_numpy()[derated])
    return derated_order(rows.value_counts(sort=False).rename("rows").reset_index())


def derated_order(table: pd.DataFrame) -> pd.DataFrame:
    """Derated rows as Summary.derated lists them: per chip (A-Z), the most used first."""
    table = table.sort_values(["hardware", "rows"], ascending=[True, False], kind="stable")
    return table.reset_index(drop=True)[["hardware", *EFFICIENCIES, "rows"]]


def series_table(lines: pd.DataFrame) -> pd.DataFrame:
    """Per sweep series, read from the series lines (computed once for both): Summary.series."""
    columns = ["rows", "hardware", "critical_min", "critical_max", "best_fraction", "t_min",
               "t_max", *BOUNDS]  # fmt: skip
    if lines.empty:
        return pd.DataFrame(columns=columns, index=pd.Index([], name="series"))
    return lines[lines["swept"] != ""].rename(columns={"scenarios": "rows"})[columns]


def worst_per_series(values: np.ndarray, codes: np.ndarray, n: int, chunk: int = 4096):
    """The positions of the n largest `values`, one per series (a sweep shows its worst
    point), ranked, and for each how many of the rows given belong to its series. `codes`
    numbers each row's series; NaN ranks last, ties keep the rows' order. The ranked rows are
    read a chunk at a time until n series are found: most runs need one chunk."""
    if not len(codes):
        return np.empty(0, dtype=np.intp), np.empty(0, dtype=np.intp)
    counts = np.bincount(codes)
    order = np.argsort(-values, kind="stable")
    seen = np.zeros(len(counts), dtype=bool)
    picks: list[np.ndarray] = []
    found = 0
    for start in range(0, len(order), chunk):
        part = order[start : start + chunk]
        first = part[np.sort(np.unique(codes[part], return_index=True)[1])]  # ranked, per series
        new = first[~seen[codes[first]]]
        seen[codes[new]] = True
        picks.append(new)
        found += len(new)
        if found >= n:
            break
    chosen = np.concatenate(picks)[:n]
    return chosen, counts[codes[chosen]]


def findings(results: pd.DataFrame, collective: np.ndarray, sets: dict | None = None) -> dict:
    """See Summary.findings: tables capped (SLOWEST_ROWS, FINDING_ROWS), counts complete;
    `collective` marks the collective rows (a fact)."""
    codes = pd.factorize(results["series"])[0]
    bound = _bound_codes(results)
    col = {c: results[c].to_numpy(dtype=float, na_value=np.nan)
           for c in ("t_lower", "t_upper", "t_math", "t_hbm", "t_network", "memory_footprint",
                     "hbm_capacity", "measured_seconds", "measured_over_predicted")}  # fmt: skip

    def table(where: np.ndarray, key: np.ndarray, n: int, **extra: np.ndarray) -> pd.DataFrame:
        """The worst rows among `where` (positions) by `key`, with extra columns."""
        picks, in_series = worst_per_series(key, codes[where], n)
        rows = results.iloc[where[picks]][["name", "series", "hardware", "bound", "chips"]]
        return rows.assign(**{k: v[picks] for k, v in extra.items()}, in_series=in_series)

    def series_of(where: np.ndarray) -> int:
        return int(np.count_nonzero(np.bincount(codes[where]))) if len(where) else 0

    sets = finding_sets(results, bound, col) if sets is None else sets  # given: a partition's
    everything, comm, nofit, off = (sets[k] for k in FINDINGS)
    slowest = table(everything, col["t_lower"], SLOWEST_ROWS, t_lower=col["t_lower"],
                    t_upper=col["t_upper"], t_math=col["t_math"])  # fmt: skip
    t_comm = np.maximum(col["t_hbm"][comm], col["t_network"][comm])
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = t_comm / col["t_math"][comm]
    factor = np.where(np.isnan(factor), np.inf, factor)
    comm_top = table(comm, factor, FINDING_ROWS, t_math=col["t_math"][comm], t_comm=t_comm,
                     factor=factor)  # fmt: skip
    collectives = int(collective.sum())  # no FLOPs: network by nature
    footprint, capacity = col["memory_footprint"][nofit], col["hbm_capacity"][nofit]
    nofit_top = table(nofit, footprint / capacity, FINDING_ROWS, footprint=footprint,
                      capacity=capacity, over=footprint / capacity)  # fmt: skip
    measured = np.flatnonzero(~np.isnan(col["measured_seconds"]))
    low, high = MEASURED_RANGE
    ratio = col["measured_over_predicted"][off]
    with np.errstate(divide="ignore", invalid="ignore"):
        distance = np.abs(np.log(ratio))
    off_top = table(off, distance, FINDING_ROWS, measured=col["measured_seconds"][off],
                    t_lower=col["t_lower"][off], ratio=ratio)  # fmt: skip
    return {
        "slowest": slowest,
        "comm_total": len(comm),
        "comm_memory": int((bound[comm] == 1).sum()),
        "comm_network": int((bound[comm] == 2).sum()),
        "collective_rows": collectives,
        "comm_none": no_comm_sentence(len(results), collectives),
        "comm_series": series_of(comm),
        "comm": comm_top,
        "nofit_total": len(nofit),
        "nofit_series": series_of(nofit),
        "nofit": nofit_top,
        "measured_total": len(measured),
        "measured_off_total": len(off),
        "measured_off_series": series_of(off),
        "measured_off": off_top,
        "measured_low": low,
        "measured_high": high,
        "listed": FINDING_ROWS,
        "slowest_listed": SLOWEST_ROWS,
    }


FINDINGS = ("slowest", "comm", "nofit", "measured_off")  # the row sets findings rank


def finding_sets(results: pd.DataFrame, bound=None, col=None) -> dict[str, np.ndarray]:
    """The positions of the rows each finding ranks (FINDINGS): every row; the ops starved
    of data (communication-bound with FLOPs: a collective row, no math, is communication by
    nature and not counted); the rows not fitting; those measured far from the prediction."""
    bound = _bound_codes(results) if bound is None else bound
    col = col or {c: results[c].to_numpy(dtype=float, na_value=np.nan)
                  for c in ("t_math", "measured_seconds", "measured_over_predicted")}  # fmt: skip
    measured = np.flatnonzero(~np.isnan(col["measured_seconds"]))
    low, high = MEASURED_RANGE
    ratio = col["measured_over_predicted"][measured]
    return {
        "slowest": np.arange(len(results)),
        "comm": np.flatnonzero((bound != 0) & (col["t_math"] > 0)),
        "nofit": np.flatnonzero(not_fitting(results).to_numpy()),
        "measured_off": measured[~((ratio >= low) & (ratio <= high))],
    }


def no_comm_sentence(scenarios: int, collectives: int) -> str:
    """What the report says when no op with FLOPs is communication-bound: every scenario is
    then compute-bound or a collective row (which is network-bound and counted apart)."""
    if not scenarios:
        return "None: there are no scenarios."
    if not collectives:
        return "None: every scenario is compute-bound."
    if collectives == scenarios:
        if scenarios == 1:
            return "None: the one scenario is a collective row, network-bound by nature."
        return f"None: all {scenarios:,} scenarios are collective rows, network-bound by nature."
    return (
        f"None: besides the collective rows, every other scenario ({scenarios - collectives:,})"
        " is compute-bound."
    )
