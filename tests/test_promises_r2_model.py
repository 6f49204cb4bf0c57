"""What the tool promises about the model's numbers and the report's findings (issue 16, round
two): one test per finding of the hostile-user probe, each named for it."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import pipeline
from pipeline.cli import cli
from pipeline.errors import InvalidScenarios
from pipeline.render.report.page import render_report
from tests.helpers import FAST, write_scenarios

TIMES = ["t_math", "t_hbm", "t_network", "t_lower", "t_upper"]
# a chip with HBM and an ICI link but no bf16 peak (only fp32)
NO_PEAK = pd.DataFrame(
    [{"name": "nopeak", "peak_fp32": 5e13, "hbm_bandwidth": 8.2e11, "hbm_capacity": 1.6e10,
      "default_link": "ici", "ici_bandwidth": 4.5e10, "ici_topology": "ring",
      "ici_latency": 1e-6}]
)  # fmt: skip
WITH_PEAK = NO_PEAK.assign(name="withpeak", peak_bf16=1.97e14)


def analyzed(rows: list[dict], **kw) -> pipeline.Analysis:
    """`rows` analyzed with every numpy or Python warning raised as an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return pipeline.analyze(rows, **kw)


# ---------------------------------------------------------------- R4: a collective needs no peak


@pytest.mark.parametrize(
    ("hardware", "dtype", "same_as"),
    [("v5e", "fp8", "v5e"), ("h100", "int4", "h100"), ("nopeak", "bf16", "withpeak")],
)
def test_r04_collective_times_need_no_peak(hardware, dtype, same_as):
    link = "nvlink" if hardware == "h100" else ""
    rows = [
        {"name": f"{op}_{v}_{kind}", "op": op, "bytes": v, "chips": 16, "hardware": hw,
         "dtype": dt, "link": link}
        for op in ("all_gather", "all_reduce", "all_to_all")
        for v in ("1000", "2e9")
        for kind, hw, dt in (("test", hardware, dtype), ("ref", same_as, "bf16"))
    ]  # fmt: skip
    a = analyzed(rows, hardware=[NO_PEAK, WITH_PEAK] if hardware == "nopeak" else None)
    assert a.problem_list == ()
    r = a.results.set_index("name")
    test = r[r.index.str.endswith("_test")].rename(index=lambda n: n[: -len("_test")])
    ref = r[r.index.str.endswith("_ref")].rename(index=lambda n: n[: -len("_ref")])
    assert np.isfinite(test[TIMES].to_numpy(dtype=float)).all()
    cols = [*TIMES, "bound", "fits", "memory_footprint", "network_bytes", "attainable_flops",
            "peak_fraction", "collective"]  # fmt: skip
    pd.testing.assert_frame_equal(test[cols], ref.loc[test.index, cols])
    assert (test["bound"] == "network").all()
    assert a.summary.findings["collective_rows"] == len(rows)


# ---------------------------------------------------------------- R7: overflow is refused


def test_r07_times_past_float64_are_refused(tmp_path):
    mine = pd.DataFrame([{"name": "tiny", "hbm_bandwidth": 1e12, "peak_bf16": 5e-324}])
    rows = [
        {"name": "ok", "op": "matmul", "B": 8, "D": 8, "F": 8, "hardware": "h100"},
        {"name": "slow", "op": "custom", "flops": 1e308, "bytes": 1e3, "hardware": "h100",
         "compute_efficiency": 1e-300},
        {"name": "sub", "op": "matmul", "B": 8, "D": 8, "F": 8, "hardware": "tiny"},
        {"name": "zero", "op": "matmul", "B": 8, "D": 8, "F": 8, "hardware": "tiny",
         "compute_efficiency": 0.5},
        {"name": "sweep", "op": "matmul", "B": "1..8", "D": 8, "F": 8, "hardware": "h100",
         "peak_flops": 5e-324},
        {"name": "wait", "op": "matmul", "B": 8, "D": 8, "F": 8, "hardware": "h100",
         "measured_seconds": 1e308, "peak_flops": 1e308, "hbm_bandwidth": 1e308},
    ]  # fmt: skip
    a = analyzed(rows, hardware=mine)
    assert a.results["name"].tolist() == ["ok"]
    problems = a.problems.set_index("name")
    assert problems.index.tolist() == ["slow", "sub", "zero", "sweep", "wait"]
    assert problems["line"].tolist() == [3, 4, 5, 6, 7]
    assert problems.loc["slow", "column"] == "compute_efficiency"
    assert problems.loc["sub", "column"] == "hardware"
    assert problems.loc["sweep", "column"] == "peak_flops"
    assert problems.loc["wait", "column"] == "measured_seconds"
    assert "t_math" in problems.loc["slow", "reason"]
    assert "underflows to 0" in problems.loc["zero", "reason"]
    assert a.summary.rejected_rows == 5 and a.summary.scenarios == 1
    for message in map(str, a.problem_list):
        assert re.match(r"rows:\d+: column \w+: \S", message), message
    with pytest.raises(InvalidScenarios) as err:
        pipeline.analyze(rows[:2], strict=True)
    assert len(err.value.problems) == 1

    path = write_scenarios(tmp_path, "name,op,flops,bytes,hardware,compute_efficiency\n"
                           "ok,custom,1e9,1e6,h100,\nslow,custom,1e308,1e3,h100,1e-300\n")  # fmt: skip
    result = CliRunner().invoke(cli, ["run", str(path), "-o", str(tmp_path / "out"), *FAST])
    assert result.exit_code == 1
    assert f"{path}:3: column compute_efficiency: t_math = " in result.stderr
    assert "Warning" not in result.stderr and "overflow" not in result.stderr


