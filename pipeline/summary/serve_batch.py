"""The batch of a serve row whose B is blank (docs/model.md#serving): the largest B whose time
per output token meets its `tpot_target` (and its `ttft_target`) and whose B requests fit at
their full context (`batch_at_target`, 0 when none does), else, without a target, the largest
B that fits (`max_batch`). Found by bisection over whole B from 1 to the largest that fits,
every searching row at once: each round computes the rows at their candidate B through the
same model, calibration and serve totals as the run (model.serve, model.transformer,
model.roofline, calibration.estimate, model.step_totals, model.serve_totals), so the B found
is the one the run's own figures say meets the target (the time per token grows with B).

It sits with the statistics because it runs the whole compute of a row, calibration included
(summary.partial.computed calls it before the expansion, on each engine's own rows)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.calibration.estimate import with_estimate
from pipeline.model.roofline import compute_record
from pipeline.model.serve import expand_serve, is_serve
from pipeline.model.serve_totals import serve_steps, with_serve_totals
from pipeline.model.step_totals import with_step_totals
from pipeline.model.transformer import expand_steps

BATCH_AT_TARGET = "batch_at_target"  # internal: the B found for a blank B with a target
# B timed a round: at most POINTS a row (the first round LOG_POINTS: 1, 2, 4, ...), about
# PROBES in all
POINTS, LOG_POINTS, PROBES = 32, 16, 4096


def with_serve_batch(frame: pd.DataFrame, calibration=None) -> pd.DataFrame:
    """`frame` with each serve row whose B is blank given its B (and BATCH_AT_TARGET where it
    has a target); unchanged without one."""
    serve = is_serve(frame)
    if not serve.any() or "B" not in frame.columns:
        return frame
    blank = serve & np.isnan(frame["B"].to_numpy(dtype=float))
    if not blank.any():
        return frame
    rows = frame[blank].reset_index(drop=True)
    n = len(rows)
    # first round: B = 1, 2, 4, ... (the largest that fits comes with B = 1)
    grid = 2.0 ** np.arange(max(1, min(LOG_POINTS, PROBES // n)))
    first = serve_figures(rows.iloc[np.repeat(np.arange(n), len(grid))]
                          .assign(B=np.tile(grid, n)), calibration)  # fmt: skip
    tpots = first["tpot"].reshape(n, len(grid))
    most = first["max_batch"].reshape(n, len(grid))[:, 0]  # the same at any B
    targets = {c: _column(rows, c) for c in ("ttft_target", "tpot_target")}
    asked = ~np.isnan(targets["ttft_target"]) | ~np.isnan(targets["tpot_target"])
    timed = ~np.isnan(targets["tpot_target"])
    with np.errstate(invalid="ignore"):
        ttft_ok = ~(first["ttft"].reshape(n, len(grid))[:, 0] > targets["ttft_target"])
        ok = (tpots <= targets["tpot_target"][:, None]) & (grid[None, :] <= most[:, None])
    j, pick = np.arange(len(grid)), np.arange(n)
    met_at = np.where(ok, j, -1).max(axis=1)  # the largest B known to meet (-1: none)
    missed_at = np.where(ok, len(grid), j).min(axis=1)  # the smallest known to miss
    met = np.where(met_at >= 0, grid[np.maximum(met_at, 0)], 0.0)
    missed = np.where(missed_at < len(grid), grid[np.minimum(missed_at, len(grid) - 1)], np.inf)
    up = np.minimum(missed, most + 1)  # or the smallest that does not fit
    at_low = np.where(met_at >= 0, tpots[pick, np.maximum(met_at, 0)], np.nan)
    at_up = np.where(up == missed, tpots[pick, np.minimum(missed_at, len(grid) - 1)], np.nan)
    low = np.where(timed, met, most)
    up = np.where(timed, up, most + 1)
    found = _search(rows, targets["tpot_target"], low, up, at_low, at_up, calibration)
    out = frame.copy()
    b = out["B"].to_numpy(dtype=float, copy=True)
    b[blank] = np.maximum(found, 1.0)  # none meets or fits: the nearest, at B = 1
    out["B"] = b
    at_target = np.full(len(out), np.nan)
    at_target[blank] = np.where(asked, np.where(ttft_ok, found, 0.0), np.nan)
    out[BATCH_AT_TARGET] = at_target
    return out


def _search(rows, target, low, up, at_low, at_up, calibration) -> np.ndarray:
    """The largest B from `low` (meets `target`: its time per token `at_low`) below `up`
    (misses, or does not fit: its time `at_up`, NaN if not timed) whose time per output
    token meets `target`, per row. Each round
    times, for every row still searching, a few B evenly spread between the two and the two
    next to where the line through the ends meets the target (the time per token is nearly
    linear in B: often found in one round); the time per token grows with B."""
    low, up, at_low, at_up = low.copy(), up.copy(), at_low.copy(), at_up.copy()
    while (searching := np.flatnonzero(up - low > 1)).size:
        spread = max(2, min(POINTS, PROBES // len(searching)))
        lo, hi = low[searching], up[searching]
        share = np.arange(1, spread + 1) / (spread + 1)
        grid = lo[:, None] + np.floor((hi - lo)[:, None] * share[None, :])
        with np.errstate(invalid="ignore", divide="ignore"):
            line = lo + np.floor((target[searching] - at_low[searching])
                                 / (at_up[searching] - at_low[searching]) * (hi - lo))  # fmt: skip
        line = np.where(np.isfinite(line), line, lo + 1)
        points = np.column_stack([grid, line, line + 1])
        points = np.clip(points, (lo + 1)[:, None], (hi - 1)[:, None])
        owner = np.repeat(searching, points.shape[1])
        tpot = serve_figures(rows.iloc[owner].assign(B=points.ravel()), calibration)["tpot"]
        ok = (tpot <= target[owner]).reshape(points.shape)
        tpot = tpot.reshape(points.shape)
        best = np.where(ok, points, -np.inf).argmax(axis=1)
        took = ok.any(axis=1)
        low[searching] = np.where(took, points[np.arange(len(lo)), best], lo)
        at_low[searching] = np.where(took, tpot[np.arange(len(lo)), best], at_low[searching])
        worst = np.where(ok, np.inf, points).argmin(axis=1)
        missed = ~ok.all(axis=1)
        up[searching] = np.where(missed, points[np.arange(len(lo)), worst], hi)
        at_up[searching] = np.where(missed, tpot[np.arange(len(lo)), worst], at_up[searching])
    return low


def serve_figures(rows: pd.DataFrame, calibration=None) -> dict[str, np.ndarray]:
    """`ttft`, `tpot` and `max_batch` of serve rows `rows` (each at its own B), computed as a
    run computes them."""
    frame = expand_steps(expand_serve(rows))
    results, facts = compute_record(frame)
    results = with_step_totals(with_estimate(results, calibration, facts), frame)
    results = with_serve_totals(results, frame)
    at = serve_steps(frame)[0]
    return {c: results[c].to_numpy(dtype=float, na_value=np.nan)[at]
            for c in ("ttft", "tpot", "max_batch")}  # fmt: skip


def _column(rows: pd.DataFrame, name: str) -> np.ndarray:
    if name not in rows.columns:
        return np.full(len(rows), np.nan)
    return rows[name].to_numpy(dtype=float)
