"""Series, the unit people read: one line per source row (a sweep, or a single scenario), in
file order, with its time (one value, or min-max over the sweep), its bound (or where it
changes), its critical batch and whether it fits; and the run's bottom line in numbers.
Computed once from the results and their facts with codes and numpy (no Python per row); the
renderers word them (render/text/answer.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

from pipeline.model.dtypes import DTYPE_COLUMNS
from pipeline.model.ops import CUSTOM, is_dim
from pipeline.model.roofline import BOUNDS
from pipeline.summary.codes import bound_codes_of, fits
from pipeline.summary.shapes import range_dims, series_shapes
from pipeline.summary.turns import MIXED, change_points
from pipeline.words import dtype_labels

SIZES = ("flops", "hbm_bytes")  # a custom op's size, as given: its range over a series
SERIES_COLUMNS = (
    "hardware", "op", "einsum", "dtype", "chips", "scenarios", "swept", "t_min", "t_max", "bound",
    *BOUNDS, "change_dim", "change_at", "critical_min", "critical_max", "best_fraction",
    "not_fitting", "bytes_min", "bytes_max", "flops_min", "flops_max", "hbm_bytes_min",
    "hbm_bytes_max",
)  # fmt: skip


def series_lines(results: pd.DataFrame, facts: pd.DataFrame, series=None) -> pd.DataFrame:
    """One row per series (index `series`, in file order): hardware, op, einsum, its dtypes
    (words.dtype_labels) and chip counts as text (a fleet series over several joined
    in file order by '|': `bf16|fp8`, `1|2|4|8`), scenarios,
    the dims it sweeps, t_min / t_max (t_lower over its rows), `bound` (compute, memory,
    network, or mixed) with the count of each, `change_dim` / `change_at` (a sweep of its
    batch dim that turns compute-bound: compute-bound from change_dim = change_at, the exact
    critical batch), its critical batch range, its best fraction of peak, rows not fitting
    in HBM, a collective's size range (bytes), a custom op's (flops and hbm_bytes, each
    `_min` and `_max`); then each dim column's range (`B_min`, `B_max`: whole numbers, NA
    where the series has none), which summary.finish.finish words as the line's shape.
    `series`: the rows' series as pd.factorize gives them (codes, names), when known."""
    if results.empty:
        return pd.DataFrame(columns=list(SERIES_COLUMNS), index=pd.Index([], name="series"))
    codes, names = series or pd.factorize(results["series"].astype(str))
    n = len(names)
    if n == len(results):  # every series one row (a nightly file of single scenarios)
        order = first = starts = np.arange(n)
    else:
        order = np.argsort(codes, kind="stable")
        starts = np.flatnonzero(np.r_[True, np.diff(codes[order]) != 0])
        first = order[starts]  # each series' first row

    def reduce(ufunc, values: np.ndarray) -> np.ndarray:
        if n == len(values):  # a row per series, in order: its values as they are
            return values
        return ufunc.reduceat(values[order], starts)

    t = results["t_lower"].to_numpy(dtype=float)
    dtypes = pd.Series(dtype_labels(*(results[c] for c in DTYPE_COLUMNS)))
    bound = bound_codes_of(results).astype(np.int64)
    counts = np.bincount(codes * len(BOUNDS) + bound, minlength=n * len(BOUNDS))
    counts = counts.reshape(n, len(BOUNDS))
    label = bound_labels(counts)
    critical = results["critical_batch"].to_numpy(dtype=float, na_value=np.nan)
    with np.errstate(invalid="ignore"):
        critical_min, critical_max = reduce(np.fmin, critical), reduce(np.fmax, critical)
    unfit = ~fits(results)
    collective = (facts["kind"] == "collective").to_numpy(dtype=bool)
    volume = np.where(collective, results["network_bytes"].to_numpy(dtype=float), np.nan)
    custom = (results["op"] == CUSTOM).to_numpy(dtype=bool)
    with np.errstate(invalid="ignore"):
        bytes_min, bytes_max = reduce(np.fmin, volume), reduce(np.fmax, volume)
        sizes = {}
        for c in SIZES:
            given = np.where(custom, results[c].to_numpy(dtype=float, na_value=np.nan), np.nan)
            sizes[f"{c}_min"], sizes[f"{c}_max"] = reduce(np.fmin, given), reduce(np.fmax, given)
    table = pd.DataFrame(
        {
            "hardware": _joined(results["hardware"], codes, order, starts, first),
            "op": _first(results["op"], first),
            "einsum": _first(results["einsum"], first),
            "dtype": _joined(dtypes, codes, order, starts, first),
            "chips": _joined(results["chips"], codes, order, starts, first),
            "scenarios": np.bincount(codes, minlength=n),
            "swept": swept_text(facts["swept"].iloc[first]),
            "t_min": reduce(np.fmin, t),
            "t_max": reduce(np.fmax, t),
            "bound": label,
            **{b: counts[:, i] for i, b in enumerate(BOUNDS)},
            "critical_min": pd.array(critical_min, dtype="Float64").astype("Int64"),
            "critical_max": pd.array(critical_max, dtype="Float64").astype("Int64"),
            "best_fraction": reduce(np.fmax, results["peak_fraction"].to_numpy(dtype=float)),
            "not_fitting": np.bincount(codes, weights=unfit, minlength=n).astype(np.int64),
            "bytes_min": bytes_min,
            "bytes_max": bytes_max,
            **sizes,
        },
        index=pd.Index(names, name="series"),
        copy=False,  # not stacked into blocks (a copy of each column)
    )
    dim, at = change_points(table)
    table.insert(table.columns.get_loc("critical_min"), "change_dim", dim)
    table.insert(table.columns.get_loc("critical_min"), "change_at", at)
    table = table[list(SERIES_COLUMNS)]
    if "t_estimate" in results.columns:  # a calibrated run: the estimate's range too
        estimate = results["t_estimate"].to_numpy(dtype=float)
        with np.errstate(invalid="ignore"):
            table = table.assign(e_min=reduce(np.fmin, estimate), e_max=reduce(np.fmax, estimate))
    if "measured_seconds" in results.columns:  # measured rows: the measured times' range
        measured = results["measured_seconds"].to_numpy(dtype=float, na_value=np.nan)
        with np.errstate(invalid="ignore"):
            table = table.assign(m_min=reduce(np.fmin, measured), m_max=reduce(np.fmax, measured))
    ranges = pd.DataFrame(dim_ranges(results, reduce, n == len(results)), index=table.index,
                          copy=False)  # fmt: skip
    return pd.concat([table, ranges], axis=1)  # not assign: it copies each new column


