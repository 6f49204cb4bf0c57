"""The shape of a series in words: its dims as its op names them, a dim whose values vary over
its rows as its range ('B=1..512 D=4096 F=4096'), from the ranges summary.series keeps of its
dims over the whole run; worded by the one builder of a row's shape too (pipeline.words)."""

from __future__ import annotations

import re

import pandas as pd

from pipeline.words import shape_texts


def series_shapes(lines: pd.DataFrame):
    """Each series line's shape over its whole run (summary.series: its dims' `<dim>_min` and
    `<dim>_max`), a swept dim as its range: 'B=1..512 D=4096 F=4096'."""
    dims = range_dims(lines)
    low = pd.DataFrame({d: lines[f"{d}_min"].array for d in dims}, index=lines.index)
    high = pd.DataFrame({d: lines[f"{d}_max"].array for d in dims}, index=lines.index)
    return shape_texts(lines["einsum"], low, high)


def range_dims(table: pd.DataFrame) -> list[str]:
    """The dims whose range a series table holds (its `<dim>_min` columns), in order."""
    return [c[0] for c in table.columns if isinstance(c, str) and _RANGE.match(c)]


_RANGE = re.compile(r"^[A-Z]_min$")
