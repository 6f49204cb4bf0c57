"""Run-over-run comparison (DESIGN.md §9): two results frames matched by `name`, every change
of bound, fit, critical batch or time found in one vectorized pass (an index lookup, never a
loop over rows), and for each changed scenario the inputs that differ, so a catalog update
shows up as the cause of every row it moved.

Numbers in `old`, `new` and `causes` are written exactly (the shortest text that reads back
to the same double, `8.2e11`), as the CSV writes them: they are data, not a display.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from numbers import Real

import numpy as np
import pandas as pd

from pipeline.changes.groups import ChangeGroups, group_changes
from pipeline.changes.values import (
    CAUSES,
    FIRST_CAUSES,
    NUMBERS,
    calibrated_alike,
    exact_texts,
    plain_text,
    priced_alike,
    same_values,
    text_differs,
    typed_results,
    values_at,
)
from pipeline.errors import InvalidResults, described, printable, quoted
from pipeline.model.groups import TOTAL_OPS

KINDS = ("added", "removed", "bound", "fits", "critical_batch", "t_lower", "t_estimate", "cost",
         "energy")  # fmt: skip
# what a row spends: a change is a rise past the threshold (or one run without it), so that
# --fail-on cost fails a nightly whose rows got dearer, never one whose rows got cheaper; an
# energy rise only at a new TDP (one its time explains is that time's change)
RISES = ("cost", "energy")
# `series`: the source row a scenario came from (its name when the results have no series)
COLUMNS = ("name", "hardware", "change", "old", "new", "ratio", "causes", "series")
DEFAULT_THRESHOLD = 0.05
_DIM = re.compile(r"^[A-Z]$")
# t_estimate: compared when both runs have one (a calibrated run: calibration.estimate)
COMPARED = ("hardware", "bound", "fits", "critical_batch", "t_lower", "t_estimate", *RISES)
# the results a change is found in: a run without one cannot be compared with one that has it
RESULTS = ("bound", "fits", "critical_batch", "t_lower")


def compared_columns(columns: Iterable) -> list[str]:
    """The columns of a results frame a comparison reads: name, series, the compared
    results, the inputs (dims and CAUSES)."""
    wanted = {"name", "series", *COMPARED, *CAUSES}
    return [str(c) for c in columns if c in wanted or _DIM.match(str(c))]


ARROW = " \u2192 "
SHOWN_NAMES = 5


@dataclass(frozen=True)
class Changes:
    """What changed between two runs: one row per change (`table`), counts per kind, the
    number of scenarios compared, the columns one side lacks, per row of `table` its `points`
    (its place in file order, `position`: in the new run, a removed row's after them, in the
    baseline's order; and the numbers of the axes a series sweeps: dims, chips), and the
    changes grouped as people read them, once, here (`groups`: changes.groups), which
    changes.html, the report, the workbook and a notebook all word."""

    table: pd.DataFrame
    counts: Mapping[str, int]
    compared: int
    skipped: tuple[str, ...]
    points: pd.DataFrame
    groups: ChangeGroups
    threshold: float = DEFAULT_THRESHOLD

    @property
    def changed(self) -> bool:
        """Whether any change of any kind was found."""
        return any(self.counts.values())

    def failing(self, kinds: Iterable[str] | None = None) -> bool:
        """Whether a change of one of `kinds` (None: any kind) was found."""
        chosen = KINDS if kinds is None else tuple(kinds)
        unknown = [k for k in chosen if k not in KINDS]
        if unknown:
            raise ValueError(f"unknown change kind {unknown[0]!r}; one of {', '.join(KINDS)}")
        return any(self.counts[k] for k in chosen)


def check_threshold(threshold) -> float:
    """`threshold` as a float when it is a number in [0, 1); TypeError or ValueError saying so
    otherwise (NaN, a bool and a text are refused)."""
    if isinstance(threshold, bool) or not isinstance(threshold, Real):
        raise TypeError(f"threshold must be a number in [0, 1), not {described(threshold)}")
    if not 0 <= threshold < 1:  # NaN fails both comparisons
        raise ValueError(
            f"threshold must be a number in [0, 1), e.g. {DEFAULT_THRESHOLD}, not {threshold!r}"
        )
    return float(threshold)


def compare_results(
    old: pd.DataFrame, new: pd.DataFrame, threshold: float = DEFAULT_THRESHOLD
) -> Changes:
    """The changes from `old` to `new` (results frames, matched by `name`); a `t_lower` change
    is a ratio new/old outside 1 ± `threshold`. InvalidResults when a frame has no `name`
    column, a name twice, a compared column twice or a cell of the wrong kind (text in
    `t_lower`), or when one frame has a compared result column (RESULTS) the other lacks."""
    threshold = check_threshold(threshold)
    old = typed_results(_checked(old, "baseline"), _rows_of("the baseline results"))
    new = typed_results(_checked(new, "new"), _rows_of("the new results"))
    _check_one_sided(old, new)
    old, new = priced_alike(*calibrated_alike(old, new))
    one_sided = set(compared_columns(old.columns)) ^ set(compared_columns(new.columns))
    skipped = tuple(sorted(one_sided - {"series"}))  # read to group by, never compared
    old_names = old["name"].astype(str).to_numpy(dtype=object)
    new_names = new["name"].astype(str).to_numpy(dtype=object)
    at_old = pd.Index(old_names).get_indexer(new_names)  # -1: added
    new_i = np.flatnonzero(at_old >= 0)
    old_i = at_old[new_i]
    kept = np.ones(len(old), dtype=bool)
    kept[old_i] = False
    added, removed = np.flatnonzero(at_old < 0), np.flatnonzero(kept)

    both = [c for c in new.columns if c in old.columns]
    causes = _from_rows(new, new_i, _causes(old, new, old_i, new_i, both))
    parts = {"added": _presence(new, added, "added"), "removed": _presence(old, removed, "removed")}
    places = [added, len(new) + removed]  # each part's rows: their place in file order
    for kind in ("bound", "fits", "critical_batch"):
        if kind in both and plain_text(old[kind]) and plain_text(new[kind]):
            at, a_at, b_at = text_differs(old[kind], old_i, new[kind], new_i)
            parts[kind] = _part(new, new_i[at], kind, a_at, b_at, None, causes, at)
            places.append(new_i[at])
        elif kind in both:
            a, b = values_at(old[kind], old_i), values_at(new[kind], new_i)
            at = np.flatnonzero(~same_values(a, b))
            ratio = _ratio(a[at], b[at]) if kind in NUMBERS else None  # 310 → 348: 1.12
            parts[kind] = _part(
                new, new_i[at], kind, exact_texts(a[at]), exact_texts(b[at]), ratio, causes, at
            )
            places.append(new_i[at])
    for time in ("t_lower", "t_estimate"):  # a change: new/old outside 1 ± threshold
        if time not in both:
            continue
        a, b = values_at(old[time], old_i), values_at(new[time], new_i)
        ratio = _ratio(a, b)
        at = np.flatnonzero(~same_values(a, b) & ~(np.abs(ratio - 1) <= threshold))
        text_a, text_b = exact_texts(a[at]), exact_texts(b[at])
        parts[time] = _part(new, new_i[at], time, text_a, text_b, ratio[at], causes, at)
        places.append(new_i[at])
    for kind in RISES:  # a rise: new/old above 1 + threshold, or one side without a value
        if kind not in both:
            continue
        a, b = values_at(old[kind], old_i), values_at(new[kind], new_i)
        ratio = _ratio(a, b)
        rose = ~same_values(a, b) & ~(ratio <= 1 + threshold)
        if kind == "energy":  # at the same TDP, energy follows the time: no change of its own
            rose &= "tdp" in both and ~same_values(values_at(old["tdp"], old_i),
                                                   values_at(new["tdp"], new_i))  # fmt: skip
        at = np.flatnonzero(rose)
        text_a, text_b = exact_texts(a[at]), exact_texts(b[at])
        parts[kind] = _part(new, new_i[at], kind, text_a, text_b, ratio[at], causes, at)
        places.append(new_i[at])
    table = pd.concat(parts.values(), ignore_index=True)
    table = table.astype({c: "str" for c in COLUMNS if c != "ratio"} | {"ratio": float})
    counts = {k: len(parts[k]) if k in parts else 0 for k in KINDS}
    points = _points(old, new, np.concatenate(places).astype(np.int64))
    return Changes(table, counts, len(new_i), skipped, points, group_changes(table, points),
                   threshold)  # fmt: skip


def merge_changes(named: Sequence[tuple[str, Changes]]) -> Changes:
    """Several inputs' comparisons as one (a whole run's): the tables one after another with
    an `input` column naming each row's input (grouped by too), positions after the inputs
    before, counts and scenarios compared summed, the skipped columns of any; the threshold
    the first's."""
    if not named:
        raise ValueError("merge_changes needs at least one (input, Changes) pair")
    table = pd.concat([c.table.assign(input=str(n)) for n, c in named], ignore_index=True)
    ends = np.cumsum([int(c.points["position"].max()) + 1 if len(c.points) else 0
                      for _, c in named])  # fmt: skip
    points = pd.concat([c.points.assign(position=c.points["position"] + start)
                        for (_, c), start in zip(named, np.r_[0, ends[:-1]], strict=True)],
                       ignore_index=True)  # fmt: skip
    return Changes(
        table=table,
        counts={k: sum(int(c.counts.get(k, 0)) for _, c in named) for k in KINDS},
        compared=sum(int(c.compared) for _, c in named),
        skipped=tuple(sorted({s for _, c in named for s in c.skipped})),
        points=points,
        groups=group_changes(table, points),
        threshold=named[0][1].threshold,
    )