def dim_ranges(
    results: pd.DataFrame, reduce, single: bool = False
) -> dict[str, pd.api.extensions.ExtensionArray]:
    """Each dim column's lowest and highest value over each series' rows (`B_min`, `B_max`),
    reduced on whole numbers by `reduce(ufunc, values)`; NA where a series has none.
    `single`: every series one row, in order (each range its row's value, no reduction)."""
    out = {}
    top, bottom = np.iinfo(np.int64).max, np.iinfo(np.int64).min
    for d in (c for c in results.columns if is_dim(c)):
        missing = results[d].isna().to_numpy()
        values = results[d].to_numpy(dtype=np.int64, na_value=0)
        if single:  # the row's value, both ends (one array: the ranges are only read)
            out[f"{d}_min"] = out[f"{d}_max"] = pd.arrays.IntegerArray(values, missing)
            continue
        low = reduce(np.minimum, np.where(missing, top, values))
        high = reduce(np.maximum, np.where(missing, bottom, values))
        out[f"{d}_min"] = pd.arrays.IntegerArray(low, low == top)
        out[f"{d}_max"] = pd.arrays.IntegerArray(high, high == bottom)
    return out


def finished_lines(lines: pd.DataFrame) -> pd.DataFrame:
    """The merged lines of a run as Summary.lines: each one's shape (summary.shapes) worded
    from its dims' ranges over the whole run, beside its einsum, in place of the ranges."""
    shapes = series_shapes(lines)
    lines = lines.drop(columns=[f"{d}_{e}" for d in range_dims(lines) for e in ("min", "max")])
    lines.insert(lines.columns.get_loc("einsum") + 1, "shape", shapes)
    return lines


def bound_labels(counts: np.ndarray) -> pd.api.extensions.ExtensionArray:
    """Each series' bound from its rows per bound (a row per series, a column per BOUNDS):
    the one bound of all its rows, else `mixed`."""
    kinds = (counts > 0).sum(axis=1)
    return _text([*BOUNDS, MIXED], np.where(kinds == 1, counts.argmax(axis=1), len(BOUNDS)))


def swept_text(swept: pd.Series) -> pd.api.extensions.ExtensionArray:
    """The swept dims (the fact, a tuple per row) as a series line shows them: 'B,D' (each
    distinct tuple joined once)."""
    codes, kinds = pd.factorize(swept.to_numpy(dtype=object))
    return _text([",".join(k) for k in kinds], codes)


