"""The findings a reviewer looks at first: the slowest scenarios, the ops starved of data
(communication-bound with FLOPs), the rows not fitting HBM, the measured rows faster than
their floor (with their likely cause) and those far from the prediction, each a table of the
worst series (a sweep listed once, at its worst row) and complete counts.

As every statistic (summary.partial): `partial_findings` of one frame of results, with the rows
its first and last series hold of each finding (only a series at a frame's edge can run on
into the next frame); `merge_findings` of consecutive frames' is what `findings` finds over
all their rows: a series of the overall top n is among the top n of the frame holding its
worst row, and its rows are counted over every frame."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.model.groups import TOTAL_OPS
from pipeline.summary.codes import bound_codes_of, fits

SLOWEST_ROWS = 10  # series listed in "slowest scenarios"
FINDING_ROWS = 20  # series listed per finding; the finding's count covers every row
MEASURED_RANGE = (0.5, 2.0)  # measured / predicted outside this is called out
# the column each finding's table ranks by, largest first (measured_off: |log ratio|)
RANKED_BY = {"slowest": "t_lower", "comm": "factor", "nofit": "over", "measured_off": "ratio",
             "measured_below": "under"}  # fmt: skip
TOTALS = ("comm_total", "comm_memory", "comm_network", "collective_rows", "nofit_total",
          "measured_total", "measured_off_total", "measured_below_total")  # fmt: skip
SERIES_COUNTS = {
    "comm": "comm_series",
    "nofit": "nofit_series",
    "measured_off": "measured_off_series",
    "measured_below": "measured_below_series",
}
# a memory-bound op measured under its HBM floor read at least bytes x (1 - measured/floor)
# from somewhere else: a cache can explain it when that fits the largest on-chip cache of a
# catalog chip (MI300X's 256 MB Infinity Cache; H100's L2 is 50 MB, B200's 126 MB, L40S's 96
# MB), which the catalog does not list per chip (docs/model.md#what-the-model-leaves-out)
CACHE_BYTES = 256e6


def worst_per_series(values: np.ndarray, codes: np.ndarray, n: int, chunk: int = 4096):
    """The positions of the n largest `values`, one per series (a sweep shows its worst
    point), ranked, and for each how many of the rows given belong to its series. `codes`
    numbers each row's series; NaN ranks last, ties keep the rows' order. The ranked rows are
    read a chunk at a time until n series are found: most runs need one chunk."""
    if not len(codes):
        return np.empty(0, dtype=np.intp), np.empty(0, dtype=np.intp)
    counts = np.bincount(codes)
    order = _leading(-values, 4 * chunk)
    if order is None or len(np.unique(codes[order])) < min(n, np.count_nonzero(counts)):
        order = np.argsort(-values, kind="stable")  # the few leading rows hold too few series
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


def _leading(keys: np.ndarray, k: int) -> np.ndarray | None:
    """The positions of the k smallest `keys` (at least; ties at the edge all kept), ranked
    as a stable argsort ranks them; None when that is every row or the edge is NaN (then
    argsort all). Linear in the rows (argpartition), where a sort of a million is not."""
    if len(keys) <= 2 * k:
        return None
    edge = keys[np.argpartition(keys, k)[k]]
    if edge != edge:  # NaN: rows with no value reach the edge
        return None
    lead = np.flatnonzero(keys <= edge)
    return lead[np.argsort(keys[lead], kind="stable")]


def _findings(results: pd.DataFrame, collective: np.ndarray, sets: dict, series,
              floor: np.ndarray | None = None) -> dict:  # fmt: skip
    """See Summary.findings: tables capped (SLOWEST_ROWS, FINDING_ROWS), counts complete;
    `collective` marks the collective rows (a fact), `sets` the rows each finding ranks
    (finding_sets), `series` the rows' series as pd.factorize gives them (codes, names),
    `floor` a collective's latency floor (the fact latency_floor; None: none known)."""
    codes = series[0]
    bound = bound_codes_of(results)
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

    everything, comm, nofit, off, _ = (sets[k] for k in FINDINGS)
    slowest = table(everything, col["t_lower"][everything], SLOWEST_ROWS,
                    t_lower=col["t_lower"][everything], t_upper=col["t_upper"][everything],
                    t_math=col["t_math"][everything])  # fmt: skip
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
    ratio = measured_ratio(results)[off]
    with np.errstate(divide="ignore", invalid="ignore"):
        distance = np.abs(np.log(ratio))
    estimate = (results["t_estimate"].to_numpy(dtype=float)[off]
                if "t_estimate" in results.columns else None)  # fmt: skip
    off_top = table(off, distance, FINDING_ROWS, measured=col["measured_seconds"][off],
                    t_lower=col["t_lower"][off], ratio=ratio,
                    **({"t_estimate": estimate} if estimate is not None else {}))  # fmt: skip
    below = sets["measured_below"]
    under = col["measured_over_predicted"][below]  # always against the floor, t_lower
    causes = below_causes(results.iloc[below], collective[below], bound[below], under,
                          None if floor is None else floor[below])  # fmt: skip
    below_top = table(below, 1 / under, FINDING_ROWS, op=results["op"].to_numpy()[below],
                      measured=col["measured_seconds"][below], t_lower=col["t_lower"][below],
                      ratio=under, under=1 / under, cause=causes)  # fmt: skip
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
        "measured_below_total": len(below),
        "measured_below_series": series_of(below),
        "measured_below": below_top,
        "measured_low": low,
        "measured_high": high,
        "listed": FINDING_ROWS,
        "slowest_listed": SLOWEST_ROWS,
    }


