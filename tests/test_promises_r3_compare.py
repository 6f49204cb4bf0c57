"""What the tool promises, round three (issue 27): the findings about comparing runs (P1, P9,
P10, P13/P14, P15, P36), one test each, named for it."""

from __future__ import annotations

import warnings

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pipeline
from pipeline.errors import InvalidResults, OutputError
from pipeline.run.baseline import read_results_file
from tests.helpers import FAST_WRITE, invoke, tree, write_scenarios

ROWS = [
    {"name": "a", "op": "matmul", "B": 8, "D": 8192, "F": 8192, "hardware": "v5e"},
    {"name": "b", "op": "matmul", "B": 4096, "D": 8192, "F": 8192, "hardware": "h100"},
]


@pytest.fixture
def runs(tmp_path):
    """Two output folders of `pipeline run` (results, workbook and report), A/s and B/s."""
    for folder in ("A", "B"):
        pipeline.analyze(ROWS).write(tmp_path / folder / "s", plots=False)
    return tmp_path / "A" / "s", tmp_path / "B" / "s"


def _results(folder) -> pd.DataFrame:
    return pd.read_csv(folder / "results.csv", keep_default_na=False, na_values=[""])


def _error_line(result) -> str:
    lines = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    return lines[0]


# ---------------------------------------------------------------- P1: compared runs stay


def test_p01_changes_are_never_written_over_around_or_into_a_compared_run(runs):
    old, new = runs
    before = {folder: tree(folder.parent) for folder in runs}
    outputs = [
        (old, "is the baseline run"),
        (new, "is the new run"),
        (old.parent, "holds the baseline run"),
        (old / "changes", "is inside the baseline run"),
        (new.parent.parent, "holds the baseline run"),
    ]
    for out, says in outputs:
        result = invoke("compare", old, new, "-o", out)
        assert result.exit_code == 2, result.output
        assert _error_line(result).startswith(f"Error: {out} {says}"), result.output
        # a run given as its results file: its output folder is the compared run too
        result = invoke("compare", old / "results.csv", new / "results.parquet", "-o", out)
        assert result.exit_code == 2 and "Error:" in result.output, result.output
    comparison = pipeline.compare(old, new)
    for out, says in outputs:
        with pytest.raises(OutputError, match=says):
            comparison.write(out)
    assert {folder: tree(folder.parent) for folder in runs} == before  # byte for byte
    assert sorted(p.name for p in old.parent.iterdir()) == ["s"]  # no lock, no temp left
    comparison.write(old.parent.parent / "changes")  # beside the runs: written
    assert (old.parent.parent / "changes" / "changes.csv").is_file()


# ---------------------------------------------------------------- P9: no silent "no changes"


def test_p09_a_compared_column_missing_on_one_side_is_an_error(runs, tmp_path):
    old, new = runs
    for column in ("bound", "fits", "critical_batch", "t_lower"):
        cut = tmp_path / f"no_{column}.csv"
        _results(old).drop(columns=[column]).to_csv(cut, index=False)
        for args in ((cut, new), (new, cut)):
            result = invoke("compare", *args, "-o", tmp_path / "c", "--fail-on", column)
            assert result.exit_code == 2, result.output
            role = "baseline" if args[0] == cut else "new"
            assert _error_line(result).startswith(
                f"Error: the {role} {cut} has no '{column}' column; a comparison reads name, "
                "bound, fits, critical_batch and t_lower"
            )
    frame = pd.read_parquet(old / "results.parquet")
    with pytest.raises(InvalidResults, match="the new results have no 'bound' column"):
        pipeline.compare(frame, frame.drop(columns=["bound"]))


# ---------------------------------------------------------------- P10: the quote is lossless


def test_p10_a_leading_quote_is_quoted_too_so_names_stay_distinct(tmp_path):
    names = ["=x", "'=x", "''=x", "'abc", "'", "-5", "'-5", "plain"]
    rows = [{**ROWS[0], "name": n} for n in names]
    pipeline.analyze(rows).write(tmp_path / "run", **FAST_WRITE)
    text = (tmp_path / "run" / "results.csv").read_text(encoding="utf-8").splitlines()
    cells = [line.split(",")[0] for line in text[1:]]
    assert cells == ['"\'=x"', "\"''=x\"", "\"'''=x\"", "\"''abc\"", "\"''\"", '"-5"',
                     "\"''-5\"", '"plain"']  # fmt: skip
    csv_run, parquet_run = tmp_path / "run/results.csv", tmp_path / "run/results.parquet"
    comparison = pipeline.compare(csv_run, parquet_run)
    assert comparison.summary() == f"{len(names)} compared: no changes"
    assert pipeline.compare(csv_run, pipeline.analyze(rows[1:])).table["name"].tolist() == ["=x"]
    # a results.csv of an earlier version (formula starts quoted, a leading ' not) reads as
    # it was meant: '=x is =x, 'abc stays 'abc
    old = tmp_path / "old.csv"
    old.write_text(
        "name,bound,fits,critical_batch,t_lower\n"
        + "".join(f'"{n}","memory","True",,0.001\n' for n in ("'=x", "'abc", "plain"))
    )
    assert read_results_file(old, "baseline")["name"].tolist() == ["=x", "'abc", "plain"]


