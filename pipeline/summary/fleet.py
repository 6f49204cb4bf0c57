"""The fleet answer (docs/outputs.md#the-fleet-answer): for every fleet series (a source row
listing chips, dtypes or chip counts: docs/input.md#sweeping-the-fleet), its fleet points (one
per chip x precision x chip count) ranked fastest first at a few chosen points of its sweep:
its first point, the point of its line nearest its critical batch, and its last point.

As every statistic (summary.partial): `fleet_rows` reduces one frame of results to its fleet
series' rows at the points that may be chosen (the expansion marks them:
scenarios.marks), a few per fleet point; the merge concatenates them in file
order; `fleet_answer` ranks them, the same for every engine."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.model.dtypes import DTYPE_COLUMNS
from pipeline.model.groups import TOTAL_OPS
from pipeline.model.ops import FLEET, parse_op
from pipeline.model.roofline import BOUNDS
from pipeline.model.serve import of_serve
from pipeline.scenarios.marks import FIRST, FLEET_POINT, LAST, LINE_DIMS
from pipeline.summary.codes import bound_codes_of, fits
from pipeline.words import dtype_labels

POINT = ["model", "hardware", "dtype", "chips"]  # a fleet point: model, chip, precision, chips
ROW_COLUMNS = [
    "series", *POINT, "at", "line_dim", "line_value", "first", "last",
    "t_lower", "bound", "fits", "critical_batch", "max_batch",
]  # fmt: skip
# the chosen points of a sweep, in the order the answer gives them ("only": a series that
# sweeps nothing but its fleet axes has one point)
CHOSEN = ("first", "critical batch", "last", "only")
RANKING_COLUMNS = [
    "series", "point", "at", "rank", *POINT, "t_lower", "ratio", "bound", "fits",
    "critical_batch", "fits_where", "fits_up_to", "max_batch",
]  # fmt: skip
# where a fleet point fits in HBM, over the points of its sweep the answer keeps (its chosen
# points and its line): at every one, at none, up to a value of its line (`fits_up_to`,
# 'B=16': at that value and below, at none above), or at some (none of those); and for a fleet
# point of model steps its largest batch that fits (`max_batch`: model.step_totals, the same on
# each of its steps, at their context S; NaN for plain ops, or where it differs between steps)
CURVE_COLUMNS = ["series", *POINT, "line_dim", "line_value", "t_lower", "bound"]
# with prices (issue 44): each point's cost (USD) and energy (J), and among the points that fit
# at a chosen point the rank of each, the cheapest and the least energy (most tokens per joule)
# first; after RANKING_COLUMNS
COST_COLUMNS = ["cost", "energy"]
COST_RANKING = ["cost", "cost_rank", "energy", "energy_rank"]


def fleet_rows(results: pd.DataFrame, facts: pd.DataFrame) -> pd.DataFrame:
    """The rows of fleet series that may be chosen points (ROW_COLUMNS, in file order): first,
    last, or on the line along the series' batch dim (its first swept dim when it sweeps no
    batch dim), with the swept values as text (`at`: 'B=64', 'B=1, D=8192'; '' for none);
    serve rows and their steps left out (summary.serving ranks them, by tokens per chip), and
    train rows (summary.training ranks them, by days)."""
    marks = facts["marks"].to_numpy(dtype=np.int16) if len(facts) else np.empty(0, np.int16)
    fleet = (marks & FLEET_POINT) != 0
    inside = facts["in_step"].to_numpy(dtype=bool) if "in_step" in facts.columns else None
    if inside is not None and inside.any():  # of a step or a group, its total alone
        op = (~results["op"].astype(str).isin(TOTAL_OPS)).to_numpy(dtype=bool)
        fleet &= ~(inside & op)
        if fleet.any():  # the serving answer ranks serve rows and their steps
            fleet &= ~of_serve(results, fleet)
    if fleet.any() and "mfu" in results.columns:  # the training answer ranks train rows by days
        fleet &= (results["op"].astype(str) != "train").to_numpy(dtype=bool)
    take = np.flatnonzero(fleet)
    if not len(take):
        return _empty(ROW_COLUMNS)
    rows, marks = results.iloc[take].reset_index(drop=True), marks[take]
    swept = facts["swept"].iloc[take].to_numpy(dtype=object)
    kinds, kind_of = _combos(swept, rows["einsum"].astype(str).to_numpy(dtype=object))
    at = np.full(len(rows), "", dtype=object)
    line_dim = np.full(len(rows), "", dtype=object)
    line_value = np.full(len(rows), np.nan)
    on_line = np.zeros(len(rows), dtype=bool)
    for k, (dims, line) in enumerate(kinds):  # a few distinct (swept dims, einsum)
        mine = np.flatnonzero(kind_of == k)
        if not dims:
            on_line[mine] = True
            continue
        at[mine] = _at_text(rows.iloc[mine], dims)
        on = (marks[mine] & (4 << line)) != 0 if line < LINE_DIMS else np.zeros(len(mine), bool)
        on_line[mine] = on
        line_dim[mine[on]] = dims[line]
        line_value[mine[on]] = swept_values(rows.iloc[mine[on]], dims[line])
    first, last = (marks & FIRST) != 0, (marks & LAST) != 0
    keep = first | last | on_line
    table = pd.DataFrame(
        {
            "series": rows["series"].astype(str).to_numpy(dtype=object),
            "model": rows["model"].astype(str).to_numpy(dtype=object)
            if "model" in rows.columns
            else np.full(len(rows), "", dtype=object),
            "hardware": rows["hardware"].astype(str).to_numpy(dtype=object),
            "dtype": _with_kv(dtype_labels(*(rows[c] for c in DTYPE_COLUMNS)), rows),
            "chips": rows["chips"].to_numpy(dtype=np.int64),
            "at": at,
            "line_dim": line_dim,
            "line_value": line_value,
            "first": first,
            "last": last,
            "t_lower": rows["t_lower"].to_numpy(dtype=float),
            "bound": np.asarray(BOUNDS, dtype=object)[bound_codes_of(rows)],
            "fits": fits(rows),
            "critical_batch": rows["critical_batch"].to_numpy(dtype=float, na_value=np.nan),
            "max_batch": rows["max_batch"].to_numpy(dtype=float, na_value=np.nan)
            if "max_batch" in rows.columns
            else np.full(len(rows), np.nan),
        }
    )
    if "cost" in rows.columns:  # a run with prices
        for c in COST_COLUMNS:
            table[c] = rows[c].to_numpy(dtype=float, na_value=np.nan)
    return table[keep].reset_index(drop=True)


def _with_kv(labels: np.ndarray, rows: pd.DataFrame) -> np.ndarray:
    """The dtype labels with a step's KV cache dtype where it is not its activations' ('bf16,
    KV fp8'): `kv_dtype` is a fleet axis too, its points told apart."""
    labels = np.asarray(labels, dtype=object)
    if "kv_dtype" not in rows.columns:
        return labels
    kv = rows["kv_dtype"].astype(str).to_numpy(dtype=object)
    other = (kv != "") & (kv != "nan") & (kv != rows["x_dtype"].astype(str).to_numpy(dtype=object))
    out = labels.copy()
    out[other] = labels[other] + ", KV " + kv[other]
    return out


def merge_fleet(tables: list[pd.DataFrame]) -> pd.DataFrame:
    """fleet_rows of consecutive frames (in file order) as those of all their rows."""
    tables = [t for t in tables if len(t)]
    if len(tables) <= 1:
        return tables[0] if tables else _empty(ROW_COLUMNS)
    return pd.concat(tables, ignore_index=True)


def fleet_answer(rows: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ranking (RANKING_COLUMNS: per fleet series with two points or more, in file order,
    per chosen point of its sweep (CHOSEN), its fleet points fastest first with their ratio
    to the fastest) and the curves (CURVE_COLUMNS: each fleet point's time along the line of
    its sweep, for the fleet chart) of merged fleet_rows."""
    if rows.empty:
        return _empty(RANKING_COLUMNS), _empty(CURVE_COLUMNS)
    series, _ = pd.factorize(rows["series"])  # file order
    point, _ = pd.factorize(pd.MultiIndex.from_frame(rows[POINT]))
    counted = pd.DataFrame({"s": series, "p": point}).drop_duplicates()
    several = np.bincount(counted["s"], minlength=series.max() + 1) >= 2
    keep = several[series]
    rows, series, point = rows[keep].reset_index(drop=True), series[keep], point[keep]
    line = rows["line_dim"].to_numpy(dtype=object) != ""
    one = ~line & rows["first"].to_numpy(dtype=bool) & rows["last"].to_numpy(dtype=bool)
    single = (rows["at"] == "").to_numpy(dtype=bool)  # a series of its fleet axes alone
    parts = [
        _chosen(rows, series, point, rows["first"].to_numpy(dtype=bool) & ~single, 0),
        _chosen(rows, series, point, _nearest_critical(rows, series, line), 1),
        _chosen(rows, series, point, rows["last"].to_numpy(dtype=bool) & ~single, 2),
        _chosen(rows, series, point, one & single, 3),
    ]
    chosen = pd.concat(parts, ignore_index=True)
    # a point chosen twice (the critical batch at the first or last value) is said once
    chosen = chosen.drop_duplicates(["order", "at", *POINT], keep="first")
    chosen = chosen.sort_values(["order", "kind", "t_lower"], kind="stable")
    group = chosen.groupby(["order", "kind"], sort=False)
    # equal times share a rank (1, 1, 3): a tie is never ranked as if one were faster
    chosen["rank"] = group["t_lower"].rank(method="min", na_option="bottom").astype(np.int64)
    chosen["ratio"] = chosen["t_lower"] / group["t_lower"].transform("min")
    chosen["point"] = np.asarray(CHOSEN, dtype=object)[chosen["kind"].to_numpy()]
    where, up_to = _fits_where(rows, point, line)
    chosen["fits_where"] = where[chosen["fleet_point"].to_numpy()]
    chosen["fits_up_to"] = up_to[chosen["fleet_point"].to_numpy()]
    chosen["max_batch"] = _largest_batch(rows, point)[chosen["fleet_point"].to_numpy()]
    columns = RANKING_COLUMNS
    if "cost" in chosen.columns:  # with prices: the cheapest and the least energy that fit
        fit = chosen["fits"].to_numpy(dtype=bool)
        for c in COST_COLUMNS:
            value = chosen[c].where(fit)
            ranks = value.groupby([chosen["order"], chosen["kind"]]).rank(method="min")
            chosen[f"{c}_rank"] = ranks.astype("Int64")
        columns = RANKING_COLUMNS + COST_RANKING
    ranking = chosen[columns].reset_index(drop=True)
    curves = rows.loc[line, CURVE_COLUMNS].reset_index(drop=True)
    return ranking, curves


def _chosen(
    rows: pd.DataFrame, series: np.ndarray, point: np.ndarray, mask: np.ndarray, kind: int
) -> pd.DataFrame:
    """The rows `mask` keeps, tagged with their series' order, their fleet point's code and the
    kind of point."""
    out = rows[mask].copy()
    out["order"], out["kind"] = series[mask], kind
    out["fleet_point"] = point[mask]
    return out


def _fits_where(
    rows: pd.DataFrame, point: np.ndarray, line: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per fleet point (codes `point`), where it fits in HBM over its rows (all, none, up_to,
    some) and, for 'up_to', the value of its line up to which it fits ('B=16'; '' for the
    others): it fits at its line's values up to it, at none above and at no row off its line."""
    n = int(point.max()) + 1 if len(point) else 0
    fit = rows["fits"].to_numpy(dtype=bool)
    value = rows["line_value"].to_numpy(dtype=float)
    fitting = np.bincount(point, weights=fit, minlength=n)
    total = np.bincount(point, minlength=n)
    unfit_line = np.full(n, np.inf)  # the smallest value of its line at which it does not fit
    np.minimum.at(unfit_line, point[line & ~fit], value[line & ~fit])
    below = line & (value < unfit_line[point])
    # every row that fits is on its line below that value (and every one there fits)
    stray = np.bincount(point[fit & ~below], minlength=n) > 0
    largest = np.full(n, -np.inf)  # the largest value of its line at which it fits
    np.maximum.at(largest, point[fit & below], value[fit & below])
    up_to = (fitting > 0) & (fitting < total) & np.isfinite(unfit_line) & ~stray
    where = np.select(
        [fitting == total, fitting == 0, up_to], ["all", "none", "up_to"], "some"
    ).astype(object)
    text = np.full(n, "", dtype=object)
    if up_to.any():  # as `at` says a value: 'B=16'
        dims = pd.Series(rows["line_dim"].to_numpy(dtype=object)[line], index=point[line])
        dim = dims[~dims.index.duplicated()].reindex(np.flatnonzero(up_to)).astype(str)
        digits = pd.Series(largest[up_to].astype(np.int64), index=dim.index).astype(str)
        text[up_to] = (dim + "=" + digits).to_numpy(dtype=object)
    return where, text


def _largest_batch(rows: pd.DataFrame, point: np.ndarray) -> np.ndarray:
    """Per fleet point (codes `point`), the largest batch that fits in HBM: its steps'
    max_batch where every one of its rows has the same (one context S), else NaN."""
    n = int(point.max()) + 1 if len(point) else 0
    value = rows["max_batch"].to_numpy(dtype=float)
    known = ~np.isnan(value)
    low, high = np.full(n, np.inf), np.full(n, -np.inf)
    np.minimum.at(low, point[known], value[known])
    np.maximum.at(high, point[known], value[known])
    every = np.bincount(point[known], minlength=n) == np.bincount(point, minlength=n)
    return np.where(every & (low == high), high, np.nan)


def _nearest_critical(rows: pd.DataFrame, series: np.ndarray, line: np.ndarray) -> np.ndarray:
    """Which line rows are at the value of their series' line nearest (on a log scale) the
    median critical batch of its rows: one value per series, the same for every point."""
    critical = rows["critical_batch"].to_numpy(dtype=float)
    value = rows["line_value"].to_numpy(dtype=float)
    usable = line & (critical > 0) & (value > 0)
    if not usable.any():
        return np.zeros(len(rows), dtype=bool)
    on = pd.DataFrame({"s": series[usable], "c": critical[usable], "v": value[usable]})
    target = on.groupby("s")["c"].median()
    distance = np.abs(np.log(on["v"]) - np.log(target.reindex(on["s"]).to_numpy()))
    best = on.assign(d=distance.to_numpy()).sort_values(["s", "d", "v"], kind="stable")
    best = best.drop_duplicates("s").set_index("s")["v"]
    chosen = best.reindex(series).to_numpy()  # every point at it, with a critical batch or not
    return line & (value == chosen)


def _combos(swept: np.ndarray, einsum: np.ndarray) -> tuple[list, np.ndarray]:
    """Per distinct (swept dims, einsum) of the rows: the dims swept (fleet axes left out)
    and the position among them of the line's dim (the op's first swept batch dim, else 0);
    and each row's combination."""
    swept_codes, swept_kinds = pd.factorize(swept)
    einsum_codes, einsums = pd.factorize(einsum)
    key, keys = pd.factorize(swept_codes * (len(einsums) + 1) + einsum_codes)
    kinds = []
    for k in keys:
        dims = tuple(d for d in swept_kinds[k // (len(einsums) + 1)] if d not in FLEET)
        text = einsums[k % (len(einsums) + 1)]
        batch = parse_op(text).batch if text else ""
        kinds.append((dims, next((i for i, d in enumerate(dims) if d in batch), 0)))
    return kinds, key


def _at_text(rows: pd.DataFrame, dims: tuple[str, ...]) -> np.ndarray:
    """'B=64' (or 'B=64, D=8192') of each row: its values of the swept `dims`, in Arrow."""
    parts: list = []
    for i, d in enumerate(dims):
        digits = pc.cast(pa.array(swept_values(rows, d)), pa.int64(), safe=False)
        parts += [", " if i else "", f"{d}=", pc.cast(digits, pa.string())]
    return np.asarray(pc.binary_join_element_wise(*parts, "").to_pylist(), dtype=object)


def swept_values(rows: pd.DataFrame, dim: str) -> np.ndarray:
    """The values of a swept column of result rows: a dim's own column; `bytes` (a
    collective's V, a custom op's bytes) and `flops` as the results hold them."""
    if dim == "bytes":
        network = rows["network_bytes"].to_numpy(dtype=float)
        return np.where(network > 0, network, rows["hbm_bytes"].to_numpy(dtype=float))
    return rows[dim].to_numpy(dtype=float, na_value=np.nan)


def _empty(columns: list[str]) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series([], dtype=object) for c in columns})
