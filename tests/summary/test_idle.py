"""summary/idle.py: rows splitting a dim over more chips than it has, as a partial: per line,
counted on one frame, and the same when the frame is cut anywhere and the parts merged (a
line cut by partitions counted whole, its rows in every part among them)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.summary.idle import IDLE_COLUMNS, idle_chips, idle_lines, merge_idle


def frame() -> pd.DataFrame:
    """Line 2: 8 chips over D = 1..10 (idle below 8); line 3: 1 or 4 chips over D = 2 or 8;
    line 4: one chip."""
    d = [*range(1, 11), 2, 8, 2, 8, 5]
    return pd.DataFrame(
        {"line": [2] * 10 + [3] * 4 + [4], "chips": [8] * 10 + [1, 1, 4, 4, 1],
         "shard": ["D"] * 15, "D": np.asarray(d, dtype=float)}
    )  # fmt: skip


def test_a_frame_counts_its_idle_rows_and_every_row_of_their_lines():
    got = idle_lines(idle_chips(frame()))
    assert got.to_dict("records") == [
        {"line": 2, "chips": 8, "most": 8, "shard": "D", "low": 1.0, "high": 7.0, "idle": 7,
         "rows": 10},
        {"line": 3, "chips": 4, "most": 4, "shard": "D", "low": 2.0, "high": 2.0, "idle": 1,
         "rows": 4},
    ]  # fmt: skip


@pytest.mark.parametrize("cuts", [[3], [5, 12], [1, 2, 11, 13], list(range(1, 15))])
def test_parts_merged_count_as_the_whole(cuts):
    """Line 3's idle row (4 chips, D = 2) sits in one part, its other rows in others."""
    whole = idle_lines(idle_chips(frame()))
    edges = [0, *cuts, len(frame())]
    parts = [idle_chips(frame().iloc[a:b]) for a, b in zip(edges, edges[1:], strict=False)]
    got = idle_lines(merge_idle(parts))
    pd.testing.assert_frame_equal(got.astype(whole.dtypes.to_dict()), whole)


def test_no_idle_chip_no_line():
    one = frame().assign(chips=1)
    assert idle_lines(idle_chips(one)).empty
    assert idle_lines(merge_idle([idle_chips(one), idle_chips(one.iloc[:0])])).empty
    assert list(idle_chips(one.iloc[:0]).columns) == list(IDLE_COLUMNS)
