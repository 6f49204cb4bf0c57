"""Energy and cost beside time (docs/model.md#energy-and-cost): each row's chips at their board
power (TDP) for the row's time, energy = tdp x chips x time, an upper bound (a decode step,
memory-bound, draws well below TDP); with prices, cost = usd_per_chip_hour x chips x time /
3600; and per token on transformer steps and serve rows. The time is the calibrated estimate
where the row has one, else the floor. Whole columns, no per-row Python."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from pipeline.model.transformer import is_step

ENERGY_COLUMNS = ("tdp", "energy")  # on every row
PRICE_COLUMNS = ("usd_per_chip_hour", "cost")  # with prices
TOKEN_COLUMNS = ("tokens_per_joule", "usd_per_million_tokens")  # steps and serve rows
AFTER = "network_efficiency"  # the columns follow it (docs/outputs.md#resultscsv)
SERVE = "serve"
SECONDS_PER_HOUR = 3600.0


def row_time(results: pd.DataFrame) -> np.ndarray:
    """Each row's time (s): t_estimate where the row has one, else t_lower."""
    t = results["t_lower"].to_numpy(dtype=float)
    if "t_estimate" not in results.columns:
        return t
    estimate = results["t_estimate"].to_numpy(dtype=float, na_value=np.nan)
    return np.where(np.isnan(estimate), t, estimate)


def chip_values(hardware: pd.Series, values: Mapping[str, float]) -> np.ndarray:
    """Each row's value of its chip from `values` (NaN for a chip without one): one lookup
    per distinct chip."""
    codes, chips = pd.factorize(hardware)
    table = np.array([*(values.get(str(c), np.nan) for c in chips), np.nan], dtype=float)
    return table[codes]  # code -1 (no chip) takes the NaN


def with_costs(
    results: pd.DataFrame, frame: pd.DataFrame, prices: Mapping[str, float] | None = None
) -> pd.DataFrame:
    """`results` (row for row with the expanded scenario `frame`, totals filled) with
    ENERGY_COLUMNS, PRICE_COLUMNS when `prices` (USD per chip-hour by chip) is given, and
    TOKEN_COLUMNS when the run has transformer steps or serve rows, after AFTER."""
    n = len(results)
    tdp = frame["tdp"].to_numpy(dtype=float) if "tdp" in frame.columns else np.full(n, np.nan)
    chips = results["chips"].to_numpy(dtype=float)
    time = row_time(results)
    with np.errstate(over="ignore"):  # a time near float64's largest: its energy past it
        chip_seconds = chips * time
        new = {"tdp": tdp, "energy": _held(tdp * chip_seconds)}
        price = None
        if prices is not None:
            price = chip_values(results["hardware"], prices)
            new["usd_per_chip_hour"] = price
            new["cost"] = _held(price * chip_seconds / SECONDS_PER_HOUR)
    steps = is_step(frame)
    serve = _is_serve(frame)
    if steps.any() or serve.any():
        new.update(_per_token(results, steps, serve, new, tdp, price))
    out = results.copy(deep=False)
    at = out.columns.get_loc(AFTER) + 1 if AFTER in out.columns else len(out.columns)
    for k, (name, values) in enumerate(new.items()):
        out.insert(at + k, name, values)
    return out


def _held(values: np.ndarray) -> np.ndarray:
    """`values` with those past float64 (inf, of a finite time) blank: never given as inf."""
    return np.where(np.isinf(values), np.nan, values)


def _is_serve(frame: pd.DataFrame) -> np.ndarray:
    op = frame["op"]
    if isinstance(op.dtype, pd.CategoricalDtype) and SERVE not in op.cat.categories:
        return np.zeros(len(frame), dtype=bool)
    return (op == SERVE).to_numpy(dtype=bool)


def _per_token(results, steps, serve, new, tdp, price) -> dict[str, np.ndarray]:
    """tokens_per_joule and usd_per_million_tokens: a step's tokens (tokens_per_second x its
    floor) over its energy and cost, at the same time basis; a serve row's from its decode
    rate, tokens_per_second_per_chip / tdp and usd_per_chip_hour / 3600 /
    tokens_per_second_per_chip x 1e6 (docs/model.md#energy-and-cost)."""
    n = len(results)
    per_joule, per_million = np.full(n, np.nan), np.full(n, np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        if steps.any() and "tokens_per_second" in results.columns:
            rate = results["tokens_per_second"].to_numpy(dtype=float)
            tokens = rate * results["t_lower"].to_numpy(dtype=float)  # a step's tokens
            per_joule[steps] = (tokens / new["energy"])[steps]
            if price is not None:
                per_million[steps] = (new["cost"] / tokens * 1e6)[steps]
        if serve.any() and "tokens_per_second_per_chip" in results.columns:
            rate = results["tokens_per_second_per_chip"].to_numpy(dtype=float)
            per_joule[serve] = (rate / tdp)[serve]
            if price is not None:
                per_million[serve] = (price / SECONDS_PER_HOUR / rate * 1e6)[serve]
    out = {"tokens_per_joule": per_joule}
    if price is not None:
        out["usd_per_million_tokens"] = per_million
    return out
