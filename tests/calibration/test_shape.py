"""The shape correction of a `roofline+shape` group (pipeline.calibration.shape): m, n, k of
a row from its einsum and dims, the fit of a known correction, its clamp, its text."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.calibration.shape import dumps, fit_shape, loads, log_dims, mnk, shape_factor
from tests.helpers import analyze_rows


def test_m_n_k_come_from_the_einsum_and_dims():
    rows = [
        {"name": "mm", "op": "matmul", "B": 3, "D": 5, "F": 7},
        {"name": "ein", "op": "BSD,DF->BSF", "B": 2, "S": 3, "D": 5, "F": 7},
        {"name": "attn", "op": "BHSD,BHTD->BHST", "B": 2, "H": 4, "S": 8, "T": 16, "D": 64},
        {"name": "c", "op": "custom", "flops": 10, "bytes": 10},
    ]
    results = analyze_rows([{**r, "hardware": "h100", "dtype": "bf16"} for r in rows]).results
    sizes = mnk(results)
    np.testing.assert_array_equal(sizes[:3], [[3, 7, 5], [6, 7, 5], [64, 16, 64]])
    assert np.isnan(sizes[3]).all()  # no einsum: no m, n, k
    without = mnk(results.drop(columns="S"))[1]  # a dim of m missing: m unknown
    assert np.isnan(without[0]) and list(without[1:]) == [7, 5]


def test_a_known_correction_is_recovered_and_clamped_to_the_fitted_range():
    rng = np.random.default_rng(0)
    logs = rng.uniform(0, 14, size=(400, 3))
    knee = np.quantile(logs[:, 1], 0.6)  # a hinge at one of the knots: exactly the form
    truth = (
        0.3 * np.maximum(logs[:, 1] - knee, 0) - 0.02 * logs[:, 0] + 0.01 * logs[:, 0] * logs[:, 2]
    )
    shape = fit_shape(logs, truth)
    np.testing.assert_allclose(np.log(shape_factor(logs, shape)), truth, atol=1e-4)
    # past the fitted range each L is clamped: the edge's value, not an extrapolation
    edge = logs[[np.argmax(logs[:, 1])]].copy()
    edge[0, 1] = shape["hi"][1]
    beyond = edge.copy()
    beyond[0, 1] = 30.0
    assert shape_factor(beyond, shape) == pytest.approx(shape_factor(edge, shape))
    assert shape_factor(np.full((1, 3), np.nan), shape) == 1.0  # sizes unknown: no correction


def test_the_text_reads_back_and_refuses_what_is_not_a_correction():
    rng = np.random.default_rng(1)
    logs = rng.uniform(0, 14, size=(300, 3))
    shape = fit_shape(logs, 0.1 * logs[:, 2])
    back = loads(dumps(shape))
    np.testing.assert_allclose(shape_factor(logs, back), shape_factor(logs, shape), rtol=1e-9)
    assert dumps(shape).startswith('{"knots":{"m":[')
    for bad in ("", "[]", '{"knots": {}}', dumps(shape).replace('"coef":[', '"coef":[1,')):
        with pytest.raises(ValueError, match="not a shape correction"):
            loads(bad)


def test_log_dims_is_nan_for_what_is_not_a_positive_size():
    np.testing.assert_array_equal(log_dims(np.array([[1.0, 8.0, 0.0]]))[0, :2], [0.0, 3.0])
    assert np.isnan(log_dims(np.array([[0.0, -1.0, np.nan]]))).all()
