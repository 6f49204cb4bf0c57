"""Changes grouped as people read them (issue 29): one group per series and cause, the
scenario edits first, then what the hardware numbers moved (the catalog or a --hardware
file), then what moved with no input differing (the model), then added and removed. Each
group says how many scenarios it holds and the stretch of its sweep they cover
(`B = 123…172`), and is made of parts, one per kind of change (a bound flip memory → compute,
the time, a fit, the critical batch), each with its own count and stretch.

Computed once per comparison, as pipeline.changes.compare makes it (its Changes' `groups`), with
pandas group-bys and numpy over its rows, formatted nowhere: changes.html, the report's "Since
the baseline", the workbook's Changes sheet and a notebook word the same groups
(pipeline.render.text.changes).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from pipeline.changes.values import CAUSES, exact

# a group's origin, in reading order: the scenario file's own edits come first
ORIGINS = ("edit", "catalog", "prices", "calibration", "model", "added", "removed")
# the inputs a chip gives every row on it (its catalog entry or a --hardware file); a row's
# own override of one reads the same in the results, so it counts as the hardware's too
HARDWARE_NUMBERS = (
    "peak_flops", "hbm_bandwidth", "link_bandwidth", "link_latency",
    "compute_efficiency", "hbm_efficiency", "network_efficiency", "tdp", "usd_per_chip_hour",
)  # fmt: skip
# the parts of a group in reading order: what the bound and the fit did, then the time
READING = ("bound", "fits", "t_lower", "t_estimate", "cost", "energy", "critical_batch", "added",
           "removed")  # fmt: skip
STATES = ("bound", "fits")  # a part per old → new value; the numbers' parts give their ranges
GROUP_COLUMNS = (
    "input", "origin", "causes", "hardware", "chips_named", "series", "series_named",
    "scenarios", "span", "example", "block", "block_scenarios", "block_series",
)  # fmt: skip
# the origins whose cause is a chip's: a block per chip and cause (a calibration's values are
# a chip's too, per op kind)
PER_CHIP = ("catalog", "prices", "calibration")
WHOLE = ("prices", "calibration")  # the origins whose line per chip holds every series moved
PART_COLUMNS = (
    "group", "change", "old", "new", "scenarios", "span", "example",
    "old_min", "old_max", "new_min", "new_max", "ratio_min", "ratio_max",
)  # fmt: skip
# the name each part of a cause starts with: 'B 512 → 128; hbm_bandwidth 8.2e11 → 9e11'
_NAMED = re.compile(r"(?:^|; )([A-Z]|" + "|".join(map(re.escape, CAUSES)) + r") ")
SPAN = "\u2026"  # B = 123…172


@dataclass(frozen=True)
class ChangeGroups:
    """A comparison's changes grouped: `groups` (GROUP_COLUMNS, in reading order: origin, the
    cause, the chip when the cause is its numbers or its calibration (`hardware`; else the
    first one and `chips_named`, how many), the series ('' for a calibration's: one line per
    chip and cause holds every series it moved, `series_named` of them), how many scenarios
    and their `span`, the first scenario, and the cause `block` it shares with other series,
    its scenarios and series);
    `parts` (PART_COLUMNS, by group in READING order: the kind, old → new for a state, the
    scenarios, their span, the first, the numbers' ranges and new/old's); `order`: the
    changes table's rows in the same reading order."""

    groups: pd.DataFrame
    parts: pd.DataFrame
    order: np.ndarray

    def __len__(self) -> int:
        return len(self.groups)


