"""`pipeline run --prices` (issue 44): the cost columns in results.csv, a wrong price file an
error before anything is written, and `--fail-on cost` failing a night whose rows got dearer."""

from __future__ import annotations

import pandas as pd

from tests.helpers import FAST, HEAD, invoke

PRICES = "hardware,usd_per_chip_hour,source,date\n"


def _files(tmp_path, price: float):
    scenarios = tmp_path / "s.csv"
    scenarios.write_text(f"{HEAD}\nm,matmul,4096,8192,8192,h100\n", encoding="utf-8")
    prices = tmp_path / f"p{price:g}.csv"
    prices.write_text(f"{PRICES}h100,{price},a quote,2026-11-01\n", encoding="utf-8")
    return scenarios, prices


def test_run_with_prices_writes_the_cost(tmp_path):
    scenarios, prices = _files(tmp_path, 2.0)
    got = invoke("run", scenarios, "--prices", prices, "-o", tmp_path / "out", *FAST)
    assert got.exit_code == 0, got.output
    r = pd.read_csv(tmp_path / "out" / "s" / "results.csv")
    assert r.loc[0, "usd_per_chip_hour"] == 2.0
    assert r.loc[0, "cost"] == r.loc[0, "t_lower"] * 2.0 / 3600


def test_a_wrong_price_file_is_an_error_before_anything_is_written(tmp_path):
    scenarios, _ = _files(tmp_path, 2.0)
    bad = tmp_path / "bad.csv"
    bad.write_text(f"{PRICES}h100,-3,q,2026-11-01\n", encoding="utf-8")
    got = invoke("run", scenarios, "--prices", bad, "-o", tmp_path / "out", *FAST)
    assert got.exit_code == 1
    assert f"{bad}:2: column usd_per_chip_hour:" in got.stderr
    assert not (tmp_path / "out").exists()


def test_fail_on_cost_fails_a_dearer_night_only(tmp_path):
    scenarios, cheap = _files(tmp_path, 2.0)
    _, dear = _files(tmp_path, 3.0)
    first = invoke("run", scenarios, "--prices", cheap, "-o", tmp_path / "n1", *FAST)
    assert first.exit_code == 0, first.output
    rise = invoke("run", scenarios, "--prices", dear, "-o", tmp_path / "n2", *FAST,
                  "--baseline", tmp_path / "n1", "--fail-on", "cost")  # fmt: skip
    assert rise.exit_code == 1
    assert "cost 1" in rise.stderr and "--fail-on cost" in rise.stderr
    cut = invoke("run", scenarios, "--prices", cheap, "-o", tmp_path / "n3", *FAST,
                 "--baseline", tmp_path / "n2", "--fail-on", "cost")  # fmt: skip
    assert cut.exit_code == 0, cut.stderr


def test_prices_on_the_dask_engine_write_the_local_cost(tmp_path, cluster):
    scenarios, prices = _files(tmp_path, 2.0)
    local = invoke("run", scenarios, "--prices", prices, "-o", tmp_path / "l", *FAST)
    got = invoke("run", scenarios, "--prices", prices, "--engine", "dask", "--scheduler",
                 cluster.scheduler_address, "-o", tmp_path / "d", *FAST)  # fmt: skip
    assert got.exit_code == local.exit_code == 0, got.output
    rows = pd.read_parquet(tmp_path / "d" / "s" / "results")
    want = pd.read_parquet(tmp_path / "l" / "s" / "results.parquet")
    assert rows.loc[0, "usd_per_chip_hour"] == 2.0
    assert rows.loc[0, "cost"] == want.loc[0, "cost"] == rows.loc[0, "t_lower"] * 2.0 / 3600
    assert '"prices"' in (tmp_path / "d" / "s" / "manifest.json").read_text(encoding="utf-8")