def _ratio(old: np.ndarray, new: np.ndarray) -> np.ndarray:
    """new / old of a number that changed (1 when both are 0; NaN when either is missing)."""
    old, new = np.asarray(old, dtype=float), np.asarray(new, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((old == 0) & (new == 0), 1.0, new / old)


def _rows_of(label: str) -> Callable[[int], str]:
    return lambda row: f"{label}, row {row + 1:,}"


def _checked(frame: pd.DataFrame, label: str) -> pd.DataFrame:
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"the {label} results must be a DataFrame, not {described(frame)}")
    if "name" not in frame.columns:
        raise InvalidResults(f"the {label} results have no 'name' column; is it a results file?")
    twice = repeated_columns(frame.columns)
    if twice:
        raise InvalidResults(f"the {label} results have {twice}; each column must be there once")
    names = repeated_names(frame["name"])
    if names:
        raise InvalidResults(
            f"the {label} results name {names}; scenarios are matched by name, so each must "
            "be unique"
        )
    return frame


def repeated_columns(columns: Iterable) -> str:
    """ "the column 't_lower' twice (columns 3 and 7)" for the first compared column that
    `columns` holds more than once; '' when none is."""
    names = [str(c) for c in columns]
    read = set(compared_columns(names)) | {"name"}
    seen: dict[str, list[int]] = {}
    for at, name in enumerate(names, start=1):
        if name in read:
            seen.setdefault(name, []).append(at)
    for name, places in seen.items():
        if len(places) > 1:
            where = ", ".join(map(str, places[:-1])) + f" and {places[-1]}"
            times = "twice" if len(places) == 2 else f"{len(places)} times"
            return f"the column {quoted(name)} {times} (columns {where})"
    return ""