def origins(change: pd.Series, causes: pd.Series) -> np.ndarray:
    """Each change's origin (ORIGINS): added or removed; 'edit' when an input of its own row
    differs (a dim, op, dtype, chips, hardware, ...); 'catalog' when only hardware numbers
    differ; 'prices' when only the price file's do (usd_per_chip_hour: --prices); 'calibration'
    when only the calibration does; 'model' when nothing does. Each
    distinct cause is read once."""
    codes, uniques = pd.factorize(causes.astype(str).to_numpy(dtype=object))
    named = pd.Series(uniques, dtype=object).str.extractall(_NAMED)[0]
    own = (~named.isin((*HARDWARE_NUMBERS, "calibration"))).groupby(level=0).any()
    edited = uniques != ""  # a cause naming no known input: shown first, not buried
    edited[own.index.to_numpy(dtype=np.int64)] = own.to_numpy(dtype=bool)
    priced = np.zeros(len(uniques), dtype=bool)
    only_price = (named == "usd_per_chip_hour").groupby(level=0).all()
    priced[only_price.index.to_numpy(dtype=np.int64)] = only_price.to_numpy(dtype=bool)
    calibrated = np.zeros(len(uniques), dtype=bool)
    only = (named == "calibration").groupby(level=0).all()
    calibrated[only.index.to_numpy(dtype=np.int64)] = only.to_numpy(dtype=bool)
    kind = change.astype(str).to_numpy(dtype=object)
    chosen = np.select(
        [kind == "added", kind == "removed", uniques[codes] == "", edited[codes],
         calibrated[codes], priced[codes]],
        ["added", "removed", "model", "edit", "calibration", "prices"],
        "catalog",
    )  # fmt: skip
    return chosen.astype(object)


def group_changes(table: pd.DataFrame, points: pd.DataFrame) -> ChangeGroups:
    """A comparison's changes (its table and their points: changes.compare.Changes) grouped by
    origin, cause and series, in reading order (ChangeGroups)."""
    position = points["position"].to_numpy(dtype=np.int64)
    axes = points.drop(columns="position")
    origin = origins(table["change"], table["causes"])
    hardware = table["hardware"].astype(str).to_numpy(dtype=object)
    chip = np.where(np.isin(origin, PER_CHIP), hardware, "")  # a chip's numbers: its own cause
    series = table["series"] if "series" in table else table["name"]
    series_text = series.astype(str).to_numpy(dtype=object)
    # a calibration moves the estimates of every series on a chip alike, a price the cost of
    # every row on the chip: one line holds them
    whole = np.isin(origin, WHOLE)
    inputs = table["input"] if "input" in table else pd.Series("", index=table.index)
    keys = pd.DataFrame(
        {
            "input": inputs.astype(str).to_numpy(dtype=object),
            "origin": pd.Categorical(origin, categories=ORIGINS),
            "chip": chip,
            "causes": table["causes"].astype(str).to_numpy(dtype=object),
            "series": np.where(whole, "", series_text),
        }
    )
    group = keys.groupby(list(keys.columns), sort=False, observed=True).ngroup().to_numpy()
    first = _first_rows(group, position)
    names = table["name"].astype(str).to_numpy(dtype=object)
    distinct = ~pd.DataFrame({"g": group, "n": names}).duplicated().to_numpy()
    size = np.bincount(group[distinct], minlength=len(first))
    # a line of several series: no stretch of one sweep to say
    spans = np.where(whole[first], "", _spans(group[distinct], axes[distinct], len(first)))
    groups = pd.DataFrame(
        {
            "input": keys["input"].to_numpy()[first],
            "origin": origin[first],
            "causes": keys["causes"].to_numpy()[first],
            "chip": chip[first],
            "hardware": hardware[first],
            "chips_named": _distinct_per(group, hardware, len(first)),
            "series": keys["series"].to_numpy()[first],
            "series_named": _distinct_per(group, series_text, len(first)),
            "scenarios": size,
            "span": spans,
            "example": names[first],
            "position": position[first],
            # a series whose bound or fit moved leads its cause's block
            "steady": np.bincount(group, weights=np.isin(table["change"], STATES)) == 0,
        }
    )
    groups, rank = _in_reading_order(groups)
    parts = _parts(table, rank[group], position, axes)
    several = groups["origin"].isin(WHOLE).to_numpy()  # lines of several series
    parts.loc[several[parts["group"].to_numpy()], "span"] = ""
    reading = pd.Categorical(table["change"], categories=READING).codes
    order = np.lexsort((position, reading, rank[group]))
    return ChangeGroups(groups.loc[:, list(GROUP_COLUMNS)], parts, order)


def _first_rows(codes: np.ndarray, position: np.ndarray) -> np.ndarray:
    """The row of each code (0..n-1) that comes first in file order."""
    by = np.lexsort((position, codes))
    return by[np.flatnonzero(np.r_[True, np.diff(codes[by]) != 0])] if len(by) else by