FINDINGS = ("slowest", "comm", "nofit", "measured_off", "measured_below")  # the row sets ranked


def below_causes(rows: pd.DataFrame, collective: np.ndarray, bound: np.ndarray,
                 ratio: np.ndarray, floor: np.ndarray | None) -> np.ndarray:  # fmt: skip
    """The likely cause of each row measured under its floor (`ratio` measured / t_lower < 1):
    "cache" for a memory-bound op whose bytes not read from HBM fit a cache (CACHE_BYTES),
    "one_shot" for a collective under its latency floor (`floor`), else "rates" (the
    catalog's rates are to check)."""
    # a row's bytes and measured time are n ops' for a `count` of n: per op, as a cache and a
    # latency floor are
    count = (rows["count"].to_numpy(dtype=float, na_value=1.0) if "count" in rows.columns
             else np.ones(len(rows)))  # fmt: skip
    hbm = rows["hbm_bytes"].to_numpy(dtype=float, na_value=np.nan) / count
    cache = ~collective & (bound == 1) & (hbm * (1 - ratio) <= CACHE_BYTES)
    measured = rows["measured_seconds"].to_numpy(dtype=float, na_value=np.nan) / count
    floor = np.full(len(rows), np.nan) if floor is None else floor  # NaN: none, never under
    one_shot = collective & (measured < floor)
    return np.where(cache, "cache", np.where(one_shot, "one_shot", "rates")).astype(object)


def measured_ratio(results: pd.DataFrame) -> np.ndarray:
    """Measured / predicted per row: over the calibrated estimate where the run has one
    (calibration.estimate), else over t_lower."""
    ratio = results["measured_over_predicted"].to_numpy(dtype=float, na_value=np.nan)
    if "measured_over_estimate" in results.columns:
        estimated = results["measured_over_estimate"].to_numpy(dtype=float, na_value=np.nan)
        ratio = np.where(np.isnan(estimated), ratio, estimated)
    return ratio


def finding_sets(results: pd.DataFrame, inside=None) -> dict[str, np.ndarray]:
    """The positions of the rows each finding ranks (FINDINGS): every row but those summed
    into a total (`inside`: a step's ops, a group's rows; their total is ranked); the ops
    starved of data (communication-bound with FLOPs: a collective row, no math, is
    communication by nature and not counted); the rows not fitting (totals, not the rows in
    them); those measured far from the prediction."""
    bound = bound_codes_of(results)
    alone = np.ones(len(results), dtype=bool) if inside is None else ~inside
    col = {c: results[c].to_numpy(dtype=float, na_value=np.nan)
           for c in ("t_math", "measured_seconds")}  # fmt: skip
    measured = np.flatnonzero(~np.isnan(col["measured_seconds"]))
    low, high = MEASURED_RANGE
    ratio = measured_ratio(results)[measured]
    return {
        "slowest": np.flatnonzero(alone),
        "comm": np.flatnonzero((bound != 0) & (col["t_math"] > 0)),
        "nofit": np.flatnonzero(~fits(results) & alone),
        "measured_off": measured[~((ratio >= low) & (ratio <= high))],
        "measured_below": np.flatnonzero(
            results["measured_over_predicted"].to_numpy(dtype=float, na_value=np.nan) < 1
        ),
    }


def no_comm_sentence(scenarios: int, collectives: int) -> str:
    """What the report says when no op with FLOPs is communication-bound: every scenario is
    then compute-bound or a collective row (which is network-bound and counted apart). With
    only collective rows it says what they are, not "none" beside their network-bound rows."""
    if not scenarios:
        return "None: there are no scenarios."
    if not collectives:
        return "None: every scenario is compute-bound."
    if collectives == scenarios:
        if scenarios == 1:
            return "1 collective row: network-bound by nature (no FLOPs)."
        return f"{scenarios:,} collective rows: network-bound by nature (no FLOPs)."
    return (
        f"None: besides the collective rows, every other scenario ({scenarios - collectives:,})"
        " is compute-bound."
    )