def repeated_names(names: pd.Series) -> str:
    """ "2 scenario(s) more than once ('a', 'c')" for `names` that repeat; '' when none does."""
    dup = names.astype(str).duplicated(keep="first")
    if not dup.any():
        return ""
    twice = pd.unique(names.astype(str)[dup])
    shown = ", ".join(f"'{printable(n)}'" for n in twice[:SHOWN_NAMES])
    more = f" and {len(twice) - SHOWN_NAMES} more" if len(twice) > SHOWN_NAMES else ""
    return f"{len(twice):,} scenario(s) more than once ({shown}{more})"


def listed(names: Iterable[str]) -> str:
    """ "'a', 'b' and 'c'": names quoted, the last two joined by 'and'."""
    shown = [quoted(n) for n in names]
    return ", ".join(shown[:-1]) + f" and {shown[-1]}" if len(shown) > 1 else "".join(shown)


def _check_one_sided(old: pd.DataFrame, new: pd.DataFrame) -> None:
    """InvalidResults when a result a change is found in is a column of one frame only: a
    comparison that skipped it would say 'no changes' of what it never looked at."""
    for side, frame, other in (("new", new, old), ("baseline", old, new)):
        lacking = [c for c in RESULTS if c in other.columns and c not in frame.columns]
        if lacking:
            raise InvalidResults(
                f"the {side} results have no {listed(lacking)} "
                f"column{'s' if len(lacking) > 1 else ''} "
                f"and the {'baseline' if side == 'new' else 'new'} results do: compare results "
                "that both have name, bound, fits, critical_batch and t_lower (any results "
                "file of `pipeline run`)"
            )


