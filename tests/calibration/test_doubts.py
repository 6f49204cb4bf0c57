"""What a fit says of its measurements and groups (pipeline.calibration.doubts): a unit in
doubt, a fitted group not used."""

from __future__ import annotations

import numpy as np

from pipeline.calibration.doubts import fit_warnings, unused_groups
from pipeline.calibration.fit import fit
from tests.helpers import analyze_rows


def matmuls(n: int = 40) -> list[dict]:
    return [{"name": f"m{i}", "op": "matmul", "B": 2**i % 8191 + 1, "D": 4096, "F": 4096,
             "hardware": "h100", "dtype": "bf16"} for i in range(n)]  # fmt: skip


def test_a_group_no_better_than_the_floor_is_named_in_a_warning():
    results = analyze_rows(matmuls()).results
    rng = np.random.default_rng(0)
    wild = rng.random(len(results)) < 0.3  # most rows measured at their floor exactly
    measured = results["t_lower"].to_numpy() * np.where(wild, 3.0, 1.0)
    rows = results.assign(measured_seconds=measured)
    cal = fit(rows)
    said = unused_groups(cal)
    assert len(said) == 1 and said[0].startswith("1 fitted group not used: the held-out median")
    assert "h100 matmul bf16 (held out " in said[0] and "the floor 0.0%)" in said[0]
    assert said[0] in fit_warnings(rows, cal)


def test_milliseconds_are_said_and_a_good_fit_says_nothing_of_its_groups():
    results = analyze_rows(matmuls()).results
    rows = results.assign(measured_seconds=results["t_lower"] * 1.5e3 + 2e-3)
    cal = fit(rows)
    assert unused_groups(cal) == ()
    said = fit_warnings(rows, cal)
    assert len(said) == 1 and "measured_seconds look like milliseconds" in said[0]
