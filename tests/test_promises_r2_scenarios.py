"""Issue 16, round two: the scenario reader's and the CSV writers' findings (R8, R10, R17,
R19, R20), one test per finding."""

from __future__ import annotations

import difflib

import numpy as np
import pandas as pd

import pipeline
from pipeline.errors import QUOTED_LIMIT
from pipeline.run.tables import write_csv, write_parquet
from pipeline.scenarios.coded import Col, combine
from tests.helpers import HEAD, write_scenarios


def test_r08_rejected_sweep_does_not_count_toward_max_rows(tmp_path):
    text = (
        f"{HEAD}\n"
        "a,matmul,8,64,64,v5e\n"
        "big,matmul,1..100,64,64,v5e\n"  # 100 rows: past the limit of 10, rejected
        "c,matmul,8,64,64,v5e\n"
        "d,matmul,1..5,64,64,v5e\n"  # 1 + 1 + 5 = 7 rows: fits once `big` is out
        "e,matmul,1..4,64,64,v5e\n"  # 7 + 4 = 11: past the limit
        "f,matmul,8|16,64,64,v5e\n"  # 7 + 2 = 9: fits
        "g,matmul,8,64,64,v5e\n"  # 10: fits
        "h,matmul,8,64,64,v5e\n"  # 11: past the limit
    )
    a = pipeline.analyze(write_scenarios(tmp_path, text), max_rows=10)
    assert sorted(set(a.results["series"])) == ["a", "c", "d", "f", "g"]
    assert len(a.results) == 10
    rejected = a.problems.set_index("name")
    assert list(rejected.index) == ["big", "e", "h"]
    assert rejected.loc["big", "reason"] == (
        "expands to 100 rows, which takes the file past its limit of 10 rows (--max-rows)"
    )
    assert rejected.loc["h", "column"] == "name"
    assert "past its limit of 10 rows" in rejected.loc["h", "reason"]


FORMULAS = ["=cmd|' /C calc'!A0", "+1+1", "-2+3", "@SUM(A1)", "\t=x", "\r=x"]


def test_r10_formula_cells_neutralized_in_csv_exact_in_parquet(tmp_path):
    rows = pd.DataFrame(
        {
            "name": ['=HYPERLINK("http://x")', "\t=x", "plain", "n4", "n5", "n6"],
            "op": "matmul",
            "B": 8,
            "D": 64,
            "F": 64,
            "hardware": "v5e",
            "notes": FORMULAS,
            "team": [*FORMULAS[:3], "-5", "-1.5e3", "'quoted"],
        }
    )
    bad = pd.DataFrame({"name": ["@bad"], "op": "matmul", "B": 8, "D": 64, "F": 64})
    bad["hardware"] = "h10"
    a = pipeline.analyze(pd.concat([rows, bad], ignore_index=True))
    results = a.results
    # the analysis and Parquet keep every value exactly (the reader trims names)
    assert results["name"].tolist() == [*rows["name"].str.strip()]
    assert results["notes"].tolist() == FORMULAS
    write_parquet(results, tmp_path / "r.parquet")
    back = pd.read_parquet(tmp_path / "r.parquet")
    assert back["name"].tolist() == results["name"].tolist()
    assert back["team"].tolist() == results["team"].tolist()

    write_csv(results, tmp_path / "results.csv")
    csv = pd.read_csv(tmp_path / "results.csv", dtype=str, keep_default_na=False)
    assert csv["name"].tolist() == ['\'=HYPERLINK("http://x")', "'=x", "plain", "n4", "n5", "n6"]
    assert csv["notes"].tolist() == [f"'{f}" for f in FORMULAS]
    # a number in a text column is a number to Excel, not a formula: left as it is; a leading
    # ' gets one more, so the quote is never ambiguous (issue 27, P10)
    assert csv["team"].tolist() == [*(f"'{f}" for f in FORMULAS[:3]), "-5", "-1.5e3", "''quoted"]
    assert [float(v) for v in csv["t_lower"]] == results["t_lower"].tolist()  # untouched

    errors = pd.read_csv(write_csv(a.problems, tmp_path / "errors.csv"), dtype=str)
    assert errors["name"].tolist() == ["'@bad"]

    # categoricals (the dictionary is neutralized) and a negative number column
    frame = pd.DataFrame(
        {"c": pd.Categorical(["=a", "b", "=a"]), "x": [-1.0, 2.0, -3.5], "i": [-1, 2, 3]}
    )
    assert write_csv(frame, tmp_path / "c.csv").read_text().splitlines()[1:] == [
        '"\'=a",-1,-1',
        '"b",2,2',
        '"\'=a",-3.5,3',
    ]


