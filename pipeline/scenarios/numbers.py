"""A number column of a scenario file parsed: each distinct cell once, a bad one said with
what would be valid (scenarios.checks' Checker.numbers, the dims', peaks' and rows' own)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.errors import quoted
from pipeline.scenarios.coded import Col
from pipeline.scenarios.problems import Found, flag_per_value
from pipeline.scenarios.sweeps import TOO_BIG, whole_number_reason


def parse_numbers(
    col: Col, name: str, *, integer: bool = False, what: str = "a positive number", rows=True
) -> tuple[Col, Found]:
    """An optional numeric column parsed once per distinct value: a Col of floats, NaN for
    blank or bad, and the bad ones' problems (in `rows` only). `integer`: whole numbers up to
    2^53, parsed exactly."""
    u = col.uniques
    if integer:
        reasons = np.array([whole_number_reason(t) for t in u], dtype=object)
        bad = np.array([r is not None for r in reasons], dtype=bool)
        nums = np.array(
            [float(t) if t and not b else np.nan for t, b in zip(u, bad, strict=True)],
            dtype=float,
        )
        found = (
            flag_per_value(
                col.per_row(bad) & rows,
                name,
                col,
                lambda u: (
                    f"{quoted(u)} "
                    + (TOO_BIG if TOO_BIG == whole_number_reason(u) else f"is not {what}")
                ),
            )
            if bad.any()
            else []
        )
        return Col(col.codes, nums), found
    nums = pd.to_numeric(pd.Series(u, dtype=object).where(u != ""), errors="coerce")
    nums = nums.to_numpy(dtype=float)
    bad = (u != "") & ~((nums > 0) & np.isfinite(nums))
    found = (
        flag_per_value(col.per_row(bad) & rows, name, col, lambda u: f"{quoted(u)} is not {what}")
        if bad.any()
        else []
    )
    return Col(col.codes, np.where(bad, np.nan, nums)), found