def _first(column: pd.Series, first: np.ndarray) -> pd.api.extensions.ExtensionArray:
    """Each series' value of `column` (its first row's) as text: only those rows converted,
    a categorical's categories once."""
    if isinstance(column.dtype, pd.CategoricalDtype) and not column.hasnans:
        return _text(column.cat.categories.astype(str), column.cat.codes.to_numpy()[first])
    return pd.array(column.iloc[first].astype(str), dtype="str")


def _text(labels, codes: np.ndarray) -> pd.api.extensions.ExtensionArray:
    """labels[codes] as a text column, taken in Arrow (no Python string per row)."""
    return pd.array(pa.array(list(labels), pa.string()).take(pa.array(codes)), dtype="str")


def merge_lines(tables: list[pd.DataFrame]) -> pd.DataFrame:
    """series_lines() (or chip_lines()) of consecutive parts of a run (the Dask engine's
    partitions, in order) as the lines of the whole: counts summed, ranges widened, chips
    united in order, the bound and its change point worked out again from the merged numbers."""
    tables = [t for t in tables if len(t)]
    if not tables:
        return series_lines(pd.DataFrame(), pd.DataFrame())
    if len(tables) == 1:
        return tables[0]
    both = pd.concat(tables)
    grouped = both.groupby(level=list(range(both.index.nlevels)), sort=False)  # file order
    first = grouped.first()
    united = {column: _united(both, grouped, first, column) for column in UNITED}
    sums = grouped[["scenarios", *BOUNDS, "not_fitting"]].sum()
    table = pd.DataFrame(
        {
            "hardware": united["hardware"],
            "op": first["op"],
            "einsum": first["einsum"],
            "dtype": united["dtype"],
            "chips": united["chips"],
            "scenarios": sums["scenarios"],
            "swept": first["swept"],
            "t_min": grouped["t_min"].min(),
            "t_max": grouped["t_max"].max(),
            **{b: sums[b] for b in BOUNDS},
            "critical_min": grouped["critical_min"].min(),
            "critical_max": grouped["critical_max"].max(),
            "best_fraction": grouped["best_fraction"].max(),
            "not_fitting": sums["not_fitting"],
            "bytes_min": grouped["bytes_min"].min(),
            "bytes_max": grouped["bytes_max"].max(),
            **{f"{c}_min": grouped[f"{c}_min"].min() for c in SIZES},
            **{f"{c}_max": grouped[f"{c}_max"].max() for c in SIZES},
            **{
                c: grouped[c].min() if c.endswith("min") else grouped[c].max()
                for c in EXTRA
                if c in both.columns
            },
        }
    )
    table["bound"] = bound_labels(table[list(BOUNDS)].to_numpy())
    table.index.names = both.index.names
    dim, at = change_points(table)
    table["change_dim"], table["change_at"] = dim, at
    dims = range_dims(both)
    for d in dims:  # each dim's range over every part (NA where none has one)
        table[f"{d}_min"] = grouped[f"{d}_min"].min().astype("Int64")
        table[f"{d}_max"] = grouped[f"{d}_max"].max().astype("Int64")
    ranges = [f"{d}_{e}" for d in dims for e in ("min", "max")]
    return table[[*SERIES_COLUMNS, *(c for c in EXTRA if c in table.columns), *ranges]]


KNEES = ("knee_min", "knee_max", "knee_chip_min", "knee_chip_max")  # chip_lines'
# a calibrated run's t_estimate over the series' rows (e_), and KNEES: ranges to widen too
EXTRA = ("e_min", "e_max", "m_min", "m_max", *KNEES)


