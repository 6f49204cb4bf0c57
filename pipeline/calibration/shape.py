"""The shape correction of a calibration's `roofline+shape` form (issue 41): a matmul group's
roofline estimate times exp(c0 + sum_a [c_a L_a + sum_j c_aj max(L_a - q_aj, 0)]
+ c_mn L_m L_n + c_nk L_n L_k + c_mk L_m L_k), L_a = log2 of the op's m, n, k (m: the lhs
operand's free dims and the batch dims, n: the rhs operand's free dims, k: the contracted
dims; a plain matmul BD,DF->BF is m = B, k = D, n = F), the knots q_aj at QUANTILES of the
fitted rows' L_a. Fitted second, on the roofline form's log residual (soft-L1, F_SCALE);
when estimating, each L_a is clamped to the fitted rows' range (the hinges extrapolate
linearly and the products quadratically). A group's correction is kept as compact JSON text
(its `shape` column): {"knots": {...}, "coef": [...], "range": {...}}."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from pipeline.model.ops import OpError, is_dim, parse_op

AXES = ("m", "n", "k")
QUANTILES = (0.2, 0.4, 0.6, 0.8)
F_SCALE = 0.05  # the soft-L1 loss's scale: residuals past ~5 % count linearly, not squared
RIDGE = 1e-3  # a dim that never varies leaves its terms at 0
ROUNDS, TOLERANCE = 200, 1e-9  # the reweighting's rounds at most, and its change at the end


def mnk(results: pd.DataFrame) -> np.ndarray:
    """Each row's m, n, k (rows x 3, floats) from its einsum and dims, worked out per distinct
    einsum; NaN for a row without an einsum or with a dim missing."""
    out = np.full((len(results), 3), np.nan)
    if "einsum" not in results.columns or not len(results):
        return out
    codes, einsums = pd.factorize(results["einsum"].astype(object), use_na_sentinel=True)
    dims = {c: results[c].to_numpy(dtype=float, na_value=np.nan) for c in results.columns
            if is_dim(c)}  # fmt: skip
    for code, text in enumerate(einsums):  # a few distinct einsums
        if not isinstance(text, str) or not text.strip():
            continue
        try:
            sig = parse_op(text)
        except OpError:
            continue
        at = codes == code
        parts = (
            [d for d in sig.x if d in sig.out],  # lhs free and batch dims
            [d for d in sig.y if d in sig.out and d not in sig.x],  # rhs free dims
            [d for d in sig.dims if d not in sig.out],  # contracted
        )
        for axis, letters in enumerate(parts):
            value = np.ones(int(at.sum()))
            for d in letters:
                value = value * (dims[d][at] if d in dims else np.nan)
            out[at, axis] = value
    return out


def log_dims(sizes: np.ndarray) -> np.ndarray:
    """log2 of m, n, k; NaN where a size is not a positive number."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(sizes > 0, np.log2(np.where(sizes > 0, sizes, 1.0)), np.nan)


def _basis(logs: np.ndarray, knots: np.ndarray) -> np.ndarray:
    """The correction's features (rows x 19 with 4 knots): 1, then per axis L_a and its hinges,
    then the three products."""
    cols = [np.ones(len(logs))]
    for a in range(3):
        cols.append(logs[:, a])
        cols.extend(np.maximum(logs[:, a, None] - knots[a][None, :], 0.0).T)
    cols += [logs[:, 0] * logs[:, 1], logs[:, 1] * logs[:, 2], logs[:, 0] * logs[:, 2]]
    return np.column_stack(cols)


def fit_shape(logs: np.ndarray, residual: np.ndarray) -> dict:
    """The correction fitted to `residual` = log(measured / roofline estimate) of rows with
    log2 sizes `logs` (rows x 3, finite): its knots, coefficients and the rows' range."""
    knots = np.quantile(logs, QUANTILES, axis=0).T  # 3 x knots
    a = _basis(logs, knots)
    ridge = RIDGE * np.eye(a.shape[1])
    weight = np.ones(len(residual))
    coef = np.zeros(a.shape[1])
    for _ in range(ROUNDS):  # soft-L1 by reweighted least squares: w = (1 + (r / f)^2)^-1/2
        weighted = a * weight[:, None]  # einsum, not BLAS: its threads cost more than 19 x 19
        normal = np.einsum("ni,nj->ij", a, weighted) + ridge
        new = np.linalg.solve(normal, np.einsum("ni,n->i", weighted, residual))
        done = np.max(np.abs(new - coef)) < TOLERANCE
        coef = new
        if done:
            break
        weight = 1.0 / np.sqrt(1.0 + ((a @ coef - residual) / F_SCALE) ** 2)
    return {"knots": knots, "coef": coef, "lo": logs.min(axis=0), "hi": logs.max(axis=0)}


def shape_factor(logs: np.ndarray, shape: dict) -> np.ndarray:
    """exp(correction) per row, each L_a clamped to the fitted range; 1 where a size is
    unknown."""
    clamped = np.clip(logs, shape["lo"], shape["hi"])
    known = np.isfinite(clamped).all(axis=1)
    factor = np.ones(len(logs))
    if known.any():
        factor[known] = np.exp(_basis(clamped[known], shape["knots"]) @ shape["coef"])
    return factor


def dumps(shape: dict) -> str:
    """A correction as compact JSON text (the group's `shape` column and TOML key)."""
    return json.dumps(
        {
            "knots": {a: np.round(shape["knots"][i], 6).tolist() for i, a in enumerate(AXES)},
            "coef": [float(c) for c in shape["coef"]],
            "range": {
                a: [float(shape["lo"][i]), float(shape["hi"][i])] for i, a in enumerate(AXES)
            },  # fmt: skip
        },
        separators=(",", ":"),
    )


def loads(text: str) -> dict:
    """dumps()' text back (ValueError when it is not one)."""
    try:
        data = json.loads(text)
        knots = np.array([data["knots"][a] for a in AXES], dtype=float)
        coef = np.array(data["coef"], dtype=float)
        lo, hi = (np.array([data["range"][a][i] for a in AXES], dtype=float) for i in (0, 1))
    except (TypeError, KeyError, IndexError, json.JSONDecodeError) as e:
        raise ValueError(f"not a shape correction: {e}") from None
    if knots.ndim != 2 or len(coef) != 1 + 3 * (1 + knots.shape[1]) + 3:
        raise ValueError("not a shape correction: its knots and coefficients do not agree")
    if not (np.isfinite(coef).all() and np.isfinite(knots).all() and (lo <= hi).all()):
        raise ValueError("not a shape correction: a value is not a finite number")
    return {"knots": knots, "coef": coef, "lo": lo, "hi": hi}
