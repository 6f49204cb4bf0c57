"""The checks of a calibration file's values (pipeline.calibration.checks): a shape
correction's text as calibration.shape writes it, and a group's values said one by one (the
file's own messages: tests/calibration/test_file.py)."""

from __future__ import annotations

import math

import numpy as np

from pipeline.calibration.checks import GROUP_KEYS, check_table, group_values, shape_problem
from pipeline.calibration.shape import dumps, fit_shape


def test_a_fitted_shape_correction_passes_and_each_fault_is_named():
    rng = np.random.default_rng(0)
    logs = rng.uniform(4, 14, (300, 3))
    text = dumps(fit_shape(logs, 0.1 * logs[:, 0] - 0.05 * logs[:, 2]))
    assert shape_problem(text) == ""
    assert shape_problem(3) == "3 is not text"
    assert shape_problem("[]") == "not an object of knots, coef and range"
    assert shape_problem(text.replace('"range"', '"spans"')) == "unknown key 'spans'"
    short = text.replace('"k":[', '"k":[1.0,', 1)
    assert shape_problem(short) in (
        "the axes' knots differ in count", "knots of k are not ascending finite numbers"
    )  # fmt: skip


def said(group: dict) -> list[str]:
    problems: list[str] = []
    group_values(group, ("h100", "matmul"), lambda where, text: problems.append(text))
    return problems


def test_a_groups_values_default_and_each_problem_is_said():
    good = {"form": "roofline", "compute_efficiency": 0.5, "hbm_efficiency": 1.0,
            "network_efficiency": 1.0, "overhead_seconds": 1e-6, "rows": 30,
            "fitted": True, "used": True, "reason": ""}  # fmt: skip
    assert said(good) == []
    values = group_values(good, ("h100", "matmul"), lambda *a: None)
    assert math.isnan(values["heldout_median"]) and values["shape"] == "" and values["source"] == ""
    assert said({**good, "used": True, "fitted": False}) == [
        ": key used: true, but the group is not fitted"
    ]
    assert said({**good, "floor_p90": math.inf}) == [
        ": key floor_p90: inf is not an error: a fraction 0 or more (max(t/m, m/t) - 1), or nan"
    ]
    missing: list[str] = []
    check_table({}, GROUP_KEYS, ("h",), lambda where, text: missing.append(text), optional=True)
    assert len(missing) == len(GROUP_KEYS)