def chip_lines(results: pd.DataFrame, facts: pd.DataFrame) -> pd.DataFrame:
    """Per series and chip of the sweeps' rows (index series, hardware; in file order): the
    series line of that chip's rows only (series_lines without the dims' ranges: a fleet
    series' own line on each of its chips), and a collective's latency knee range, the V at
    which its bandwidth time meets its latency floor (facts' latency_knee), whole and per
    chip (KNEES). What a sweep chart's table says (Summary.chip_lines); merged as lines."""
    at = np.flatnonzero(facts["in_sweep"].to_numpy(dtype=bool))
    rows, knee = results.iloc[at], facts["latency_knee"].to_numpy(dtype=float)[at]
    (s_codes, s_names), (h_codes, h_names) = (pd.factorize(rows[c]) for c in ("series", "hardware"))
    width = max(len(h_names), 1)
    codes, pairs = pd.factorize(s_codes.astype(np.int64) * width + h_codes)
    lines = series_lines(rows, facts.iloc[at], (codes, pairs))
    lines = lines.drop(columns=[f"{d}_{e}" for d in range_dims(lines) for e in ("min", "max")])
    names = [np.asarray(n.astype(str), dtype=object) for n in (s_names, h_names)]
    lines.index = pd.MultiIndex.from_arrays(
        [names[0][pairs // width], names[1][pairs % width]], names=["series", "hardware"]
    )
    per_chip = knee / rows["chips"].to_numpy(dtype=float)
    knees = pd.DataFrame({"knee": knee, "knee_chip": per_chip}).groupby(codes).agg(["min", "max"])
    return lines.assign(**{f"{c}_{e}": knees[(c, e)].to_numpy() for c, e in knees.columns})


def merge_chip_lines(tables: list[pd.DataFrame]) -> pd.DataFrame:
    """chip_lines() of consecutive parts of a run as those of the whole (merge_lines)."""
    kept = [t for t in tables if len(t)]
    return merge_lines(kept) if kept else tables[0]


UNITED = ("hardware", "dtype", "chips")  # a series' values joined by '|' in file order


def _united(both: pd.DataFrame, grouped, first: pd.DataFrame, column: str) -> pd.Series:
    """A `column` of UNITED over the parts' lines: each series' values in order, once each
    (`h100|h200` and `h200|b200` unite as `h100|h200|b200`); only the series whose value
    differs between parts (a fleet series cut by a partition edge: few) looked at one by one."""
    out = first[column].astype(object).copy()
    several = grouped[column].nunique() > 1
    for name in several.index[several.to_numpy()]:
        parts = "|".join(both.loc[[name], column].astype(str))
        out[name] = "|".join(dict.fromkeys(parts.split("|")))
    return out


def _joined(values: pd.Series, codes, order, starts, first) -> pd.api.extensions.ExtensionArray:
    """Each series' value (its chip, dtypes or chip count) as text, or its values in file
    order joined by '|' (a fleet sweep, `h100|h200|mi300x`, `bf16|fp8`, `1|2|4|8`): found
    with integer codes; only the rows of the series whose value varies are grouped."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        value_codes = values.cat.codes.to_numpy()
        labels = [str(v) for v in values.cat.categories]
    else:
        value_codes, uniques = pd.factorize(values, use_na_sentinel=False)
        labels = [str(v) for v in uniques]
    low = np.minimum.reduceat(value_codes[order], starts)
    high = np.maximum.reduceat(value_codes[order], starts)
    out = value_codes[first].astype(np.int64)
    varying = np.flatnonzero(low != high)
    if len(varying):
        rows = np.isin(codes, varying)
        seen = pd.DataFrame({"series": codes[rows], "value": value_codes[rows]}).drop_duplicates()
        texts = pd.Series(np.asarray(labels, dtype=object)[seen["value"].to_numpy()])
        joined = texts.groupby(seen["series"].to_numpy(), sort=False).agg("|".join)
        out[joined.index.to_numpy()] = len(labels) + np.arange(len(joined))
        labels += joined.tolist()
    return _text(labels, out)


def bottom_line(lines: pd.DataFrame, scenarios: int) -> dict:
    """The run in numbers, for its first sentence: series and scenarios, chips, series per
    bound (mixed: those that change), series not fitting, and the slowest series."""
    if lines.empty:
        return {"series": 0, "scenarios": scenarios, "chips": 0, "bounds": {}, "changing": 0,
                "not_fitting": 0, "slowest": None, "slowest_time": None}  # fmt: skip
    by_bound = lines["bound"].value_counts()
    t_max = lines["t_max"].to_numpy(dtype=float, na_value=np.nan)
    at = int(np.nanargmax(t_max)) if (t_max == t_max).any() else None  # by position: no index
    slowest = lines.index[at] if at is not None else None  # hash table over a million series
    return {
        "series": len(lines),
        "scenarios": scenarios,
        # a fleet series lists its chips (h100|h200): each counted once
        "chips": len({c for h in pd.unique(lines["hardware"]) for c in str(h).split("|")}),
        "bounds": {b: int(by_bound.get(b, 0)) for b in (*BOUNDS, MIXED)},
        "changing": int((lines["change_dim"] != "").sum()),
        "not_fitting": int((lines["not_fitting"] > 0).sum()),
        "slowest": slowest,
        "slowest_time": float(t_max[at]) if at is not None else None,
    }