def _distinct_per(codes: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    pairs = pd.DataFrame({"c": codes, "v": values}).drop_duplicates()
    return np.bincount(pairs["c"].to_numpy(dtype=np.int64), minlength=n)


def _spans(codes: np.ndarray, axes: pd.DataFrame, n: int) -> np.ndarray:
    """Per code (0..n-1), the axes its rows vary over, each low…high: 'B = 123…172, D = 1…8'
    ('' where no axis varies: one scenario, or points differing only in text)."""
    text = np.full(n, "", dtype=object)
    if axes.empty or n == 0:
        return text
    stats = axes.groupby(codes).agg(["min", "max"]).reindex(range(n))
    for axis in axes.columns:
        low, high = stats[(axis, "min")].to_numpy(), stats[(axis, "max")].to_numpy()
        varies = np.flatnonzero(~np.isnan(low) & ~np.isnan(high) & (low != high))
        if varies.size == 0:
            continue
        part = f"{axis} = " + _exact(low[varies]) + SPAN + _exact(high[varies])
        text[varies] = text[varies] + np.where(text[varies] == "", "", ", ") + part
    return text


def _exact(values: np.ndarray) -> np.ndarray:
    codes, uniques = pd.factorize(values)
    return np.array([exact(u) for u in uniques], dtype=object)[codes]


def _in_reading_order(groups: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray]:
    """The groups sorted as they read, with their cause blocks; and each old group's rank.
    Edits and added/removed in file order; the hardware numbers' and the model's causes the
    most scenarios first; within a cause, the series whose bound or fit moved first, each
    kind in file order."""
    cause = groups[["origin", "chip", "causes"]]
    block = cause.groupby(list(cause.columns), sort=False).ngroup().to_numpy()
    block_size = np.bincount(block, weights=groups["scenarios"]).astype(np.int64)
    block_first = pd.Series(groups["position"]).groupby(block).min().to_numpy()
    by_size = groups["origin"].isin(("catalog", "model")).to_numpy()
    origin = pd.Categorical(groups["origin"], categories=ORIGINS).codes
    size = np.where(by_size, -block_size[block], 0)
    sort = np.lexsort((groups["position"], groups["steady"], block_first[block], size, origin))
    rank = np.empty(len(sort), dtype=np.int64)
    rank[sort] = np.arange(len(sort))
    ordered = groups.iloc[sort].reset_index(drop=True)
    blocks = pd.factorize(block[sort])[0]  # numbered in reading order
    ordered["block"] = blocks
    ordered["block_scenarios"] = block_size[block[sort]]
    named = np.bincount(blocks, weights=ordered["series_named"]).astype(np.int64)
    ordered["block_series"] = named[blocks]  # a calibration's line holds several
    return ordered, rank


def _parts(table: pd.DataFrame, group: np.ndarray, position, axes) -> pd.DataFrame:
    """One row per (group, kind of change, old → new of a state) in reading order."""
    change = table["change"].astype(str).to_numpy(dtype=object)
    state = np.isin(change, STATES)
    old_text = table["old"].astype(str).to_numpy(dtype=object)
    new_text = table["new"].astype(str).to_numpy(dtype=object)
    keys = pd.DataFrame(
        {
            "group": group,
            "change": pd.Categorical(change, categories=READING),
            "old": np.where(state, old_text, ""),
            "new": np.where(state, new_text, ""),
        }
    )
    part = keys.groupby(list(keys.columns), sort=True, observed=True).ngroup().to_numpy()
    n = int(part.max()) + 1 if len(part) else 0
    first = _first_rows(part, position)
    numbers = pd.DataFrame(
        {
            "old": pd.to_numeric(pd.Series(np.where(state, "", old_text)), errors="coerce"),
            "new": pd.to_numeric(pd.Series(np.where(state, "", new_text)), errors="coerce"),
            "ratio": table["ratio"].to_numpy(dtype=float),
        }
    )
    stats = numbers.groupby(part).agg(["min", "max"]).reindex(range(n))
    return pd.DataFrame(
        {
            "group": group[first],
            "change": change[first],
            "old": keys["old"].to_numpy()[first],
            "new": keys["new"].to_numpy()[first],
            "scenarios": np.bincount(part, minlength=n),
            "span": _spans(part, axes, n),
            "example": table["name"].astype(str).to_numpy(dtype=object)[first],
            **{f"{c}_{s}": stats[(c, s)].to_numpy(dtype=float)
               for c in ("old", "new", "ratio") for s in ("min", "max")},
        },
        columns=list(PART_COLUMNS),
    )  # fmt: skip
