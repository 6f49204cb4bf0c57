"""Rows that split a dim over more chips than it has (some chips hold nothing: the model
times the busiest chip, which is right; a warning says the chips are wasted), as a partial:
per input line, counts, mins and maxes that add up over consecutive frames (summary.partial),
so a line cut by the Dask engine's partitions is counted whole. Summary.idle keeps the lines
with idle chips; scenarios.expand.idle_chip_words words them."""

from __future__ import annotations

import numpy as np
import pandas as pd

IDLE_COLUMNS = ("line", "chips", "most", "shard", "low", "high", "idle", "rows")


def idle_chips(frame: pd.DataFrame) -> pd.DataFrame:
    """Per input line with idle chips: the fewest and most chips of its rows that idle (a
    fleet row lists chips), its first such row's shard, the range of the split dim where
    chips idle, how many rows idle and how many rows the line has here; and the rows of the
    frame's first and last lines (idle 0: a line's rows are consecutive, so only those two
    can go on in the next or previous frame)."""
    if frame.empty or "chips" not in frame.columns:
        return pd.DataFrame(columns=list(IDLE_COLUMNS))
    lines = frame["line"].to_numpy()
    ends = pd.DataFrame({"line": np.unique(lines[[0, -1]]), "idle": 0})
    ends["rows"] = [int((lines == line).sum()) for line in ends["line"]]  # two at most
    if not (frame["chips"] > 1).any():
        return ends.reindex(columns=list(IDLE_COLUMNS))
    shard = frame["shard"].astype("category")
    codes = shard.cat.codes.to_numpy()
    size = np.full(len(frame), np.nan)
    for code, d in enumerate(shard.cat.categories):
        if d:
            rows = codes == code
            size[rows] = frame[d].to_numpy(dtype=float)[rows]
    chips = frame["chips"].to_numpy(dtype=float)
    with np.errstate(invalid="ignore"):
        idle = chips > size
    if not idle.any():
        return ends.reindex(columns=list(IDLE_COLUMNS))
    hit = pd.DataFrame(
        {"line": lines[idle], "size": size[idle], "chips": chips[idle],
         "shard": shard.to_numpy(dtype=object)[idle]}
    ).groupby("line", sort=True)  # fmt: skip
    first = hit.first()
    table = pd.DataFrame(
        {
            "line": first.index.to_numpy(),
            "chips": hit["chips"].min().to_numpy(),
            "most": hit["chips"].max().to_numpy(),
            "shard": first["shard"].to_numpy(),
            "low": hit["size"].min().to_numpy(),
            "high": hit["size"].max().to_numpy(),
            "idle": hit.size().to_numpy(),
            "rows": pd.Series(lines).value_counts().reindex(first.index).to_numpy(),
        }
    )
    return pd.concat([table, ends[~ends["line"].isin(table["line"])]], ignore_index=True)


def merge_idle(tables: list[pd.DataFrame]) -> pd.DataFrame:
    """idle_chips() of consecutive frames as that of all their rows: per line, its first
    shard, the overall ranges, and its idle rows and rows added up."""
    tables = [t for t in tables if len(t)]
    if len(tables) <= 1:
        return tables[0] if tables else pd.DataFrame(columns=list(IDLE_COLUMNS))
    both = pd.concat(tables, ignore_index=True).groupby("line", sort=True)
    out = both.first()[["shard"]]
    out["chips"], out["most"] = both["chips"].min(), both["most"].max()
    out["low"], out["high"] = both["low"].min(), both["high"].max()
    out["idle"], out["rows"] = both["idle"].sum(), both["rows"].sum()
    return out.reset_index()[list(IDLE_COLUMNS)]


def idle_lines(table: pd.DataFrame) -> pd.DataFrame:
    """The lines of a merged idle_chips() table that have idle chips, in line order."""
    table = table[table["idle"].to_numpy(dtype=float) > 0]
    return table.sort_values("line", kind="stable").reset_index(drop=True)
