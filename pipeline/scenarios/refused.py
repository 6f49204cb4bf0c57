"""Rows refused after the model ran (numbers float64 cannot hold, model.overflow): they leave
the results and join the problems as `FILE:LINE: column COL: reason`, like any bad row."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pyarrow as pa

from pipeline.errors import RowProblem, quoted
from pipeline.scenarios.loaded import Loaded


def refuse_rows(
    loaded: Loaded, results: pd.DataFrame, refused: pd.DataFrame
) -> tuple[Loaded, pd.DataFrame]:
    """`loaded` and `results` without the input lines of the `refused` results rows (index:
    positions; column, reason), their problems merged into the loaded ones in line order."""
    if refused.empty:
        return loaded, results
    keep, problems = refused_problems(
        loaded.source, loaded.table, loaded.lines, loaded.frame["line"].to_numpy(), results, refused
    )
    merged = sorted([*loaded.problems, *problems], key=lambda q: q.line)  # stable: in line order
    frame = loaded.frame[keep].reset_index(drop=True)
    return replace(loaded, frame=frame, problems=tuple(merged)), results[keep].reset_index(
        drop=True
    )


def refused_problems(
    source: str,
    table: pa.Table,
    lines: np.ndarray,
    frame_lines: np.ndarray,
    results: pd.DataFrame,
    refused: pd.DataFrame,
) -> tuple[np.ndarray, list[RowProblem]]:
    """Which results rows to keep (those of lines with no refused row) and one problem per
    refused line (its first refused scenario). `table` and `lines` are the rows as read,
    `frame_lines` each results row's line. A blamed number the row did not give came from
    its chip, so the problem is then in column hardware."""
    bad = frame_lines[refused.index.to_numpy()]
    _, first = np.unique(bad, return_index=True)  # positions ascend with lines: the first
    where = pd.Index(lines).get_indexer(bad[first])  # each line's row as read
    names, series = results["name"].astype(str), results["series"].astype(str)
    problems = []
    for k, at in zip(first.tolist(), where.tolist(), strict=True):
        p = int(refused.index[k])
        column, reason = refused.iat[k, 0], refused.iat[k, 1]
        if not _given(table, column, at):
            column = "hardware"
        if names.iat[p] != series.iat[p]:  # a sweep: which of its points
            reason += f" (at {quoted(names.iat[p])})"
        problems.append(RowProblem(source, int(frame_lines[p]), series.iat[p], column, reason))
    return ~np.isin(frame_lines, bad), problems


def _given(table: pa.Table, column: str, at: int) -> bool:
    """Whether the row at position `at` (as read) has a non-blank cell in `column`."""
    if column not in table.column_names:
        return False
    cell = table.column(column)[at].as_py()
    return bool(cell and str(cell).strip())
