"""results.csv / errors.csv format: golden file and round trip."""

from __future__ import annotations

import io
import os

import numpy as np
import pandas as pd

from pipeline.batch import errors_frame
from pipeline.csvout import format_csv
from pipeline.roofline import compute_roofline
from pipeline.scenarios import load_scenarios

GOLDEN = "results_small.csv"


def test_results_golden(catalog, data_dir):
    loaded = load_scenarios(data_dir / "small.csv", catalog)
    text = format_csv(compute_roofline(loaded.frame))
    golden = data_dir.parent / "golden" / GOLDEN
    if os.environ.get("UPDATE_GOLDEN"):
        golden.write_bytes(text)
    assert text == golden.read_bytes()


def test_errors_golden(catalog, data_dir):
    loaded = load_scenarios(data_dir / "small.csv", catalog)
    text = format_csv(errors_frame(loaded.problems)).decode()
    assert text == (
        "line,name,column,reason\n"
        '10,"bad","hardware","unknown hardware \'h10\' (did you mean \'h100\'?)"\n'
    )


def test_round_trip_full_precision():
    frame = pd.DataFrame(
        {
            "x": [1 / 3, 1e-300, 123456789.123456789, np.nan],
            "flag": pd.array([True, False, None, True], dtype="boolean"),
            "n": pd.array([1, None, 3, 2**60], dtype="Int64"),
            "text": ["a,b", 'say "hi"', "line\nbreak", ""],
        }
    )
    text = format_csv(frame).decode()
    assert text.splitlines()[1] == '0.3333333333333333,"True",1,"a,b"'
    back = pd.read_csv(io.StringIO(text), keep_default_na=False, na_values=[""])
    np.testing.assert_array_equal(back["x"].to_numpy()[:3], frame["x"].to_numpy()[:3])
    assert back["text"].tolist()[:3] == ["a,b", 'say "hi"', "line\nbreak"]
    assert text.splitlines()[-1] == f',"True",{2**60},'  # NaN empty, Int64 exact


def test_empty_frame_is_header_only():
    assert format_csv(pd.DataFrame(columns=["a", "b"])) == b"a,b\n"
