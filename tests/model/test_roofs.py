"""A chip's roofs as its rows use them: ridge points against the book, peaks per dtype family
(shared, or the rows' own), the links sent over, the derated roofs and their rows, the rates
each chip's rows use."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.catalogs.hardware import load_catalog
from pipeline.model.roofs import (
    MAX_DERATED_ROOFS,
    Peak,
    catalog_ridges,
    chip_peaks,
    derated_pairs,
    derated_roofs,
    hbm_roofs,
    links_used,
    network_roofs,
    peak_families,
    ridge_point,
)
from tests.helpers import analyze_rows, chip


def catalog_chip(name: str) -> dict:
    return load_catalog().chips.loc[name].to_dict()


def chip_rows(analysis, name: str, flops: bool = True) -> pd.DataFrame:
    rows = analysis.results[(analysis.results["hardware"] == name).to_numpy()]
    kind = analysis.facts.loc[rows.index, "kind"]
    return rows[(kind != "collective").to_numpy()] if flops else rows


def test_the_ridge_point_is_the_books_critical_intensity():
    assert ridge_point(1.97e14, 8.2e11) == pytest.approx(240, abs=0.5)  # TPU v5e bf16
    assert ridge_point(989.5e12, 3.35e12) == pytest.approx(295, abs=0.5)  # H100 bf16
    assert ridge_point(1.97e14, 4.5e10) == pytest.approx(4377, abs=1)  # v5e over ICI: D/2
    np.testing.assert_allclose(ridge_point(np.array([2.0, 4.0]), 2.0), [1.0, 2.0])


def test_catalog_ridges_of_the_shipped_chips():
    v5e, h100 = catalog_ridges(catalog_chip("tpu-v5e")), catalog_ridges(catalog_chip("h100"))
    assert set(v5e) == {"bf16", "int8"}
    assert v5e["bf16"] == pytest.approx(240.2, abs=0.1)
    assert h100["bf16"] == pytest.approx(295.2, abs=0.1)  # 9.89e14 / 3.35e12
    assert catalog_ridges({"peak_bf16": 1e15, "hbm_bandwidth": None}) == {"bf16": None}


def test_hbm_roofs_of_the_books_v5e_rows(book):
    roofs = hbm_roofs(chip_rows(book, "tpu-v5e"), chip(book, "tpu-v5e"))
    assert roofs.slopes == (("hbm", 8.2e11),)
    assert roofs.peaks == (
        Peak(("bf16",), 1.97e14, "catalog"),
        Peak(("int8",), 3.94e14, "catalog"),
    )
    ridges = {r.family: (r.intensity, r.peak, r.slope) for r in roofs.ridges}
    assert ridges["bf16"] == (1.97e14 / 8.2e11, 1.97e14, 0)
    assert ridges["int8"][0] == pytest.approx(480.5, abs=0.1)
    assert roofs.derated == ()


def test_network_roofs_meet_at_the_books_d_8755(book):
    roofs = network_roofs(chip_rows(book, "tpu-v5e").query("chips > 1"), chip(book, "tpu-v5e"))
    assert roofs.slopes == (("ici", 4.5e10),)
    (ridge,) = roofs.ridges
    assert ridge.intensity == pytest.approx(4377.8, abs=0.1)  # D/2 > 4377: D > 8755


def test_families_with_one_peak_share_it_and_a_missing_peak_is_the_rows():
    rows = [
        {"name": f"m_{d}", "op": "matmul", "B": 512, "D": 4096, "F": 4096,
         "hardware": "h100", "dtype": d}
        for d in ("bf16", "fp16", "fp8", "fp32")
    ]  # fmt: skip
    a = analyze_rows(rows)
    record = {**chip(a, "h100"), "peak_fp32": None}
    peaks = chip_peaks(a.results, record)
    assert [(p.family, p.peak, p.source) for p in peaks] == [
        ("fp32", 6.7e13, "rows"),
        ("bf16/fp16", 9.89e14, "catalog"),
        ("fp8", 1.979e15, "catalog"),
    ]


def test_derated_roofs_with_their_rows_most_used_first(mix):
    rows = chip_rows(mix, "tpu-v5e")
    (roof,) = hbm_roofs(rows, chip(mix, "tpu-v5e")).derated
    assert (roof.compute, roof.rate, roof.rows) == (0.9, 0.85, 1)
    assert roof.bandwidth == pytest.approx(0.85 * 8.2e11)
    assert roof.peaks == pytest.approx((0.9 * 1.97e14,))
    assert roof.ridges == (roof.peaks[0] / roof.bandwidth,)
    effs = [0.5, 0.6, 0.6, 0.7, 0.7, 0.7, 0.8, 0.9, 0.9, 1.0]
    many = pd.DataFrame({"compute_efficiency": 1.0, "hbm_efficiency": effs})
    roofs = derated_roofs(many, (Peak(("bf16",), 1e15, "catalog"),), 1e12, "hbm_efficiency")
    assert len(roofs) == MAX_DERATED_ROOFS
    assert [(r.rate, r.rows) for r in roofs[:2]] == [(0.7, 3), (0.6, 2)]
    assert derated_roofs(many.iloc[-1:], (), 1e12, "hbm_efficiency") == ()


def test_rates_used_per_chip(book, mix):
    used = book.summary.rates_used  # summary.partial.rate_pairs, united (roofs.rates_of)
    assert used["tpu-v5e"] == ({"bf16", "int8"}, {"ici"})  # two_chip_* split D over ICI
    assert used["h100"] == ({"bf16"}, set())
    assert mix.summary.rates_used["h100"][1] == {"nvlink"}
    assert links_used(mix.results) == ["ici", "nvlink"]
    assert links_used(book.results[book.results["chips"] == 1]) == []


def test_peak_families_of_compute_dtypes():
    dtypes = pd.Series(["bf16", "fp8_e4m3", None, "int8", "bf16"], dtype="category")
    assert list(peak_families(dtypes)) == ["bf16", "fp8", "", "int8", "bf16"]


def test_derated_pairs_count_rows_below_a_nominal_rate_a_missing_efficiency_nominal():
    compute = np.array([0.9, 0.9, np.nan, 1.0, 0.5])
    rate = np.array([0.85, 0.85, 0.7, np.nan, np.nan])
    pairs = derated_pairs(compute, rate)
    assert dict(pairs.items()) == {(0.9, 0.85): 2, (1.0, 0.7): 1, (0.5, 1.0): 1}
    assert pairs.index[0] == (0.9, 0.85)  # the most used first
