"""Warnings about rows asking a link for more chips than it reaches (docs/input.md#links-and-
their-reach): `chips = 1024` over nvlink, which connects 8 GPUs of an HGX node, is timed as if
one switch joined them all; the warning names a link of that chip that reaches them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.catalogs.hardware import LINKS, Catalog
from pipeline.errors import printable
from pipeline.model.ops import COLLECTIVES, parse_op

REACH_WARNINGS = 20  # input lines and chips named one by one


def reach_warnings(
    frame: pd.DataFrame, catalog: Catalog, path: Path, weights: np.ndarray | None = None
) -> list[str]:
    """One warning per input line and chip whose rows communicate over more chips than
    their link reaches (a collective, or an op sharded on a contracted dim). `weights`: the
    scenarios each row stands for (a planned row, its sweeps not expanded), 1 by default."""
    if frame.empty or not (frame["chips"] > 1).any():
        return []
    chips = frame["chips"].to_numpy(dtype=float)
    hw, hw_names = _codes(frame["hardware"])
    link, link_names = _codes(frame["link"])
    table = catalog.chips
    reach_of = np.full((len(hw_names), len(link_names)), np.nan)  # a few chips and links
    for i, h in enumerate(hw_names):
        for j, lk in enumerate(link_names):
            if h in table.index and lk in LINKS:
                reach_of[i, j] = table.at[h, f"{lk}_reach"]
    reach = reach_of[hw, link]
    with np.errstate(invalid="ignore"):
        over = chips > reach
    if not over.any():
        return []
    over[over] = _communicates(frame[["op", "einsum", "shard", "chips"]][over])  # (not all)
    if not over.any():
        return []
    codes = hw * len(link_names) + link
    pairs = [(h, lk) for h in hw_names for lk in link_names]
    lines = frame["line"].to_numpy()
    # per input line and chip (a fleet row lists several): its scenarios, those past reach
    weight = np.ones(len(frame), np.int64) if weights is None else np.asarray(weights, np.int64)
    per_pair = pd.Series(weight, index=pd.MultiIndex.from_arrays([lines, codes]))
    total = per_pair.groupby(level=[0, 1]).sum()
    hit = pd.DataFrame(
        {
            "line": lines[over],
            "pair": codes[over],
            "chips": chips[over],
            "reach": reach[over],
            "n": weight[over],
        }  # fmt: skip
    ).groupby(["line", "pair"], sort=True)
    low, count, reach_at = hit["chips"].min(), hit["n"].sum(), hit["reach"].first()
    out = []
    for line, code in low.index[:REACH_WARNINGS]:
        hw, link = pairs[int(code)]
        c, r = int(low[(line, code)]), int(reach_at[(line, code)])
        n, of = int(count[(line, code)]), int(total[(line, code)])
        where = f"{printable(path)}:{line}: column chips:"
        many = f"{c:,} chips" if of == 1 else f"from {c:,} chips in {n:,} of {of:,} scenarios"
        out.append(
            f"{where} {many} over {link}, which reaches {r:,} chips on {printable(hw)}: the "
            f"time assumes one {link} domain joins them all. {_instead(table, hw, link, c)}"
        )
    if len(low) > REACH_WARNINGS:
        out.append(_left_unsaid(path, count.iloc[REACH_WARNINGS:]))
    return out


def _left_unsaid(path: Path, count: pd.Series) -> str:
    """The line after the warnings named: the scenarios of the input lines and chips left
    unsaid (`count`: per line and chip, its scenarios past reach) and their lines (a fleet
    row's chips are warnings of one line: 'on line 2', not '13 more rows')."""
    n = int(count.sum())
    lines = count.index.get_level_values(0).unique().sort_values()
    shown = ", ".join(str(int(line)) for line in lines[:5])
    if len(lines) == 1:
        where = f"line {shown}"
    elif len(lines) <= 5:
        where = f"lines {shown}"
    else:
        where = f"{len(lines):,} lines ({shown}, ...)"
    scenarios = "1 more scenario" if n == 1 else f"{n:,} more scenarios"
    asks = "asks" if n == 1 else "ask"
    return (
        f"{printable(path)}: and {scenarios} on {where} {asks} a link for more chips than it "
        "reaches"
    )


def _codes(column: pd.Series) -> tuple[np.ndarray, list[str]]:
    """A column's codes (int64: a categorical's own are int8 up to 127 names, and a chip's
    code times the links' count, a pair's, must not wrap) and their names (a categorical's
    own, else factorized)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        codes, names = column.cat.codes.to_numpy(), [str(c) for c in column.cat.categories]
    else:
        codes, uniques = pd.factorize(column.astype(str))
        names = [str(c) for c in uniques]
    return codes.astype(np.int64), names


def _communicates(frame: pd.DataFrame) -> np.ndarray:
    """Rows that move data between chips: collectives, and ops sharded on a dim they contract
    (each distinct einsum parsed once)."""
    op, ops = _named_codes(frame["op"])
    collective = np.isin(op, [i for i, name in enumerate(ops) if name in COLLECTIVES])
    einsum, einsums = _named_codes(frame["einsum"])
    shard, shards = _named_codes(frame["shard"])
    codes, uniques = pd.factorize(einsum * len(shards) + shard)  # each pair's codes, no text
    contracted = np.array([_contracts(f"{einsums[k // len(shards)]}|{shards[k % len(shards)]}")
                           for k in uniques], dtype=bool)  # fmt: skip
    return collective | (contracted[codes] & (frame["chips"].to_numpy(dtype=float) > 1))


def _named_codes(column: pd.Series) -> tuple[np.ndarray, list[str]]:
    """_codes, a missing value (-1) named as its text is ('nan')."""
    codes, names = _codes(column)
    return np.where(codes < 0, len(names), codes), [*names, "nan"]


def _contracts(key: str) -> bool:
    einsum, shard = key.rsplit("|", 1)
    if not einsum or not shard:
        return False
    try:
        return shard in parse_op(einsum).contracted
    except ValueError:
        return False


def _instead(table: pd.DataFrame, hw: str, link: str, chips: int) -> str:
    """What would reach: the chip's other links whose reach is unlimited or large enough."""
    row = table.loc[hw]
    links = [
        lk
        for lk in LINKS
        if lk != link
        and pd.notna(row[f"{lk}_bandwidth"])
        and (pd.isna(row[f"{lk}_reach"]) or row[f"{lk}_reach"] >= chips)
    ]
    if not links:
        return "No link of this chip reaches that many; split the op into levels."
    return (
        f"link = {links[0]} reaches them; or model two levels: {link} within each group of "
        f"{int(row[f'{link}_reach']):,} chips and {links[-1]} across the groups"
    )
