"""The findings of a Dask run (model.summary.findings: the slowest scenarios, the ops starved
of data, the rows not fitting, the measured rows far from the prediction), merged from each
partition's own, exactly as the local engine finds them over every row.

Each partition sends its findings (the worst row of each of its top series, with the rows of
that series it holds) and, for the series it starts and ends with, the rows of each finding
they hold: only a series at a partition's edge can run on into the next one. So the merged
table ranks the worst row per series over every partition (a series of the overall top
n is among the top n of the partition holding its worst row), and its counts are complete."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.model.summary import (
    FINDING_ROWS,
    FINDINGS,
    SLOWEST_ROWS,
    finding_sets,
    findings,
    no_comm_sentence,
)

# the column each finding's table ranks by, largest first (measured_off: |log ratio|)
RANKED_BY = {"slowest": "t_lower", "comm": "factor", "nofit": "over", "measured_off": "ratio"}
TOTALS = ("comm_total", "comm_memory", "comm_network", "collective_rows", "nofit_total",
          "measured_total", "measured_off_total")  # fmt: skip
SERIES_COUNTS = {
    "comm": "comm_series",
    "nofit": "nofit_series",
    "measured_off": "measured_off_series",
}


def partition_findings(results: pd.DataFrame, collective: np.ndarray) -> dict:
    """A partition's findings, and per finding the rows its first and last series hold."""
    sets = finding_sets(results)
    found = findings(results, collective, sets)
    codes, names = pd.factorize(results["series"])  # no string per row
    ends = sorted(set(codes[[0, -1]].tolist())) if len(codes) else []
    edges = {}
    for key in FINDINGS:
        held = np.bincount(codes[sets[key]], minlength=len(names))
        edges[key] = {str(names[c]): int(held[c]) for c in ends if held[c]}
    return {**found, "edges": edges}


def merge_findings(parts: list[dict], scenarios: int) -> dict:
    """The findings of every partition's (`parts`, in partition order) as the local engine
    finds them over all the rows: totals summed, tables ranked again per series. At least
    one partition: a run with no scenario has the findings of its (empty) results."""
    out = dict(parts[0])
    out.pop("edges")
    for key in TOTALS:
        out[key] = sum(p[key] for p in parts)
    out["comm_none"] = no_comm_sentence(scenarios, out["collective_rows"])
    for key in FINDINGS:
        held = [{**p["edges"][key], **_listed(p[key])} for p in parts]
        n = SLOWEST_ROWS if key == "slowest" else FINDING_ROWS
        out[key] = _ranked(parts, key, held, n)
        if key in SERIES_COUNTS:  # distinct series: a series on several partitions once
            name = SERIES_COUNTS[key]
            shared = pd.Series([s for p in parts for s, k in p["edges"][key].items() if k])
            twice = shared.value_counts()
            out[name] = sum(p[name] for p in parts) - int((twice - 1).sum())
    return out


def _listed(table: pd.DataFrame) -> dict[str, int]:
    return dict(zip(table["series"].astype(str), table["in_series"].astype(int), strict=True))


def _ranked(parts: list[dict], key: str, held: list[dict], n: int) -> pd.DataFrame:
    """The worst row per series over every partition's table, the n worst series, each with
    the rows of its series the finding covers."""
    tables = [p[key] for p in parts if len(p[key])]
    if not tables:
        return parts[0][key]
    both = pd.concat(tables, ignore_index=True)
    both = both.astype({c: str for c in ("name", "series", "hardware", "bound")})
    rank = both[RANKED_BY[key]].to_numpy(dtype=float)
    if key == "measured_off":
        with np.errstate(divide="ignore", invalid="ignore"):
            rank = np.abs(np.log(rank))
    order = np.argsort(-rank, kind="stable")  # as the local engine: ties in row order
    both = both.iloc[order]
    both = both[~both["series"].duplicated()].head(n)
    counts = [sum(h.get(s, 0) for h in held) for s in both["series"]]
    return both.assign(in_series=np.asarray(counts, dtype=np.int64))
