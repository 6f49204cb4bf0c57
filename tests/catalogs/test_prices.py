"""catalogs/prices.py: the user's price file (`--prices`, `prices=`): chips by the catalog's
spellings, every wrong cell refused with the file, line and column, a price without its source
or date a warning, and the starter file of `pipeline template --prices`."""

from __future__ import annotations

import pandas as pd
import pytest

import pipeline
from pipeline.catalogs.prices import PRICE_FILE_COLUMNS, load_prices, starter_prices
from pipeline.errors import InvalidPriceFile

HEADER = "hardware,usd_per_chip_hour,source,date\n"


def written(tmp_path, body: str, name: str = "prices.csv"):
    path = tmp_path / name
    path.write_text(HEADER + body, encoding="utf-8")
    return path


def test_a_good_file_prices_chips_by_their_catalog_names(tmp_path, catalog):
    path = written(tmp_path, "H100-SXM,2.99,a quote,2026-11-01\nmi300x,3.5,a quote,2026-11-01\n")
    prices = load_prices(path, catalog)
    assert dict(prices.usd_per_chip_hour) == {"h100": 2.99, "mi300x": 3.5}
    assert prices.warnings == ()
    assert prices.path == path.resolve() and len(prices.sha256) == 64


@pytest.mark.parametrize(
    ("cell", "line", "column", "says"),
    [
        ("h100,-2,q,2026-11-01", 2, "usd_per_chip_hour", "-2"),
        ("h100,0,q,2026-11-01", 2, "usd_per_chip_hour", "above 0"),
        ("h100,two dollars,q,2026-11-01", 2, "usd_per_chip_hour", "'two dollars'"),
        ("h100,nan,q,2026-11-01", 2, "usd_per_chip_hour", "'nan'"),
        ("h10O,2,q,2026-11-01", 2, "hardware", "did you mean"),
    ],
)
def test_a_wrong_cell_is_refused_with_the_file_line_and_column(
    tmp_path, catalog, cell, line, column, says
):
    path = written(tmp_path, cell + "\n")
    with pytest.raises(InvalidPriceFile) as info:
        load_prices(path, catalog)
    text = str(info.value)
    assert f"{path}:{line}: column {column}:" in text
    assert says in text


def test_a_chip_twice_is_refused_naming_both_lines(tmp_path, catalog):
    path = written(tmp_path, "h100,2,q,2026-11-01\na100,1,q,2026-11-01\nH100-SXM,3,q,2026-11-01\n")
    with pytest.raises(InvalidPriceFile, match=r"prices.csv:4: column hardware: .*line 2"):
        load_prices(path, catalog)


def test_every_problem_is_said_at_once(tmp_path, catalog):
    path = written(tmp_path, "h100,-1,q,d\nnochip,2,q,d\n")
    with pytest.raises(InvalidPriceFile) as info:
        load_prices(path, catalog)
    assert ":2: column usd_per_chip_hour" in str(info.value)
    assert ":3: column hardware" in str(info.value)


def test_a_missing_column_is_refused_naming_the_header_line(tmp_path, catalog):
    path = tmp_path / "p.csv"
    path.write_text("hardware,source,date\nh100,q,2026-11-01\n", encoding="utf-8")
    with pytest.raises(InvalidPriceFile, match=r"p.csv:1: .*usd_per_chip_hour"):
        load_prices(path, catalog)


def test_a_price_without_source_or_date_is_a_warning(tmp_path, catalog):
    path = written(tmp_path, "h100,2,,2026-11-01\na100,1,a quote,\n")
    prices = load_prices(path, catalog)
    assert len(prices.warnings) == 2
    assert f"{path}:2: column source:" in prices.warnings[0]
    assert f"{path}:3: column date:" in prices.warnings[1]
    assert dict(prices.usd_per_chip_hour) == {"h100": 2.0, "a100": 1.0}


def test_a_parquet_file_and_a_frame_read_alike(tmp_path, catalog):
    frame = pd.DataFrame({"hardware": ["h100"], "usd_per_chip_hour": [2.5],
                          "source": ["q"], "date": ["2026-11-01"]})  # fmt: skip
    frame.to_parquet(tmp_path / "p.parquet")
    assert dict(load_prices(tmp_path / "p.parquet", catalog).usd_per_chip_hour) == {"h100": 2.5}
    assert dict(load_prices(frame, catalog).usd_per_chip_hour) == {"h100": 2.5}
    bad = frame.assign(usd_per_chip_hour=[-1.0])
    bad.to_parquet(tmp_path / "bad.parquet")
    with pytest.raises(InvalidPriceFile, match=r"bad.parquet:2: column usd_per_chip_hour"):
        load_prices(tmp_path / "bad.parquet", catalog)


def test_another_suffix_is_refused(tmp_path, catalog):
    path = tmp_path / "p.txt"
    path.write_text(HEADER, encoding="utf-8")
    with pytest.raises(InvalidPriceFile, match="csv or .parquet"):
        load_prices(path, catalog)


def test_the_starter_rows_are_the_catalogs_chips_with_a_place_to_look_and_no_number(catalog):
    rows = starter_prices(catalog)
    assert list(rows.columns) == list(PRICE_FILE_COLUMNS)
    assert set(rows["hardware"]) == set(catalog.chips.index)
    assert (rows["usd_per_chip_hour"] == "").all() and (rows["date"] == "").all()
    assert rows["source"].str.contains("price").all()


def test_analyze_takes_a_path_and_refuses_a_bad_file(tmp_path):
    path = written(tmp_path, "h100,-2,q,2026-11-01\n")
    with pytest.raises(InvalidPriceFile):
        pipeline.analyze([{"name": "m", "op": "matmul", "B": 8, "D": 8, "F": 8,
                           "hardware": "h100"}], prices=path)  # fmt: skip


def test_the_price_file_error_is_pipelines_own():
    assert pipeline.InvalidPriceFile is InvalidPriceFile
    assert "InvalidPriceFile" in pipeline.__all__ and "price_template" in pipeline.__all__
    assert issubclass(pipeline.InvalidPriceFile, pipeline.PipelineError)


def test_price_template_returns_the_starter_and_writes_it_when_given_a_path(tmp_path, catalog):
    mine = pd.DataFrame({"name": ["mychip"], "peak_bf16": [1e15], "hbm_bandwidth": [1e12],
                         "hbm_capacity": [1e11]})  # fmt: skip
    rows = pipeline.price_template(hardware=mine)
    assert list(rows.columns) == list(PRICE_FILE_COLUMNS)
    assert "mychip" in set(rows["hardware"]) and "h100" in set(rows["hardware"])
    assert (rows["usd_per_chip_hour"] == "").all()
    path = tmp_path / "p.csv"
    again = pipeline.price_template(path)
    assert pd.read_csv(path, keep_default_na=False).astype(str).equals(again.astype(str))
    with pytest.raises(pipeline.OutputError, match="exists"):
        pipeline.price_template(path)
    filled = again.assign(usd_per_chip_hour=[2.0] + [""] * (len(again) - 1),
                          date=["2026-11-01"] + [""] * (len(again) - 1))  # fmt: skip
    assert len(load_prices(filled, catalog).usd_per_chip_hour) == 1