# ---------------------------------------------------------------- P13/P14: results validated


def test_p13_text_in_t_lower_is_an_error_naming_the_file_line_and_column(runs, tmp_path):
    old, new = runs
    frame = _results(old).astype({"t_lower": object})
    frame.loc[1, "t_lower"] = "fast"
    bad_csv = tmp_path / "bad.csv"
    frame.to_csv(bad_csv, index=False)
    result = invoke("compare", bad_csv, new, "-o", tmp_path / "c")
    assert result.exit_code == 2, result.output
    assert _error_line(result) == (
        f"Error: the baseline {bad_csv}:3: column t_lower: 'fast' is not a number; a results "
        "file's t_lower is a time in seconds, or empty"
    )
    bad_parquet = tmp_path / "bad.parquet"
    pq.write_table(pa.Table.from_pandas(frame.astype({"t_lower": str})), bad_parquet)
    result = invoke("compare", new, bad_parquet, "-o", tmp_path / "c")
    assert result.exit_code == 2, result.output
    assert _error_line(result).startswith(
        f"Error: the new {bad_parquet}, row 2 (name 'b'): column t_lower: 'fast' is not a number"
    )
    frame.loc[1, "t_lower"] = "2.5e-4"  # a number written as text is a number
    frame.to_csv(bad_csv, index=False)
    assert invoke("compare", bad_csv, new, "-o", tmp_path / "c").exit_code == 1


def test_p14_a_repeated_column_is_an_error_and_each_run_input_fails_alone(runs, tmp_path):
    old, new = runs
    text = (old / "results.csv").read_text(encoding="utf-8")
    header, rest = text.split("\n", 1)
    repeated = tmp_path / "base" / "s" / "results.csv"
    repeated.parent.mkdir(parents=True)
    repeated.write_text(header.replace(",notes", ",t_lower") + "\n" + rest, encoding="utf-8")
    at = header.split(",").index("t_lower") + 1
    last = len(header.split(","))
    result = invoke("compare", repeated, new, "-o", tmp_path / "c")
    assert result.exit_code == 2, result.output
    assert _error_line(result) == (
        f"Error: the baseline {repeated} has the column 't_lower' twice (columns {at} and "
        f"{last}); a results file names each column once"
    )
    # run --baseline with two inputs: the one whose baseline is malformed fails, alone
    (tmp_path / "base" / "t").mkdir()
    (tmp_path / "base" / "t" / "results.csv").write_text(text, encoding="utf-8")
    body = "".join(",".join(str(r[k]) for k in ROWS[0]) + "\n" for r in ROWS)
    inputs = [write_scenarios(tmp_path, ",".join(ROWS[0]) + "\n" + body, f"{n}.csv") for n in "st"]
    out = tmp_path / "out"
    result = invoke("run", *inputs, "-o", out, "--no-plots", "--baseline", tmp_path / "base")
    assert result.exit_code == 1, result.output
    assert _error_line(result).startswith(f"Error: the baseline {repeated} has the column")
    assert not (out / "s").exists()
    header = "name,hardware,change,old,new,ratio,causes,series\n"
    assert (out / "t" / "changes.csv").read_text() == header
    assert "index of 2 runs" in result.output


# ---------------------------------------------------------------- P15: --threshold nan


def test_p15_a_threshold_that_is_no_number_is_a_usage_error(runs, tmp_path):
    old, new = runs
    result = invoke("compare", old, new, "-o", tmp_path / "c", "--threshold", "nan")
    assert result.exit_code == 2
    assert _error_line(result) == (
        "Error: Invalid value for '--threshold': 'nan' is not a fraction in [0, 1); give one, "
        "e.g. 0.05"
    )
    assert not (tmp_path / "c").exists()
    # the library checks it before reading anything (the runs here do not even exist)
    with pytest.raises(ValueError, match=r"threshold must be a number in \[0, 1\), e.g. 0.05"):
        pipeline.compare(tmp_path / "nowhere", tmp_path / "nothing", threshold=float("nan"))
    with pytest.raises(TypeError, match=r"threshold must be a number in \[0, 1\), not True"):
        pipeline.compare(old, new, threshold=True)


# ---------------------------------------------------------------- P36: no numpy warnings


def test_p36_a_zero_t_lower_gives_changes_without_numpy_warnings(runs, tmp_path):
    old, new = runs
    frame = _results(new)
    frame.loc[0, "t_lower"] = 0.0
    frame.loc[1, "t_lower"] = -1.0
    zero = tmp_path / "zero.csv"
    frame.to_csv(zero, index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a RuntimeWarning would be printed on stderr
        for args in ((old, zero), (zero, old)):
            result = invoke("compare", *args, "-o", tmp_path / "c")
            assert result.exit_code == 1, result.output
            assert result.output.startswith("2 compared: 2 changes (t_lower 2)")
            assert "Warning" not in result.output
    html = (tmp_path / "c" / "changes.html").read_text(encoding="utf-8")
    assert "Largest time changes (2)" in html