def partial_findings(
    results: pd.DataFrame, collective: np.ndarray, series=None, recurring=None, floor=None
) -> dict:
    """The findings of one frame of results, and per finding the rows its first and last
    series hold ("edges"), and those of the series of `recurring` rows (a transformer
    step's ops: their series recur through the file, one row per step): what merge_findings
    needs of it. `series`: as for findings; `floor`: the rows' latency floors (facts')."""
    series = series or pd.factorize(results["series"].astype(str))  # no string per row
    inside = None
    if recurring is not None:  # a total's rows, the total itself ranked in their place
        inside = recurring & ~results["op"].astype(str).isin(TOTAL_OPS).to_numpy(dtype=bool)
    sets = finding_sets(results, inside)
    found = _findings(results, collective, sets, series, floor)
    codes, names = series
    ends = list(dict.fromkeys(codes[[0, -1]].tolist())) if len(codes) else []
    again = np.unique(codes[recurring]).tolist() if recurring is not None else []
    edges = {}
    for key in FINDINGS:
        held = np.bincount(codes[sets[key]], minlength=len(names))
        edges[key] = {str(names[c]): int(held[c]) for c in dict.fromkeys(ends + again) if held[c]}
    return {**found, "edges": edges, "ends": [str(names[c]) for c in ends],
            "recurring": [str(names[c]) for c in again], "scenarios": len(results)}  # fmt: skip


PARTIAL_KEYS = ("edges", "ends", "recurring", "scenarios")  # what merging needs


def merge_findings(parts: list[dict]) -> dict:
    """The findings of consecutive frames (`parts`, partial_findings' in file order) as
    `findings` finds them over all their rows: totals summed, tables ranked again per series,
    the edges those of the whole. At least one part."""
    if len(parts) == 1:
        return parts[0]
    out = dict(parts[0])
    for key in TOTALS:
        out[key] = sum(p[key] for p in parts)
    scenarios = sum(int(p["scenarios"]) for p in parts)
    out["scenarios"] = scenarios
    out["comm_none"] = no_comm_sentence(scenarios, out["collective_rows"])
    edges = {}
    again = list(dict.fromkeys(s for p in parts for s in p.get("recurring", ())))
    for key in FINDINGS:
        held = [{**p["edges"][key], **_listed(p[key])} for p in parts]
        n = SLOWEST_ROWS if key == "slowest" else FINDING_ROWS
        out[key] = _ranked(parts, key, held, n)
        if key in SERIES_COUNTS:  # distinct series: a series on several frames once
            name = SERIES_COUNTS[key]
            shared = pd.Series([s for p in parts for s, k in p["edges"][key].items() if k])
            twice = shared.value_counts()
            out[name] = sum(p[name] for p in parts) - int((twice - 1).sum())
        edges[key] = _edges([p["edges"][key] for p in parts], [p["ends"] for p in parts], again)
    out["edges"] = edges
    out["ends"] = _ends([p["ends"] for p in parts])
    out["recurring"] = again
    return out


def _ends(ends: list[list[str]]) -> list[str]:
    """The first and last series of consecutive frames (each frame's, [] when empty)."""
    named = [e for e in ends if e]
    if not named:
        return []
    return list(dict.fromkeys([named[0][0], named[-1][-1]]))


def _edges(edges: list[dict], ends: list[list[str]], again: list[str]) -> dict[str, int]:
    """The rows of one finding the first and last series of consecutive frames, and the
    recurring ones, hold over every frame (a series can span many)."""
    whole = list(dict.fromkeys(_ends(ends) + again))
    return {s: n for s in whole if (n := sum(e.get(s, 0) for e in edges))}


def _listed(table: pd.DataFrame) -> dict[str, int]:
    return dict(zip(table["series"].astype(str), table["in_series"].astype(int), strict=True))


def _ranked(parts: list[dict], key: str, held: list[dict], n: int) -> pd.DataFrame:
    """The worst row per series over every frame's table, the n worst series, each with the
    rows of its series the finding covers."""
    tables = [p[key] for p in parts if len(p[key])]
    if not tables:
        return parts[0][key]
    both = pd.concat(tables, ignore_index=True)
    both = both.astype({c: str for c in ("name", "series", "hardware", "bound")})
    rank = both[RANKED_BY[key]].to_numpy(dtype=float)
    if key == "measured_off":
        with np.errstate(divide="ignore", invalid="ignore"):
            rank = np.abs(np.log(rank))
    order = np.argsort(-rank, kind="stable")  # ties in row order, as over every row
    both = both.iloc[order]
    both = both[~both["series"].duplicated()].head(n)
    counts = [sum(h.get(s, 0) for h in held) for s in both["series"]]
    return both.assign(in_series=np.asarray(counts, dtype=np.int64))
