"""What loading hands on: the valid rows, typed and expanded, with every problem found."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd
import pyarrow as pa

from pipeline.errors import RowProblem
from pipeline.scenarios.plan import Planned


@dataclass(frozen=True)
class Loaded:
    """Scenarios after validation: the valid rows (typed, expanded) and every problem found."""

    source: str  # the file's path, or a label for rows given in memory
    frame: pd.DataFrame
    problems: tuple[RowProblem, ...]
    table: pa.Table  # the rows as read: every cell a string, header names normalized
    lines: np.ndarray  # each table row's line number
    dims: tuple[str, ...]
    extras: tuple[str, ...]
    warnings: tuple[str, ...] = field(default=())
    data: bytes | None = None  # the file's bytes (for its SHA-256); None for rows in memory
    planned: Planned | None = None  # checked, not expanded (the Dask engine's; frame: unexpanded)

    @property
    def source_rows(self) -> int:
        """Rows read, before sweep expansion."""
        return self.table.num_rows

    @property
    def rejected_lines(self) -> int:
        return len({p.line for p in self.problems})

    @cached_property
    def inputs(self) -> pd.DataFrame:
        """The rows as read (strings), with their line numbers first."""
        frame = self.table.to_pandas()
        frame.insert(0, "line", self.lines)
        return frame
