"""A chip's roofs as its rows use them, from every row's partial (Summary.roofs): ridge points
against the book, peaks per dtype family (shared, or the rows' own median), the links sent
over, the derated roofs and their rows, the rates each chip's rows use."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.catalogs.hardware import load_catalog
from pipeline.model.roofs import (
    MAX_DERATED_ROOFS,
    Peak,
    catalog_ridges,
    chip_roofs,
    derated_roofs,
    median,
    peak_families,
    ridge_point,
)
from tests.helpers import analyze_rows, chip


def catalog_chip(name: str) -> dict:
    return load_catalog().chips.loc[name].to_dict()


def grids_of(analysis, name: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A chip's rates and derated rows of the run's partial (summary.grids)."""
    g = analysis.summary.grids
    return g.values[g.values["hardware"] == name], g.derated[g.derated["hardware"] == name]


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
    roofs = book.summary.roofs["tpu-v5e"].hbm
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
    roofs = book.summary.roofs["tpu-v5e"].network
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
    roofs = chip_roofs(*grids_of(a, "h100"), record)
    assert [(p.family, p.peak, p.source) for p in roofs.hbm.peaks] == [
        ("fp32", 6.7e13, "rows"),
        ("bf16/fp16", 9.89e14, "catalog"),
        ("fp8", 1.979e15, "catalog"),
    ]
    assert roofs.peaks_of({"fp16", "fp8"}) == (
        Peak(("fp16",), 9.89e14, "catalog"),
        Peak(("fp8",), 1.979e15, "catalog"),
    )  # a sweep chart's: the peaks of the families its rows compute in


def test_a_chip_record_without_numbers_uses_the_rows_numbers(book):
    roofs = chip_roofs(*grids_of(book, "tpu-v5e"), {"name": "tpu-v5e", "hbm_bandwidth": None})
    assert roofs.hbm.slopes == (("hbm", 8.2e11),)
    assert roofs.hbm.peaks[0] == Peak(("bf16",), 1.97e14, "rows")
    assert roofs.network.slopes == (("ici", 4.5e10),)


@pytest.mark.parametrize("counts", [[1, 1, 1], [2, 1, 1], [3, 1, 4, 1], [1, 5, 2, 2]])
def test_the_median_of_counted_values_is_the_rows_median(counts):
    values = np.array([4.0, 1.0, np.nan, 2.5][: len(counts)])
    rows = np.repeat(values, counts)
    assert median(values, np.array(counts)) == np.nanmedian(rows)
    assert np.isnan(median(np.array([np.nan]), np.array([3])))


def test_derated_roofs_with_their_rows_most_used_first(mix):
    (roof,) = mix.summary.roofs["tpu-v5e"].hbm.derated
    assert (roof.compute, roof.rate, roof.rows) == (0.9, 0.85, 1)
    assert roof.bandwidth == pytest.approx(0.85 * 8.2e11)
    assert roof.peaks == pytest.approx((0.9 * 1.97e14,))
    assert roof.ridges == (roof.peaks[0] / roof.bandwidth,)
    rates, rows = [0.5, 0.6, 0.7, 0.8, 0.9, 0.6], [1, 1, 3, 1, 2, 1]  # two partials' 0.6
    many = pd.DataFrame({"compute": 1.0, "rate": rates, "rows": rows})
    roofs = derated_roofs(many, (Peak(("bf16",), 1e15, "catalog"),), 1e12)
    assert len(roofs) == MAX_DERATED_ROOFS
    assert [(r.rate, r.rows) for r in roofs] == [(0.7, 3), (0.6, 2), (0.9, 2), (0.5, 1)]
    assert derated_roofs(many.iloc[:0], (), 1e12) == ()


def test_rates_used_per_chip(book, mix):
    used = book.summary.rates_used  # summary.partial.rate_pairs, united (roofs.rates_of)
    assert used["tpu-v5e"] == ({"bf16", "int8"}, {"ici"})  # two_chip_* split D over ICI
    assert used["h100"] == ({"bf16"}, set())
    assert mix.summary.rates_used["h100"][1] == {"nvlink"}


def test_peak_families_of_compute_dtypes():
    dtypes = pd.Series(["bf16", "fp8_e4m3", None, "int8", "bf16"], dtype="category")
    assert list(peak_families(dtypes)) == ["bf16", "fp8", "", "int8", "bf16"]
