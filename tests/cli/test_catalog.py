"""`pipeline template --prices`: the starter price file, every catalog chip and no price."""

from __future__ import annotations

import pandas as pd

from tests.helpers import invoke


def test_template_prices_writes_a_starter_that_names_where_to_look(tmp_path, monkeypatch, catalog):
    monkeypatch.chdir(tmp_path)
    got = invoke("template", "--prices")
    assert got.exit_code == 0, got.output
    rows = pd.read_csv(tmp_path / "prices.csv", keep_default_na=False)
    assert list(rows.columns) == ["hardware", "usd_per_chip_hour", "source", "date"]
    assert sorted(rows["hardware"]) == sorted(catalog.chips.index)
    assert (rows["usd_per_chip_hour"] == "").all()
    assert rows["source"].str.contains("on-demand price page").all()
    again = invoke("template", "--prices")
    assert again.exit_code == 1 and "already exists" in again.stderr
    named = invoke("template", "--prices", "mine.xlsx")
    assert named.exit_code == 1 and "*.csv" in named.stderr
