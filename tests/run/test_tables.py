"""results.csv / errors.csv format: golden file and round trip."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from pipeline.run.tables import write_csv, write_parquet
from tests.helpers import GOLDEN, analyze_file


def _csv(frame: pd.DataFrame, tmp_path) -> bytes:
    return write_csv(frame, tmp_path / "out.csv").read_bytes()


def test_results_golden(data_dir, update_golden, tmp_path):
    text = _csv(analyze_file(data_dir / "small.csv").results, tmp_path)
    golden = GOLDEN / "results_small.csv"
    if update_golden:
        golden.write_bytes(text)
    assert text == golden.read_bytes()


def test_errors_golden(data_dir, tmp_path):
    text = _csv(analyze_file(data_dir / "small.csv").problems, tmp_path).decode()
    assert text == (
        "line,name,column,reason\n"
        '10,"bad","hardware","unknown hardware \'h10\' (did you mean \'h100\'?)"\n'
    )


def test_round_trip_full_precision(tmp_path):
    frame = pd.DataFrame(
        {
            "x": [1 / 3, 1e-300, 123456789.123456789, np.nan],
            "flag": pd.array([True, False, None, True], dtype="boolean"),
            "n": pd.array([1, None, 3, 2**60], dtype="Int64"),
            "text": ["a,b", 'say "hi"', "line\nbreak", ""],
        }
    )
    text = _csv(frame, tmp_path).decode()
    assert text.splitlines()[1] == '0.3333333333333333,"True",1,"a,b"'
    back = pd.read_csv(io.StringIO(text), keep_default_na=False, na_values=[""])
    np.testing.assert_array_equal(back["x"].to_numpy()[:3], frame["x"].to_numpy()[:3])
    assert back["text"].tolist()[:3] == ["a,b", 'say "hi"', "line\nbreak"]
    assert text.splitlines()[-1] == f',"True",{2**60},'  # NaN empty, Int64 exact


def test_empty_frame_is_header_only(tmp_path):
    assert _csv(pd.DataFrame(columns=["a", "b"]), tmp_path) == b"a,b\n"


def test_parquet_keeps_types(book, tmp_path):
    path = write_parquet(book.results, tmp_path / "r.parquet")
    schema = pq.read_schema(path)
    assert schema.names == list(book.results.columns)
    assert str(schema.field("critical_batch").type) == "int64"
    assert str(schema.field("fits").type) == "bool"
    assert str(schema.field("bound").type) == "string"
    back = pd.read_parquet(path)
    assert back["t_lower"].tolist() == book.results["t_lower"].tolist()
