"""Chips side by side: fields as rows, a column per chip, SI units, a ridge point per dtype any
chosen chip has (peak / HBM bandwidth), the default link's figures; unknown names refused
together with a did-you-mean."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import pipeline
from pipeline.catalogs.chips import chip_table, overridden_fields, peak_dtype, resolve_chips
from pipeline.catalogs.hardware import load_catalog
from tests.helpers import CHIP_TRIO


@pytest.fixture(scope="module")
def trio():
    return pipeline.chips(["alpha", "beta", "G3"], hardware=CHIP_TRIO)


def test_fields_are_rows_and_chips_columns_in_the_order_given(trio):
    assert list(trio.columns) == ["alpha", "beta", "gamma"]  # an alias gives the chip's name
    assert (trio.index.name, trio.columns.name) == ("field", "chip")
    assert list(trio.index) == [
        "vendor", "architecture", "hbm_capacity", "hbm_bandwidth",
        "peak_fp32", "peak_bf16", "peak_fp8",  # only the dtypes some chosen chip has
        "ridge_fp32", "ridge_bf16", "ridge_fp8",
        "default_link", "link_bandwidth", "link_topology", "link_latency", "link_reach", "as_of",
    ]  # fmt: skip


def test_numbers_are_si_and_ridges_are_peak_over_hbm_bandwidth(trio):
    assert trio.loc["ridge_bf16"].tolist() == [500.0, 500.0, 500.0]
    assert trio.at["ridge_fp8", "alpha"] == 1000.0
    assert trio.at["ridge_fp32", "beta"] == 50.0
    assert trio.at["peak_fp8", "alpha"] == 2.0e15 and trio.at["hbm_capacity", "beta"] == 3.2e10
    assert trio["alpha"]["default_link":"link_reach"].tolist() == [
        "nvlink",
        4.5e11,
        "switch",
        6e-7,
        8.0,
    ]
    assert trio["beta"]["default_link":"link_reach"].tolist() == ["ici", 1e11, "ring", 1e-6, 256.0]


def test_a_field_a_chip_lacks_is_missing(trio):
    assert math.isnan(trio.at["peak_fp8", "beta"]) and math.isnan(trio.at["ridge_fp8", "gamma"])
    gamma = trio["gamma"]
    assert gamma[["vendor", "default_link", "link_bandwidth", "link_reach"]].isna().all()


def test_board_power_is_a_row_when_a_chosen_chip_has_one(trio):
    assert "tdp" not in trio.index  # none of the three has one
    table = pipeline.chips(["h100", "tpu-v5e"])
    assert list(table.index[2:5]) == ["hbm_capacity", "hbm_bandwidth", "tdp"]
    assert table.at["tdp", "h100"] == 700.0 and math.isnan(table.at["tdp", "tpu-v5e"])


def test_shipped_chips_ridges_from_the_catalog():
    table = pipeline.chips(["h100", "h200", "tpu-v6e"])
    chips = pipeline.catalog().loc[["h100", "h200", "tpu-v6e"]]
    expected = chips["peak_bf16"] / chips["hbm_bandwidth"]
    np.testing.assert_allclose(table.loc["ridge_bf16"].astype(float), expected, rtol=1e-12)
    assert table.at["ridge_bf16", "h100"] == pytest.approx(9.89e14 / 3.35e12)  # the book's Q5
    assert math.isnan(table.at["ridge_fp8", "tpu-v6e"])  # no fp8 units
    for chip in table.columns:
        link = chips.at[chip, "default_link"]
        assert table.at["link_bandwidth", chip] == chips.at[chip, f"{link}_bandwidth"]


def test_a_chip_named_twice_is_one_column():
    assert list(pipeline.chips(["h100", "H100", "tpu-v6e", "v6e"]).columns) == ["h100", "tpu-v6e"]
    assert list(pipeline.chips("h100").columns) == ["h100"]  # a str is one name


def test_unknown_names_are_all_said_with_a_did_you_mean():
    with pytest.raises(pipeline.UnknownHardware) as found:
        pipeline.chips(["h100", "h10", "nonesuch"])
    assert str(found.value) == (
        "unknown hardware 'h10' (did you mean 'h100'?); "
        "unknown hardware 'nonesuch'; see `pipeline hardware` for the list"
    )


@pytest.mark.parametrize(
    ("names", "error", "message"),
    [
        ([], ValueError, "give at least one chip name"),
        ([1], TypeError, r"a chip name is a str, not 1 \(int\)"),
        (5, TypeError, r"names must be chip names"),
    ],
)
def test_names_that_are_not_chip_names_are_refused(names, error, message):
    with pytest.raises(error, match=message):
        resolve_chips(load_catalog(), names)


def test_the_table_never_changes_the_catalog():
    catalog = load_catalog()
    before = catalog.chips.copy()
    chip_table(catalog, ["h100", "tpu-v6e"])
    pd.testing.assert_frame_equal(catalog.chips, before)


@pytest.mark.parametrize(
    ("given", "family"), [("bf16", "bf16"), ("BFloat16", "bf16"), ("fp8_e4m3", "fp8")]
)
def test_peak_dtype_maps_a_spelling_to_its_peak(given, family):
    assert peak_dtype(given) == family


def test_peak_dtype_refuses_an_unknown_dtype():
    with pytest.raises(ValueError, match=r"unknown dtype 'fp9' \(did you mean 'fp8'\?\)"):
        peak_dtype("fp9")
    with pytest.raises(ValueError, match="use one of fp32, tf32, bf16"):
        peak_dtype("qqqqqq")
    with pytest.raises(TypeError):
        peak_dtype(8)


def test_overridden_fields_are_those_a_users_file_changed():
    mine = pd.DataFrame([dict(name="h100", hbm_bandwidth=3.0e12, peak_bf16=9.89e14)])
    assert overridden_fields(load_catalog([mine]), "h100") == {"hbm_bandwidth"}  # bf16: same
    assert overridden_fields(load_catalog(), "h100") == frozenset()
    new = pd.DataFrame([dict(name="mine", peak_bf16=1e14, hbm_bandwidth=1e12)])
    assert overridden_fields(load_catalog([new]), "mine") == frozenset()  # not shipped
