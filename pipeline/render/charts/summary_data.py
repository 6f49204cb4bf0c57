"""What the summary chart draws: scenario counts per bound and hardware (pure data)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from pipeline.i18n import _
from pipeline.model.roofline import BOUNDS


@dataclass(frozen=True)
class SummaryData:
    """Scenario counts per bound and hardware."""

    title: str
    hardware: tuple[str, ...]
    counts: Mapping[str, tuple[int, ...]]
    note: str = "no scenarios to chart"  # said instead of bars when there are none


def summary_data(per_hardware: pd.DataFrame) -> SummaryData:
    """Scenario counts per bound and hardware, from Summary.per_hardware."""
    total = int(per_hardware["total"].sum()) if len(per_hardware) else 0
    return SummaryData(
        title=_("Which limit binds: {total} scenarios by hardware", total=f"{total:,}"),
        note=_("no scenarios to chart"),
        hardware=tuple(str(h) for h in per_hardware.index),
        counts={b: tuple(int(v) for v in per_hardware[b]) for b in BOUNDS},
    )
