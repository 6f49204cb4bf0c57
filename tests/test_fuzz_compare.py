"""Property-based fuzzing of the comparison: generated results.csv and results.parquet files
(columns dropped, repeated or added with odd names, text, NaN, inf or zero where numbers
belong, formula-like and repeated names) given to `pipeline compare` and to `run --baseline`.
The answer is changes (exit 0 or 1) or one `Error:` line (exit 2 for compare; for a run, exit
1 for that input alone), never a traceback, and the compared files stay as they were. And
the CSV-injection quote round-trips any name: written by run.tables, read back exact."""

from __future__ import annotations

import csv
import io
import os
import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import pipeline
from pipeline.errors import InvalidResults
from pipeline.run.baseline import read_results_file
from pipeline.run.tables import write_csv
from tests.helpers import invoke, tree

SETTINGS = settings(  # a soak sets FUZZ_EXAMPLES=1000; the default run takes a few seconds
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "25")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
ROWS = [
    {"name": "a", "op": "matmul", "B": 8, "D": 8192, "F": 8192, "hardware": "v5e"},
    {"name": "b", "op": "matmul", "B": 4096, "D": 8192, "F": 8192, "hardware": "h100"},
    {"name": "c", "op": "matmul", "B": 4096, "D": 8756, "F": 16384, "hardware": "v5e",
     "chips": 2, "shard": "D"},
]  # fmt: skip
BASE = pipeline.analyze(ROWS).results
FOCUS = ["name", "t_lower", "bound", "fits", "critical_batch", "hardware", "D", "chips"]
SUMMARY = re.compile(r"^[\d,]+ compared: ")

odd_text = st.one_of(
    st.sampled_from(
        ["", " ", "fast", "nan", "NaN", "NA", "None", "inf", "-inf", "0", "-0", "1e400", "1e-320",
         "True", "False", "true", "maybe", "=1+1", "'=x", "''=x", "'", "@SUM(A1)", "\t=x", "\r",
         "-5", "+1", "1,5", '"', "a\nb", "é", "\u202e", "compute", "memory", "network"]
    ),
    st.text(max_size=8),
)  # fmt: skip
cell = st.one_of(
    odd_text,
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(2**70), 2**70),
    st.sampled_from([0.0, -1.0, float("inf"), float("nan"), True, False, None]),
)
column_name = st.one_of(st.sampled_from(FOCUS), st.sampled_from(list(BASE.columns)))


@st.composite
def results_files(draw):
    """(kind, columns): a results file as a list of (header, cells), and how to write it."""
    rows = draw(st.permutations(range(len(BASE))))[: draw(st.integers(0, len(BASE)))]
    if rows and draw(st.integers(0, 5)) == 0:  # now and then a name twice
        rows.append(rows[0])
    columns = [(str(c), [BASE[c].iloc[r] for r in rows]) for c in BASE.columns]
    dropped = draw(st.sets(st.sampled_from(FOCUS), max_size=2))
    if draw(st.integers(0, 5)) == 0:  # now and then a column gone
        columns = [c for c in columns if c[0] not in dropped]
    names = [c[0] for c in columns]
    odd = draw(st.sampled_from([0, 0, 1, 1, 2, 4]))
    for _ in range(odd):  # odd cells, mostly where a comparison reads
        at = names.index(name) if (name := draw(column_name)) in names else None
        if at is not None and rows:
            columns[at][1][draw(st.integers(0, len(rows) - 1))] = draw(cell)
    if columns and draw(st.integers(0, 7)) == 0:  # a column twice
        twice = draw(st.sampled_from(columns))
        columns.append((twice[0], list(twice[1])))
    for header in draw(st.lists(st.one_of(odd_text, st.sampled_from(FOCUS)), max_size=2)):
        columns.append((header, [draw(cell) for _ in rows]))
    kind = draw(st.sampled_from(["tool.csv", "plain.csv", "parquet"]))
    return kind, columns


def _text(value) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return ""
    return repr(value) if isinstance(value, float) else str(value)