# ---------------------------------------------------------------- R9: the findings' sentence


def findings_text(rows: list[dict]) -> str:
    """The report's communication-bound finding, as text."""
    html = render_report(analyzed(rows), "r9")
    part = html[html.index("<h3>Communication-bound") :]
    return re.sub(r"<[^>]+>|\s+", " ", part[: part.index("<h3>", 4)])


GATHER = {"op": "all_gather", "bytes": 2e9, "chips": 16, "hardware": "v5e"}
BIG = {"op": "matmul", "B": 4096, "D": 4096, "F": 4096, "hardware": "v5e"}  # compute-bound
SMALL = {"op": "matmul", "B": 1, "D": 4096, "F": 4096, "hardware": "v5e"}  # memory-bound


@pytest.mark.parametrize(
    ("kinds", "says", "never"),
    [
        ("CCC", "every scenario is compute-bound", "collective"),
        ("GGG", "3 collective rows: network-bound by nature", "0 scenarios"),
        ("CGG", "every other scenario (1) is compute-bound", "None: every scenario"),
        ("MMM", "3 scenarios (3 memory, 0 network)", "None"),
        (
            "CMG",
            "1 scenario (1 memory, 0 network; 1 collective row, network-bound by nature, counted apart)",
            "None",
        ),
    ],
)
def test_r09_findings_sentence_is_true(kinds, says, never):
    kind = {"C": BIG, "G": GATHER, "M": SMALL}
    rows = [{"name": f"r{i}", **kind[k]} for i, k in enumerate(kinds)]
    text = findings_text(rows)
    assert says in text
    assert never not in text


# ---------------------------------------------------------------- R23: chips and dims


def test_r23_collective_chips_past_2_53_is_said_once(tmp_path):
    path = write_scenarios(
        tmp_path,
        "name,op,bytes,chips,hardware\nbig,all_gather,1000,9007199254740993,h100\n"
        "bad,all_gather,1000,x,h100\none,all_gather,1000,1,h100\nnone,all_gather,1000,,h100\n",
    )
    problems = pipeline.analyze(path).problems
    reasons = problems.groupby("name")["reason"].apply(list)
    assert len(reasons["big"]) == 1 and "above 2^53" in reasons["big"][0]
    assert len(reasons["bad"]) == 1 and "'x' is not a whole number" in reasons["bad"][0]
    assert reasons["one"] == [reasons["one"][0]] and "(got 1)" in reasons["one"][0]
    assert "(got none: chips is blank)" in reasons["none"][0]
    assert not problems["reason"].str.contains("got 1").loc[problems["name"] != "one"].any()


def test_r23_collective_dims_are_refused(tmp_path):
    path = write_scenarios(
        tmp_path,
        "name,op,bytes,chips,hardware,B,D\ng,all_gather,1000,8,h100,4,\n"
        "r,all_reduce,1000,8,h100,1..4,8\nok,all_gather,1000,8,h100,,\n"
        'm,"BD,D->B",,1,h100,4,8\n',
    )
    a = pipeline.analyze(path)
    assert sorted(a.results["name"]) == ["m", "ok"]
    problems = a.problems
    assert problems[["line", "column"]].values.tolist() == [[2, "B"], [3, "B"], [3, "D"]]
    assert problems["reason"].iloc[0] == (
        "op all_gather is a collective: it takes bytes, not dims; leave B empty (bytes is V, "
        "the whole array)"
    )


def test_r04_communicating_row_on_a_chip_without_default_link_is_refused():
    mine = NO_PEAK.assign(default_link="", peak_bf16=1e14)
    rows = [
        {"name": "g", "op": "all_gather", "bytes": 1000, "chips": 4, "hardware": "nopeak"},
        {"name": "m", "op": "matmul", "B": 8, "D": 8, "F": 8, "chips": 4, "shard": "D",
         "hardware": "nopeak"},
        {"name": "ok", "op": "all_gather", "bytes": 1000, "chips": 4, "hardware": "nopeak",
         "link": "ici"},
        {"name": "b", "op": "matmul", "B": 8, "D": 8, "F": 8, "chips": 4, "shard": "B",
         "hardware": "nopeak"},
    ]  # fmt: skip
    a = analyzed(rows, hardware=mine)
    assert sorted(a.results["name"]) == ["b", "ok"]
    assert np.isfinite(a.results[TIMES].to_numpy(dtype=float)).all()
    assert a.problems["column"].tolist() == ["link", "link"]
    assert a.problems["reason"].iloc[0] == (
        "chip nopeak has no default link; give link (it has ici)"
    )