def _causes(old, new, old_i, new_i, both) -> np.ndarray:
    """For each scenario in both runs, the inputs that differ: 'D 8754 → 8756; ...'."""
    text = np.full(len(new_i), "", dtype=object)
    first = [c for c in FIRST_CAUSES if c in both]
    dims = [c for c in both if _DIM.match(str(c))]
    for col in first + dims + [c for c in CAUSES if c in both and c not in first]:
        if plain_text(old[col]) and plain_text(new[col]):  # compared as codes: no string per row
            at, a, b = text_differs(old[col], old_i, new[col], new_i)
        else:
            a, b = values_at(old[col], old_i), values_at(new[col], new_i)
            at = np.flatnonzero(~same_values(a, b))
            a, b = a[at], b[at]
        if at.size == 0:
            continue
        part = f"{col} " + exact_texts(a) + ARROW + exact_texts(b)
        sep = np.where(text[at] == "", "", "; ").astype(object)
        text[at] = text[at] + sep + part
    return text


def _from_rows(new: pd.DataFrame, new_i: np.ndarray, causes: np.ndarray) -> np.ndarray:
    """`causes` with a total row's own empty ones (a step's or a group's: its inputs are its
    first row's) said from its rows: 'in its rows: count 32 → 16', the first of them that
    has a cause (a step's ops are named `step/op`; a group's rows carry its name)."""
    if "op" not in new.columns or not len(new_i):
        return causes
    total = new["op"].astype(str).isin(TOTAL_OPS).to_numpy(dtype=bool)
    if not total.any():
        return causes
    block = np.cumsum(total) - 1  # each row's latest total, -1 before the first
    at = np.flatnonzero(total)[np.maximum(block, 0)]
    names = new["name"].astype(str).to_numpy(dtype=object)
    mine = new["name"].astype(str).str.rpartition("/")[0].to_numpy(dtype=object) == names[at]
    if "group" in new.columns:
        series = new["series"].astype(str).to_numpy(dtype=object)
        mine |= new["group"].astype(str).to_numpy(dtype=object) == series[at]
    own = np.full(len(new), "", dtype=object)
    own[new_i] = causes
    said = ~total & (block >= 0) & mine & (own != "")
    if not said.any():
        return causes
    first = pd.Series(own[said]).groupby(block[said]).first()
    wanted = total[new_i] & (causes == "")
    per_block = first.reindex(block[new_i][wanted]).to_numpy(dtype=object)
    found = pd.notna(per_block)
    out = causes.copy()
    out[np.flatnonzero(wanted)[found]] = "in its rows: " + per_block[found].astype(str)
    return out


def _points(old: pd.DataFrame, new: pd.DataFrame, places: np.ndarray) -> pd.DataFrame:
    """Per change, its place (`position`; past len(new): a removed row of the baseline) and the
    axes a sweep varies (dims, chips) as numbers, NaN where a run lacks one."""
    axes = sorted({str(c) for c in (*old.columns, *new.columns) if _DIM.match(str(c))})
    axes += ["chips"] if "chips" in old.columns or "chips" in new.columns else []
    in_new = places < len(new)
    points = {"position": places}
    for axis in axes:
        values = np.full(len(places), np.nan)
        for side, frame, at in ((in_new, new, places), (~in_new, old, places - len(new))):
            if axis in frame.columns and side.any():
                cells = pd.to_numeric(pd.Series(values_at(frame[axis], at[side])), errors="coerce")
                values[side] = cells.to_numpy(dtype=float)
        points[axis] = values
    return pd.DataFrame(points)


def _texts(frame: pd.DataFrame, column: str) -> bool:
    """Whether `frame` has `column` as text (a series of names read back as numbers has lost
    its text: '007' is 7)."""
    return column in frame.columns and frame[column].dtype.kind not in "biufc"


def _presence(frame: pd.DataFrame, at: np.ndarray, kind: str) -> pd.DataFrame:
    hardware = values_at(frame["hardware"], at) if "hardware" in frame else np.full(len(at), "")
    names = frame["name"].take(at).astype(str).to_numpy(dtype=object)
    series = values_at(frame["series"], at) if _texts(frame, "series") else names
    return pd.DataFrame(
        {
            "name": names,
            "hardware": hardware,
            "change": kind,
            "old": "",
            "new": "",
            "ratio": np.nan,
            "causes": "",
            "series": np.where(series == "", names, series),  # none given: its own series
        },
        columns=list(COLUMNS),
    )


def _part(new, rows, kind, old_text, new_text, ratio, causes, at) -> pd.DataFrame:
    frame = _presence(new, rows, kind)
    frame["old"], frame["new"] = old_text, new_text
    if ratio is not None:
        frame["ratio"] = ratio
    frame["causes"] = causes[at]
    return frame
