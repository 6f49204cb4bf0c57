"""model/cost.py: each row's energy at TDP (tdp x chips x time) and, with prices, its cost
(usd_per_chip_hour x chips x time / 3600); per token on transformer steps and serve rows."""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

import pipeline
from pipeline.model.cost import ENERGY_COLUMNS, PRICE_COLUMNS, TOKEN_COLUMNS

TDP = {"h100": 700.0, "a100": 400.0}  # the vendors' SXM board power (W), set here
PRICE = {"h100": 3.0}  # USD per chip-hour, a price of the test's own


@pytest.fixture(scope="module")
def powered():
    """The catalog with the test's TDPs (the shipped figures are the catalog's own tests')."""
    cat = pipeline.load_hardware()
    tdp = pd.Series(np.nan, index=cat.chips.index)
    for chip, watts in TDP.items():
        tdp[chip] = watts
    return replace(cat, chips=cat.chips.assign(tdp=tdp))


MATMUL = {"name": "m", "op": "matmul", "B": 4096, "D": 8192, "F": 8192, "hardware": "h100",
          "dtype": "bf16"}  # fmt: skip
GATHER = {"name": "g", "op": "all_gather", "bytes": 1e9, "chips": 8, "hardware": "h100",
          "dtype": "bf16"}  # fmt: skip
STEP = {"name": "d", "op": "transformer", "model": "llama3-8b", "hardware": "h100", "B": 8,
        "T": 1, "S": 2048, "dtype": "bf16"}  # fmt: skip


def test_energy_is_tdp_times_chips_times_the_floor_on_a_matmul_and_a_collective(powered):
    r = pipeline.analyze([MATMUL, GATHER], hardware=powered).results.set_index("name")
    for name, chips in (("m", 1), ("g", 8)):
        assert r.loc[name, "tdp"] == 700.0
        assert r.loc[name, "energy"] == pytest.approx(700.0 * chips * r.loc[name, "t_lower"])
    # 2 x 4096 x 8192^2 FLOPs at 989 TFLOP/s: 0.556 ms, at 700 W: 0.389 J
    assert r.loc["m", "energy"] == pytest.approx(0.389, rel=2e-3)


def test_the_columns_sit_after_the_efficiencies_and_cost_only_with_prices(powered):
    r = pipeline.analyze([MATMUL], hardware=powered).results
    at = list(r.columns).index("network_efficiency") + 1
    assert list(r.columns[at : at + 2]) == list(ENERGY_COLUMNS)
    assert not set(PRICE_COLUMNS) & set(r.columns)
    assert not set(TOKEN_COLUMNS) & set(r.columns)  # no step, no serve row: no tokens


def test_a_chip_without_tdp_has_blank_energy(powered):
    r = pipeline.analyze([{**MATMUL, "hardware": "tpu-v5e"}], hardware=powered).results
    assert np.isnan(r["tdp"].iloc[0]) and np.isnan(r["energy"].iloc[0])


def test_an_energy_or_cost_past_float64_is_blank_and_no_warning(powered):
    huge = {"name": "h", "op": "custom", "hardware": "h100", "flops": 1.7e308, "bytes": 1.0,
            "peak_flops": 1.0}  # fmt: skip
    prices = pd.DataFrame({"hardware": ["h100"], "usd_per_chip_hour": [3.0e5],
                           "source": ["a quote"], "date": ["2026-11-01"]})  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = pipeline.analyze([huge, MATMUL], hardware=powered, prices=prices).results
    assert r["t_lower"].iloc[0] == pytest.approx(1.7e308)  # the time is held, its energy not
    assert np.isnan(r["energy"].iloc[0]) and np.isnan(r["cost"].iloc[0])
    assert r["energy"].iloc[1] == pytest.approx(700.0 * r["t_lower"].iloc[1])


