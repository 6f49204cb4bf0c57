"""The run's statistics, computed once: bound counts, not fitting, overrides, critical
batches per series, sweep series and findings."""

from __future__ import annotations

import pipeline


def test_book_counts(book):
    s = book.summary
    assert (s.scenarios, s.source_rows, s.rejected_rows, s.problems) == (1035, 13, 0, 0)
    assert s.bounds == {"compute": 669, "memory": 365, "network": 1} and s.not_fitting == 0
    assert s.per_hardware.loc["tpu-v5e"].to_dict() == {
        "compute": 666, "memory": 365, "network": 1, "not_fitting": 0, "total": 1032,
    }  # fmt: skip
    assert list(s.per_hardware.index) == ["h100", "tpu-v5e", "tpu-v6e"]
    assert s.per_op["total"].to_dict() == {
        "batched_matmul": 1, "custom": 2, "dot": 1, "matmul": 1031,
    }  # fmt: skip
    assert s.overrides == {"h100": 0, "tpu-v5e": 1, "tpu-v6e": 0}  # Q1's 8.1e11 B/s


def test_critical_batches_per_series(book):
    batches = book.summary.critical_batches
    assert batches.loc["q3_D4096", ["low", "high"]].tolist() == [137, 137]
    assert batches.loc["q3_D1024", "low"] == 227
    assert batches.loc["q2_int8_weights_bf16", "dtypes"] == "bf16 × int8 → bf16"
    assert "dot_product" not in batches.index  # no batch dim makes a dot product compute-bound


def test_sweep_series_and_findings(book):
    series = book.summary.series
    assert list(series.index) == ["q3_D4096", "q3_D1024"]
    assert series.loc["q3_D4096", "rows"] == 512
    assert series.loc["q3_D4096", "compute"] == 376
    found = book.summary.findings
    assert found["comm_total"] == 366 and found["nofit_total"] == 0
    assert found["slowest"]["name"].iloc[0] == "q2_int8_weights_bf16"  # 11.2 ms
    assert found["slowest"]["series"].is_unique  # a sweep listed once


def test_summary_of_rejected_rows(catalog):
    rows = [{"name": "a", "op": "matmul", "B": 1, "D": 2, "F": 3, "hardware": "v5e"},
            {"name": "b", "op": "matmul", "B": "x", "D": 2, "F": "y", "hardware": "v5e"}]  # fmt: skip
    s = pipeline.analyze(rows, hardware=catalog).summary
    assert (s.scenarios, s.source_rows, s.rejected_rows, s.problems) == (1, 2, 1, 2)


def test_each_chip_carries_its_peaks_ridge_points(book):
    """Summary.chips: each catalog peak's ridge point on the chip's HBM slope (book: v5e bf16
    1.97e14 / 8.2e11 = 240), NaN for a peak the chip has not."""
    chips = book.summary.chips
    assert round(chips.at["tpu-v5e", "ridge_bf16"]) == 240
    assert round(chips.at["h100", "ridge_bf16"]) == 295
    assert chips["ridge_fp4"].isna().all()
