"""The checks of the `group` column (docs/input.md#groups-blocks-of-your-own): the rows of a
group are summed, point by point of their sweep, into one total row named after the group
(model.groups). So a group's rows come one after another in the file, run on one chip, sweep
the same columns over the same values (compared as values: `1..4` is `1|2|3|4`), list no fleet
(hardware, dtype, chips lists: one group per chip), hold no transformer step (a step is its
own total) and name the group with a name no row has. A group is summed whole or not at all:
a problem on one of its rows refuses them all."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.errors import printable, quoted
from pipeline.scenarios.coded import Col
from pipeline.scenarios.expand import grids
from pipeline.scenarios.problems import Found, flag, rejected
from pipeline.scenarios.sweeps import Sweep


def grouped_rows(
    group: Col,
    names: np.ndarray,
    lines: np.ndarray,
    step: np.ndarray,
    labels: np.ndarray | None,
    sweeps: dict[str, tuple[np.ndarray, np.ndarray]],
    found: Found,
    chips: np.ndarray | None = None,
) -> np.ndarray:
    """Each row's group ('' for none), its problems added to `found` (in place): those of
    check_groups, then the rest of a group refused with a row refused (`labels`: the fleet
    labels of the rows, or None; `chips`: each row's chip by its catalog name)."""
    listed = np.zeros(len(step), dtype=bool) if labels is None else labels != ""
    ok = ~rejected(found, len(step))  # rows with a problem already: their sweeps unknown
    text, bad = check_groups(group, names, lines, step, listed, sweeps, ok)
    if chips is not None:
        bad += _chips_differ(text, np.asarray(chips, dtype=object), lines, ok & ~listed)
    found += bad
    found += refuse_whole(text, ~rejected(found, len(text)), lines)
    return text


def check_groups(
    group: Col,
    names: np.ndarray,
    lines: np.ndarray,
    step: np.ndarray,
    listed: np.ndarray,
    sweeps: dict[str, tuple[np.ndarray, np.ndarray]],
    ok: np.ndarray,
) -> tuple[np.ndarray, Found]:
    """Each row's group ('' for none) and the problems of grouped rows: `step` marks
    transformer rows, `listed` rows a fleet list made, `sweeps` the rows' sweep cells (of
    the rows `ok`, those with no problem so far, compared)."""
    text = group.values().astype(str)
    grouped = text != ""
    found: Found = []
    if not grouped.any():
        return text, found
    codes, labels = pd.factorize(pd.Series(text[grouped]))
    at = np.flatnonzero(grouped)
    first = np.full(len(labels), len(text))
    np.minimum.at(first, codes, at)
    last = np.zeros(len(labels), dtype=np.int64)
    np.maximum.at(last, codes, at)
    size = np.bincount(codes, minlength=len(labels))
    scattered = (last - first + 1) != size  # another row between two of the group's
    for g in np.flatnonzero(scattered).tolist():
        mine = at[codes == g]
        others = np.setdiff1d(np.arange(first[g], last[g] + 1), mine)
        found += flag(
            np.isin(np.arange(len(text)), mine),
            "group",
            f"group {quoted(labels[g])} has rows on lines {_lines(lines[mine])} and other "
            f"rows between them (line {int(lines[others[0]])}): a group's rows come one "
            "after another",
        )
    found += flag(grouped & step, "group", "a transformer step is its own total: leave its "
                  "group blank (its ops are summed into its row)")  # fmt: skip
    found += flag(grouped & listed, "group", "a group's rows list no fleet (hardware, dtype "
                  "or chips lists): write one group per chip and precision")  # fmt: skip
    taken = set(names[~grouped].tolist()) | set(names[grouped].tolist())
    for g in np.flatnonzero([label in taken for label in labels]).tolist():
        found += flag(
            grouped & (text == labels[g]),
            "group",
            f"group {quoted(labels[g])} is also a row's name: the group's total row takes "
            "its name; name one of them otherwise",
        )
    found += _sweeps_differ(grouped & ok, at, codes, first, labels, lines, sweeps)
    return text, found


def _chips_differ(text: np.ndarray, chips: np.ndarray, lines: np.ndarray, ok) -> Found:
    """The rows of groups whose rows (`ok` ones: a known chip, no fleet list) run on more
    than one chip, each told the group, its chips and their lines: a group's total is one
    chip's time, labelled with that chip."""
    rows = (text != "") & np.asarray(ok, dtype=bool)
    if not rows.any():
        return []
    at = np.flatnonzero(rows)
    pairs = pd.DataFrame({"g": text[at], "chip": chips[at].astype(str), "line": lines[at]})
    kinds = pairs.groupby("g", sort=False)["chip"].nunique()
    found: Found = []
    for g in kinds.index[kinds.to_numpy() > 1].tolist():  # per mixed group, not per row
        mine = pairs[pairs["g"] == g]
        where = mine.groupby("chip", sort=False)["line"].agg(list)
        said = " and ".join(
            f"{printable(chip)} ({'line' if len(ls) == 1 else 'lines'} {_lines(np.asarray(ls))})"
            for chip, ls in where.items()
        )
        found += flag(
            rows & (text == g),
            "hardware",
            f"group {quoted(g)} runs on {said}: a group's rows run on one chip (its total is "
            "one chip's time, labelled with it): write one group per chip",
        )
    return found


def _sweeps_differ(checked, at, codes, first, labels, lines, sweeps) -> Found:
    """The grouped rows that sweep other columns or values than their group's first row
    (of the `checked` rows): values compared, not how they are written (`1..4` is
    `1|2|3|4`, `1..10*2` is `1|2|4|8`), in order (the total sums the k-th points)."""
    of_row = grids(checked, sweeps)  # those rows only: {position: [(column, Sweep)]}
    found: Found = []
    for p, g in zip(at.tolist(), codes.tolist(), strict=True):
        head = int(first[g])
        if p == head or not (checked[p] and checked[head]):
            continue
        mine, theirs = _key(of_row.get(p, [])), _key(of_row.get(head, []))
        if [d for d, _ in mine] == [d for d, _ in theirs] and all(
            _apart(a, b) is None for (_, a), (_, b) in zip(mine, theirs, strict=True)
        ):
            continue  # the same values, however written
        rule = "a group's rows sweep the same columns over the same values"
        if _said(mine) != _said(theirs):
            reason = (
                f"sweeps {_said(mine)} but the first row of group {quoted(labels[g])} "
                f"(line {int(lines[head])}) sweeps {_said(theirs)}: {rule} (its total sums "
                "them point by point)"
            )
        else:  # as many values, from the same first to the same last: where they part
            d, k, a, b = next(
                (d, *apart)
                for (d, x), (_, y) in zip(mine, theirs, strict=True)
                if (apart := _apart(x, y)) is not None
            )
            reason = (
                f"sweeps {_said(mine)} as the first row of group {quoted(labels[g])} (line "
                f"{int(lines[head])}) does, but its {_ordinal(k + 1)} {d} is {a:,} where "
                f"that row's is {b:,}: {rule}, in the same order (its total sums them point "
                "by point)"
            )
        found.append((p, "group", reason))
    return found


def _apart(a: Sweep, b: Sweep) -> tuple[int, int, int] | None:
    """Where two sweeps' values first differ (position, a's value, b's value), or None when
    they are the same values in the same order. Never builds more values than a list already
    holds: sweeps of other lengths differ (said by their lengths, position -1), two ranges of
    as many values stepping by 1 differ at the start or not at all, and a range stepping by
    a factor holds at most 53."""
    if len(a) != len(b):
        return -1, len(a), len(b)
    if not a.items and not b.items and a.factor == b.factor == 1:
        return None if a.lo == b.lo else (0, a.lo, b.lo)
    x, y = a.values(), b.values()  # a list's own length, or a range of at most 53
    differ = np.flatnonzero(x != y)
    if not len(differ):
        return None
    k = int(differ[0])
    return k, int(x[k]), int(y[k])


def _key(grid: list[tuple[str, Sweep]]) -> tuple:
    return tuple(sorted(grid, key=lambda item: item[0]))


def _said(key: tuple) -> str:
    if not key:
        return "nothing"
    parts = []
    for d, cell in key:
        lo, hi = (int(v) for v in cell.values_at(np.array([0, len(cell) - 1])))
        parts.append(f"{d} over {len(cell):,} values ({lo:,} to {hi:,})")
    return ", ".join(parts)


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n:,}{suffix}"


def refuse_whole(text: np.ndarray, valid: np.ndarray, lines: np.ndarray) -> Found:
    """The valid rows of groups with a refused row: a group is summed whole or not at all."""
    grouped = text != ""
    bad = set(text[grouped & ~valid].tolist())
    if not bad:
        return []
    broken = grouped & np.isin(text, list(bad)) & valid
    first_bad = {}
    for p in np.flatnonzero(grouped & ~valid).tolist():
        first_bad.setdefault(text[p], int(lines[p]))
    return flag(
        broken,
        "group",
        lambda p: (
            f"refused with its group {quoted(text[p])}: its row on line "
            f"{first_bad[text[p]]} is refused, and a group is summed whole"
        ),
    )


def _lines(lines: np.ndarray) -> str:
    shown = ", ".join(str(int(v)) for v in lines[:4])
    return shown + (f" and {len(lines) - 4:,} more" if len(lines) > 4 else "")
