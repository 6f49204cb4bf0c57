"""What the chips chart draws (`pipeline.charts.chips`): each chosen chip's HBM roofline at one
dtype, from the side-by-side table of catalogs/chips.py (pure data, no matplotlib)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from pipeline.i18n import _
from pipeline.render import format as fmt
from pipeline.render.charts.labels import chart_text


@dataclass(frozen=True)
class ChipRoof:
    """One chip's roof: the HBM slope up to its ridge point, then its peak."""

    name: str
    peak: float  # FLOP/s at the chart's dtype
    bandwidth: float  # HBM bytes/s
    ridge: float  # FLOP/byte: peak / bandwidth, as the table has it
    index: int  # the chip's place among those chosen: its colour and marker on every chart

    @property
    def label(self) -> str:
        return _(
            "{chip}: {peak}, HBM {bandwidth}, ridge {ridge} FLOP/byte",
            chip=chart_text(self.name, 24),
            peak=fmt.flop_rate(self.peak),
            bandwidth=fmt.bandwidth(self.bandwidth),
            ridge=fmt.rounded(self.ridge),
        )


@dataclass(frozen=True)
class ChipsData:
    """The rooflines of several chips at one dtype, and the chips left out (no such peak)."""

    dtype: str
    roofs: tuple[ChipRoof, ...]
    left_out: tuple[str, ...]

    @property
    def title(self) -> str:
        n = len(self.roofs)
        if n == 1:
            return _("{dtype} rooflines: {n} chip", dtype=self.dtype, n=n)
        return _("{dtype} rooflines: {n} chips", dtype=self.dtype, n=n)

    @property
    def subtitle(self) -> str:
        return _(
            "min(dense peak, intensity × HBM bandwidth) per chip; at each ridge point "
            "(peak ÷ HBM bandwidth), its FLOP/byte"
        )

    @property
    def note(self) -> str:
        """What the chart says of the chips it leaves out ('' when none)."""
        if not self.left_out:
            return ""
        names = ", ".join(chart_text(n, 24) for n in self.left_out)
        if len(self.left_out) == 1:
            return _("not drawn: {names} (has no {dtype} peak in the catalog)", names=names,
                     dtype=self.dtype)  # fmt: skip
        return _("not drawn: {names} (have no {dtype} peak in the catalog)", names=names,
                 dtype=self.dtype)  # fmt: skip


def chips_data(table: pd.DataFrame, family: str) -> ChipsData:
    """The chart's data from chips()'s table (fields as rows, a column per chip) at peak
    family `family` (bf16, fp8, ...); a chip without that peak is left out."""
    peak = table.loc[f"peak_{family}"] if f"peak_{family}" in table.index else None
    roofs, left_out = [], []
    for index, chip in enumerate(table.columns):
        value = None if peak is None else peak[chip]
        if value is None or fmt.missing(value):
            left_out.append(str(chip))
            continue
        roofs.append(
            ChipRoof(
                name=str(chip),
                peak=float(value),
                bandwidth=float(table.at["hbm_bandwidth", chip]),
                ridge=float(table.at[f"ridge_{family}", chip]),
                index=index,
            )
        )
    return ChipsData(dtype=family, roofs=tuple(roofs), left_out=tuple(left_out))
