"""cli/lines.py: the lines `run` and `validate` print for an input, on either engine: the
rejected rows counted alike (each row with a problem once, those with valid scenarios too said
partly), escaping, the warnings in one line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.cli.lines import (
    Checked,
    answer_lines,
    escaped,
    input_line,
    partly_rejected,
    rejected_text,
    validate_line,
    warnings_line,
)
from pipeline.errors import RowProblem
from pipeline.i18n import use_lang
from pipeline.render.text.serving import serving_sentences
from tests.helpers import invoke, serving_frames, write_scenarios


def _problem(line: int) -> RowProblem:
    return RowProblem("s.csv", line, "a", "B", "bad")


def test_a_row_with_valid_and_refused_scenarios_is_rejected_and_said_partly():
    problems = (_problem(3), _problem(4), _problem(4))
    assert partly_rejected(problems, np.array([2, 2, 3])) == 1  # line 3: a valid point too
    assert partly_rejected((), np.array([2])) == 0
    assert rejected_text(2, 1) == "2 rejected rows (1 partly)"
    assert rejected_text(1) == "1 rejected row" and rejected_text(0) == "0 rejected rows"
    with use_lang("ko"):
        assert rejected_text(1, 1) == "거부된 행 1개 (그중 1개는 일부만)"


def test_the_run_line_says_the_partly_rejected_rows():
    bounds = {"compute": 1, "memory": 2, "network": 0}
    line = input_line("s.csv", 3, bounds, 1, "out/s", "results.csv", partly=1)
    assert line == ("s.csv: 3 scenarios (compute-bound 1, memory-bound 2, network-bound 0), "
                    "1 rejected row (1 partly) -> out/s/ [results.csv]")  # fmt: skip
    dask = input_line("s.csv", 3, bounds, 0, "out/s", "results.csv", 2)
    assert "3 scenarios in 2 partitions (" in dask and dask.endswith(
        ", 0 rejected rows -> out/s/ [results.csv]"
    )


def test_escaped_keeps_line_breaks_between_lines_only():
    assert escaped("a\x1b[31m\nb\r") == "a\\x1b[31m\nb\\r"


def test_the_input_line_is_one_for_both_engines():
    bounds = {"network": 0, "memory": 1, "compute": 1035}
    local = input_line("q.csv", 1036, bounds, 1, Path("out/q"), "results.csv")
    assert local == (
        "q.csv: 1,036 scenarios (compute-bound 1,035, memory-bound 1, network-bound 0), "
        "1 rejected row -> out/q/ [results.csv]"
    )
    dask = input_line("q.csv", 1, bounds, 0, Path("out/q"), "results/part-*.parquet", 1)
    assert dask.startswith("q.csv: 1 scenario in 1 partition (compute-bound 1,035, ")


def test_the_warnings_line_names_the_files_written_that_list_them():
    folder = Path("out/q")
    every = [folder / n for n in ("results.csv", "workbook.xlsx", "report.html", "manifest.json")]
    assert warnings_line("q.csv", ["w"] * 3, folder, every) == (
        "q.csv: 3 warnings (w; w; …), in out/q/manifest.json, report.html and workbook.xlsx"
    )
    dask = ("results/part-00000.parquet", "report.html", "manifest.json")  # the manifest's names
    long = "q.csv:7: column 'x' is also an output column; it is carried through as 'input_x'"
    assert warnings_line("q.csv", [long], folder, dask) == (
        "q.csv: 1 warning (column 'x' is also an output column; it is carried through…), "
        "in out/q/manifest.json and report.html"
    )
    assert warnings_line("q.csv", [], folder, every) is None  # nothing to say


def test_the_validate_line_counts_each_row_once():
    def problem(line):
        return RowProblem("s.csv", line, "a", "B", "bad")

    # line 2 valid, line 3 partly (a valid point and a refused one), line 4 rejected
    checked = Checked("s.csv", 3, 40, (problem(3), problem(4), problem(4)), (),
                      np.array([2, 2, 3]))  # fmt: skip
    assert validate_line(checked) == (
        "s.csv: 3 rows read, 40 valid scenarios, 2 rejected rows (1 partly)"
    )
    assert validate_line(checked, dask=True).startswith("s.csv: 3 rows read, 40 valid scenarios "
                                                        "for --engine dask, ")  # fmt: skip
    clean = Checked("s.csv", 1, 2_000_000, (), (), np.array([2]))
    assert validate_line(clean, over=1_000_000) == (
        "s.csv: 1 row read, 2,000,000 valid scenarios, 0 rejected rows: over --max-rows "
        "(1,000,000) for the local engine; valid for --engine dask"
    )


def test_the_serving_answer_is_printed_under_the_input_line_one_per_series():
    serving, _curves = serving_frames()
    serving.loc[0, "config"] = "b200\x1b[31m fp8 ×4"  # a control character is escaped
    said = answer_lines(serving)
    assert len(said) == 2
    assert said[0].startswith("  answer: llama3-70b, 2,048 in / 256 out, ")
    assert "\x1b" not in said[0] and "b200\\x1b[31m fp8 ×4 at batch" in said[0]
    assert said[1].startswith("  answer: mixtral-8x7b, ")
    assert answer_lines(serving.iloc[:0]) == []
    with use_lang("ko"):
        assert answer_lines(serving)[1].startswith("  답: mixtral-8x7b, 입력 2,048 / 출력 256")


def test_pipeline_run_prints_the_serving_answer_and_not_with_q(tmp_path):
    path = write_scenarios(tmp_path, "name,op,model,hardware,dtype,chips,shard,isl,osl,B,"
                           "tpot_target\nchat,serve,llama3-70b,h100|b200,fp8,8,N,2048,256,"
                           "64|256,0.02\n")  # fmt: skip
    out = tmp_path / "out"
    done = invoke("run", path, "-o", out, "--no-plots", "--no-workbook", "--no-report")
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    said = [line for line in lines if line.startswith("  answer: ")]
    assert said == [f"  answer: {s}" for s in serving_sentences(pipeline_summary(out))]
    assert said[0].startswith("  answer: chat (llama3-70b), 2,048 in / 256 out, TPOT ≤ 20.0 ms: ")
    assert lines.index(said[0]) == 1  # right under the input's line
    quiet = invoke("run", path, "-o", out, "--force", "--no-plots", "--no-workbook",
                   "--no-report", "-q")  # fmt: skip
    assert "answer:" not in quiet.output


def pipeline_summary(out):
    """The serving answer of a run's summary.json, as a frame (its lines, in order)."""
    doc = json.loads((out / "s" / "summary.json").read_text(encoding="utf-8"))
    return pd.DataFrame([line for lines in doc["serving"].values() for line in lines])
