"""Scenarios the model refused after computing (numbers float64 cannot hold: the one rule of
model.overflow.refusals, both engines') leave the results and join the problems as
`FILE:LINE: column COL: reason`, like any bad row."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from pipeline.errors import RowProblem
from pipeline.scenarios.loaded import Loaded


def with_problems(
    problems: Sequence[RowProblem], refused: Sequence[RowProblem]
) -> tuple[RowProblem, ...]:
    """The problems found reading a file and those of the model's refusals, in line order
    (stable: a line's own problems first)."""
    return tuple(sorted([*problems, *refused], key=lambda q: q.line))


def refuse_rows(loaded: Loaded, keep: np.ndarray, refused: Sequence[RowProblem]) -> Loaded:
    """`loaded` without the scenarios `keep` leaves out, the problems of `refused` merged into
    its own (with_problems)."""
    if not refused:
        return loaded
    frame = loaded.frame[keep].reset_index(drop=True)
    return replace(loaded, frame=frame, problems=with_problems(loaded.problems, refused))
