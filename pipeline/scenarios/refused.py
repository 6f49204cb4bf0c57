"""Rows refused after the model ran (numbers float64 cannot hold, model.overflow): they leave
the results and join the problems as `FILE:LINE: column COL: reason`, like any bad row."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from pipeline.errors import RowProblem, quoted

if TYPE_CHECKING:
    from pipeline.scenarios import Loaded


def refuse_rows(
    loaded: Loaded, results: pd.DataFrame, refused: pd.DataFrame
) -> tuple[Loaded, pd.DataFrame]:
    """`loaded` and `results` without the input lines of the `refused` results rows (index:
    positions; column, reason), each line reported once (its first refused scenario); a blamed
    number the row did not give came from its chip, so the problem is in column hardware."""
    if refused.empty:
        return loaded, results
    lines = loaded.frame["line"].to_numpy()
    bad = lines[refused.index.to_numpy()]
    _, first = np.unique(bad, return_index=True)  # positions ascend with lines: the first
    where = pd.Index(loaded.lines).get_indexer(bad[first])  # each line's row as read
    names, series = results["name"].astype(str), results["series"].astype(str)
    problems = []
    for k, at in zip(first.tolist(), where.tolist(), strict=True):
        p = int(refused.index[k])
        column, reason = refused.iat[k, 0], refused.iat[k, 1]
        if not _given(loaded, column, at):
            column = "hardware"
        if names.iat[p] != series.iat[p]:  # a sweep: which of its points
            reason += f" (at {quoted(names.iat[p])})"
        problems.append(RowProblem(loaded.source, int(lines[p]), series.iat[p], column, reason))
    keep = ~np.isin(lines, bad)
    merged = sorted([*loaded.problems, *problems], key=lambda q: q.line)  # stable: in line order
    frame = loaded.frame[keep].reset_index(drop=True)
    return replace(loaded, frame=frame, problems=tuple(merged)), results[keep].reset_index(
        drop=True
    )


def _given(loaded: Loaded, column: str, at: int) -> bool:
    """Whether the row at position `at` (as read) has a non-blank cell in `column`."""
    if column not in loaded.table.column_names:
        return False
    cell = loaded.table.column(column)[at].as_py()
    return bool(cell and str(cell).strip())