def test_r17_did_you_mean_runs_once_per_distinct_value(tmp_path, monkeypatch):
    n = 10_000
    rows = pd.DataFrame(
        {
            "name": [f"r{i}" for i in range(n)],
            "op": "matmull",
            "B": 8,
            "D": 64,
            "F": 64,
            "hardware": np.where(np.arange(n) % 2, "h10", "h1000"),
            "dtype": "bf61",
            "chips": 2,
            "link": "nvlnk",
        }
    )
    calls: list[str] = []
    real = difflib.get_close_matches

    def counting(word, *args, **kwargs):
        calls.append(word)
        return real(word, *args, **kwargs)

    monkeypatch.setattr(difflib, "get_close_matches", counting)
    a = pipeline.analyze(rows)
    assert sorted(calls) == sorted(["matmull", "h10", "h1000", "bf61", "nvlnk"])
    reasons = a.problems.drop_duplicates("reason").set_index("column")["reason"]
    assert reasons["op"] == "unknown op 'matmull' (did you mean 'matmul'?)"
    assert reasons["dtype"] == "unknown dtype 'bf61' (did you mean 'bf16'?)"
    assert reasons["link"] == "unknown link 'nvlnk' (did you mean 'nvlink'?)"
    assert len(a.problems) == n * 4


def test_r19_combinations_past_int64_do_not_overflow():
    big = 2_100_000  # three columns of this many values: 2.1e6^3 > 2^63 combinations
    cols = [
        Col(np.array([0, big - 1, 5, big - 1], dtype=np.intp), np.arange(big) * 10 + k)
        for k in range(3)
    ]
    cols[2].codes = np.array([big - 1, 7, 5, big - 1], dtype=np.intp)
    out = combine(lambda a, b, c: (a, b, c), *cols)
    last = 10 * (big - 1)
    assert list(out.values()) == [
        (0, 1, last + 2),
        (last, last + 1, 72),
        (50, 51, 52),
        (last, last + 1, last + 2),
    ]
    assert len(set(out.codes.tolist())) == 4  # four different combinations


def test_r20_long_op_and_einsum_values_are_cut_in_messages(tmp_path):
    long_op = "x" * 5000
    long_einsum = "A" * 5000 + ",B->A"  # repeats a dim: an einsum the tool refuses
    rows = pd.DataFrame(
        {
            "name": ["op", "einsum", "bad_item"],
            "op": [long_op, long_einsum, "matmul"],
            "B": [8, 8, "1|" + "9" * 5000],
            "D": 64,
            "F": 64,
            "hardware": "v5e",
        }
    )
    a = pipeline.analyze(rows)
    assert len(a.problem_list) == 3
    for problem in a.problem_list:
        assert len(str(problem)) < 400, str(problem)
        assert "x" * QUOTED_LIMIT not in str(problem) and "A" * QUOTED_LIMIT not in str(problem)
    reasons = a.problems.set_index("name")["reason"]
    assert reasons["op"].startswith("unknown op 'xxx")
    assert "(5,000 characters)" in reasons["op"]
    assert reasons["einsum"].startswith("einsum 'AAA")
    assert "(5,005 characters)" in reasons["einsum"]


def test_non_ascii_one_letter_column_is_an_extra_column_not_a_dim(tmp_path):
    """Found by the API fuzz: 'À' (or 'à', upper-cased by the header) was taken for a dim by
    the model while the reader passed it through as an extra column: a ValueError."""
    path = tmp_path / "agrave.csv"
    path.write_text("name,op,B,D,F,hardware,À\na,matmul,1,128,128,v5e,\n", encoding="utf-8")
    analysis = pipeline.analyze(path)
    assert analysis.summary.scenarios == 1
    assert "À" in analysis.results.columns
    frame = pd.DataFrame(
        [["a", "matmul", 1, 128, 128, "v5e", None]],
        columns=["name", "op", "B", "D", "F", "hardware", "à"],
    )
    assert pipeline.analyze(frame).summary.scenarios == 1