def write_results(folder, kind: str, columns) -> os.PathLike:
    """The results file at folder/results.csv or folder/results.parquet (the other removed)."""
    folder.mkdir(parents=True, exist_ok=True)
    for old in ("results.csv", "results.parquet"):
        (folder / old).unlink(missing_ok=True)
    headers = [h for h, _ in columns]
    if kind == "parquet":
        arrays = []
        for _, cells in columns:
            try:
                arrays.append(pa.array(cells, from_pandas=True))
            except (pa.ArrowException, TypeError, ValueError, OverflowError):
                arrays.append(pa.array([None if c is None else _text(c) for c in cells]))
        path = folder / "results.parquet"
        pq.write_table(pa.Table.from_arrays(arrays, names=headers), path)
        return path
    path = folder / "results.csv"
    if kind == "tool.csv" and len(set(headers)) == len(headers):
        frame = pd.DataFrame({h: pd.Series(c, dtype=object) for h, c in columns})
        frame = frame.astype({h: str for h, c in columns if {type(v) for v in c} - {str}})
        write_csv(frame, path)  # the tool's own writer: quotes and all
        return path
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(headers)
    writer.writerows(zip(*[[_text(v) for v in cells] for _, cells in columns], strict=True))
    path.write_bytes(buf.getvalue().encode("utf-8", "surrogatepass"))
    return path


def _assert_answered(result, error_code: int) -> str:
    """Changes said (exit 0 or 1), or exactly one `Error:` line with `error_code`; the line."""
    assert "Traceback" not in result.output, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    event(f"exit {result.exit_code}")
    if result.exit_code == error_code and errors:
        assert len(errors) == 1, result.output
        return errors[0]
    assert result.exit_code in (0, 1) and not errors, result.output
    return result.output


@SETTINGS
@given(old=results_files(), new=results_files())
def test_compare_any_results_files_gives_changes_or_an_error(tmp_path, old, new):
    a = write_results(tmp_path / "a", *old)
    b = write_results(tmp_path / "b", *new)
    before = tree(tmp_path / "a"), tree(tmp_path / "b")
    result = invoke("compare", a, b, "-o", tmp_path / "changes")
    said = _assert_answered(result, 2)
    if result.exit_code in (0, 1):
        assert SUMMARY.match(said), said
        assert (tmp_path / "changes" / "changes.csv").is_file()
    assert (tree(tmp_path / "a"), tree(tmp_path / "b")) == before


@SETTINGS
@given(old=results_files())
def test_run_with_any_baseline_gives_changes_or_an_error_for_that_input(tmp_path, old):
    scenarios = tmp_path / "s.csv"
    if not scenarios.exists():
        pd.DataFrame(ROWS).to_csv(scenarios, index=False)
    write_results(tmp_path / "base" / "s", *old)
    before = tree(tmp_path / "base")
    args = ("run", scenarios, "-o", tmp_path / "out", "--no-plots", "-q")
    result = invoke(*args, "--baseline", tmp_path / "base")
    said = _assert_answered(result, 1)
    if said.startswith("Error:"):
        assert "the baseline" in said, said
    else:
        assert result.exit_code == 0 and (tmp_path / "out" / "s" / "changes.csv").is_file()
    assert tree(tmp_path / "base") == before


@SETTINGS
@given(old=results_files(), new=results_files())
def test_compare_any_results_frames_gives_changes_or_an_error(old, new):
    frames = [
        pd.DataFrame(dict(enumerate(c for _, c in columns))).set_axis([h for h, _ in columns],
                                                                     axis=1)
        for _, columns in (old, new)
    ]  # fmt: skip
    try:
        comparison = pipeline.compare(*frames)
    except InvalidResults as exc:
        assert str(exc) and "\n" not in str(exc)
    else:
        assert SUMMARY.match(comparison.summary())


@SETTINGS
@given(names=st.lists(st.one_of(odd_text, st.text(max_size=6)), max_size=6, unique=True))
def test_any_name_round_trips_through_results_csv(tmp_path, names):
    frame = BASE.iloc[[0] * len(names)].assign(name=names)
    path = tmp_path / "results.csv"
    write_csv(frame, path)
    assert read_results_file(path, "baseline")["name"].tolist() == names
