"""scenarios/parquet.py: a Parquet scenario or measured file reads like the same CSV."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pipeline
from pipeline.errors import ScenarioFileError
from pipeline.scenarios import load_scenarios
from tests.helpers import write_scenarios

CSV = """name,op,B,D,F,hardware,dtype,measured_ms,notes
a,matmul,4096,4096,4096,h100,bf16,0.25,first
b,matmul,8,1024,2048,h100,fp8,0.0125,
c,matmul,1|2|4,64,64,h100,bf16,,swept
"""


def write_parquet(path, columns: dict) -> None:
    pq.write_table(pa.table(columns), path)


def test_parquet_reads_like_its_csv(tmp_path, catalog):
    path = tmp_path / "s.parquet"
    write_parquet(path, {
        "name": pa.array(["a", "b", "c"]).dictionary_encode(),
        "op": pa.array(["matmul"] * 3, pa.large_string()),
        "B": pa.array(["4096", "8", "1|2|4"]),
        "D": pa.array([4096, 1024, 64], pa.int64()),
        "F": pa.array([4096, 2048, 64], pa.int32()),
        "hardware": pa.array(["h100"] * 3).dictionary_encode(),
        "dtype": pa.array(["bf16", "fp8", "bf16"]),
        "measured_ms": pa.array([0.25, 0.0125, None], pa.float64()),
        "notes": pa.array(["first", None, "swept"]),
    })  # fmt: skip
    got = load_scenarios(path, catalog)
    want = load_scenarios(write_scenarios(tmp_path, CSV), catalog)
    assert not got.problems and not want.problems
    assert got.frame.astype(str).equals(want.frame.astype(str))
    assert got.frame["measured_seconds"].iat[0] == pytest.approx(2.5e-4)


def test_a_parquet_row_is_numbered_as_its_csv_line(tmp_path, catalog):
    """Row k of the table (from 0) is line k + 2, as the table written as CSV would show it."""
    path = tmp_path / "s.parquet"
    write_parquet(path, {"name": ["a", "b"], "op": ["matmul", "matmul"], "B": [1, -4],
                         "D": [2, 2], "F": [3, 3], "hardware": ["h100", "h100"]})  # fmt: skip
    (problem,) = load_scenarios(path, catalog).problems
    assert str(problem).startswith(f"{path}:3: column B: ")


def test_a_parquet_column_that_is_not_text_or_a_number_is_refused(tmp_path, catalog):
    path = tmp_path / "s.parquet"
    write_parquet(path, {"name": ["a"], "op": ["matmul"], "B": [[1, 2]], "D": [2], "F": [3],
                         "hardware": ["h100"]})  # fmt: skip
    with pytest.raises(ScenarioFileError, match=r"s\.parquet: column 'B' holds list<"):
        load_scenarios(path, catalog)


def test_an_empty_parquet_is_refused_as_a_csv_is(tmp_path, catalog):
    path = tmp_path / "s.parquet"
    write_parquet(path, {"name": pa.array([], pa.string()), "op": pa.array([], pa.string())})
    with pytest.raises(ScenarioFileError, match="a header but no scenario rows"):
        load_scenarios(path, catalog)


def test_calibrate_reads_a_measured_parquet(tmp_path):
    """A .parquet of scenario rows is a measured file (a run's results.parquet stays one)."""
    rows = 40
    path = tmp_path / "m.parquet"
    write_parquet(path, {
        "name": [f"g{i}" for i in range(rows)], "op": ["matmul"] * rows,
        "B": [2 ** (i % 8 + 4) for i in range(rows)], "D": [4096] * rows,
        "F": [1024 * (i % 5 + 1) for i in range(rows)], "hardware": ["h100"] * rows,
        "measured_us": [50.0 + 3 * i for i in range(rows)],
    })  # fmt: skip
    done = pipeline.calibrate(path)
    assert len(done.rows) == rows


def test_decimal_and_date_columns_read_as_the_text_they_print_as(tmp_path, catalog):
    """Found by a review: a decimal `measured_us` or an extra timestamp column refused the
    whole file, where the same columns in a CSV are a number and text."""
    from datetime import datetime
    from decimal import Decimal

    path = tmp_path / "s.parquet"
    write_parquet(path, {"name": ["a"], "op": ["matmul"], "B": [4096], "D": [4096],
                         "F": [4096], "hardware": ["h100"],
                         "measured_us": pa.array([Decimal("250.5")], pa.decimal128(6, 1)),
                         "user_when": pa.array([datetime(2026, 11, 28, 7, 0)],
                                               pa.timestamp("s"))})  # fmt: skip
    loaded = load_scenarios(path, catalog)
    assert not loaded.problems
    assert loaded.frame["measured_seconds"].iat[0] == pytest.approx(250.5e-6)
    assert str(loaded.frame["user_when"].iat[0]).startswith("2026-11-28 07:00:00")