def test_cost_is_price_times_chips_times_time_over_3600(powered):
    prices = pd.DataFrame({"hardware": ["H100"], "usd_per_chip_hour": [3.0],
                           "source": ["a quote"], "date": ["2026-11-01"]})  # fmt: skip
    a = pipeline.analyze([MATMUL, GATHER, {**MATMUL, "name": "x", "hardware": "a100"}],
                         hardware=powered, prices=prices)  # fmt: skip
    r = a.results.set_index("name")
    at = list(a.results.columns).index("energy") + 1
    assert list(a.results.columns[at : at + 2]) == list(PRICE_COLUMNS)
    for name, chips in (("m", 1), ("g", 8)):
        assert r.loc[name, "usd_per_chip_hour"] == 3.0
        assert r.loc[name, "cost"] == pytest.approx(3.0 * chips * r.loc[name, "t_lower"] / 3600)
    assert np.isnan(r.loc["x", "cost"])  # a100 has no price: blank, said once
    said = [w for w in a.warnings if "a100" in w and "price" in w]
    assert len(said) == 1


def test_a_transformer_step_per_token_figures(powered):
    prices = pd.DataFrame({"hardware": ["h100"], "usd_per_chip_hour": [3.0],
                           "source": ["a quote"], "date": ["2026-11-01"]})  # fmt: skip
    a = pipeline.analyze([STEP, {**STEP, "name": "tp", "chips": 2, "shard": "N"}],
                         hardware=powered, prices=prices)  # fmt: skip
    r = a.results.set_index("name")
    for name, chips in (("d", 1), ("tp", 2)):
        t, tps = r.loc[name, "t_lower"], r.loc[name, "tokens_per_second"]
        # a step's energy: its chips at TDP for its time (every chip held the whole step)
        assert r.loc[name, "energy"] == pytest.approx(700.0 * chips * t)
        ops = r[r["series"].str.startswith(f"{name}/")]
        if chips == 1:  # one chip: the sum of its ops' (one after another)
            assert r.loc[name, "energy"] == pytest.approx(ops["energy"].sum())
        else:  # a replicated op (the norms) runs as one chip's row, its twin idle beside it
            assert r.loc[name, "energy"] > ops["energy"].sum()
        per_chip = tps / chips
        assert r.loc[name, "tokens_per_joule"] == pytest.approx(per_chip / 700.0)
        assert r.loc[name, "usd_per_million_tokens"] == pytest.approx(3.0 / 3600 / per_chip * 1e6)
    assert r.loc["d/q_proj", ["tokens_per_joule", "usd_per_million_tokens"]].isna().all()


def test_a_calibrated_row_is_costed_at_its_estimate_else_its_floor(powered):
    a = pipeline.analyze([MATMUL, STEP], hardware=powered, calibration="published")
    r = a.results.set_index("name")
    t = r.loc["m", "t_estimate"]
    assert np.isfinite(t) and t != r.loc["m", "t_lower"]
    assert r.loc["m", "energy"] == pytest.approx(700.0 * t)
    basis = r["t_estimate"].where(r["t_estimate"].notna(), r["t_lower"]).astype(float)
    assert r["energy"].to_numpy(float) == pytest.approx(700.0 * basis.to_numpy(float))


def test_a_serve_row_per_token_figures_come_from_its_decode_rate(powered):
    prices = pd.DataFrame({"hardware": ["h100"], "usd_per_chip_hour": [3.0],
                           "source": ["a quote"], "date": ["2026-11-01"]})  # fmt: skip
    serve = {"name": "s", "op": "serve", "model": "llama3-8b", "hardware": "h100",
             "dtype": "bf16", "kv_dtype": "bf16", "chips": 2, "shard": "N", "isl": 1024,
             "osl": 256, "B": 32}  # fmt: skip
    r = pipeline.analyze([serve], hardware=powered, prices=prices).results.set_index("name")
    rate = r.loc["s", "tokens_per_second_per_chip"]  # B / (TPOT x chips)
    assert rate == pytest.approx(32 / (r.loc["s", "tpot"] * 2))
    assert r.loc["s", "tokens_per_joule"] == pytest.approx(rate / 700.0)
    assert r.loc["s", "usd_per_million_tokens"] == pytest.approx(3.0 / 3600 / rate * 1e6)
    assert r.loc["s", "energy"] == pytest.approx(700.0 * 2 * r.loc["s", "t_lower"])
    assert r.loc["s", "cost"] == pytest.approx(3.0 * 2 * r.loc["s", "t_lower"] / 3600)
    # its decode step, at the same B, makes tokens at the same rate: the same per-token figures
    assert r.loc["s/decode", "tokens_per_joule"] == pytest.approx(r.loc["s", "tokens_per_joule"])
