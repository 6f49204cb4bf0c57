"""Differential: the local engine and the Dask engine give the same run. Hypothesis writes
scenario files (sweeps, fleet lists, bad rows, rows the model refuses, collectives, a user
chip) and runs each through both engines, the Dask one cut into partitions anywhere; the
results, problems, warnings, summary (every field), findings, series lines, summary.json
and the manifest's shared fields must agree (issue 28: one summary for every engine).

Cut anywhere, through the model's own partial -> merge -> finish, on many examples; and end
to end through `run_dask` on a cluster, on fewer (each costs a Dask run)."""

from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

import pipeline
from pipeline.calibration.file import calibration_from
from pipeline.catalogs.hardware import catalog_records, load_catalog
from pipeline.model.overflow import refused_problems
from pipeline.scenarios import load_scenarios
from pipeline.scenarios.refused import with_problems
from pipeline.summary.finish import finish
from pipeline.summary.partial import chips_counted, computed, merge
from tests.helpers import TRAINING, measured_rows

TINY = "name,peak_bf16,hbm_bandwidth,hbm_capacity\ntiny,1e-320,1e12,1e10\n"  # underflows
HEADER = "name,op,hardware,dtype,chips,B,D,F,N,bytes,hbm_efficiency,measured_seconds"
MANY = int(os.environ.get("FUZZ_EXAMPLES", "20"))  # make soak: 1000

chips = st.sampled_from(["h100", "tpu-v5e", "b200", "h100|tiny", "h100|tpu-v5e|b200", "h10",
                         "tiny", "mi300x|h100"])  # fmt: skip
dtypes = st.sampled_from(["bf16", "fp8", "bf16|fp8", "int8", "", "bf17"])
sizes = st.sampled_from(["128", "4096", "65536", "262144", "8192|1024", "1..3", "x"])
batch = st.sampled_from(["1", "64", "1..300", "1..4096*2", "1|512|4096", "0", ""])


@st.composite
def rows(draw) -> str:
    """One scenario line: a matmul, a batched matmul, a dot, a custom op or a collective."""
    name = f"r{draw(st.integers(0, 30))}"
    kind = draw(st.sampled_from(["matmul", "matmul", "batched_matmul", "dot", "custom",
                                 "all_gather", "all_reduce"]))  # fmt: skip
    hw, dt = draw(chips), draw(dtypes)
    eff = draw(st.sampled_from(["", "", "0.5", "1e-320"]))  # 1e-320: the model refuses it
    measured = draw(st.sampled_from(["", "", "1e-3", "5e-6"]))
    count = draw(st.sampled_from(["", "", "8", "2|16"]))
    b, d, f = draw(batch), draw(sizes), draw(sizes)
    if kind == "dot":
        return f"{name},dot,{hw},{dt},,,,,{draw(sizes)},,{eff},{measured}"
    if kind == "custom":
        return f"{name},custom,{hw},{dt},,,,,,1e6,{eff},{measured}"
    if kind.startswith("all_"):
        volume = draw(st.sampled_from(["1e9", "1000..1000000000*10", "1e6|1e8"]))
        return f"{name},{kind},{hw},{dt},{count or 8},,,,,{volume},,{measured}"
    return f"{name},{kind},{hw},{dt},{count},{b},{d},{f},,,{eff},{measured}"


files = st.lists(rows(), min_size=1, max_size=8).map(lambda r: "\n".join([HEADER, *r]) + "\n")
ISSUE_CASE = f"{HEADER}\nm,matmul,h100|tiny,,,4096,4096,4096,,,,\n"
# issue 30: the fleet answer of a swept fleet series, cut between its points
FLEET_CASE = f"{HEADER}\nf,matmul,h100|tiny,bf16|fp8,,1..4096*2,4096,4096,,,,\n"
# found by this test: the Dask client's reach warning counted a swept row once
REACH_CASE = f"{HEADER}\nr,all_gather,h100,bf16,2|16,,,,,1000..1000000000*10,,\n"


def write(tmp_path, text: str):
    (tmp_path / "tiny.csv").write_text(TINY)
    path = tmp_path / "s.csv"
    path.write_text(text)
    return path, tmp_path / "tiny.csv"


def text(frame: pd.DataFrame) -> pd.DataFrame:
    """A table with its text columns as str (categoricals as their labels)."""
    return frame.astype({c: str for c in frame.columns if frame[c].dtype.kind in "OU" or
                         isinstance(frame[c].dtype, pd.CategoricalDtype)})  # fmt: skip


def same_summary(a, b) -> None:
    """Every field of two Summaries, the findings' tables and counts included."""
    for field in ("scenarios", "source_rows", "rejected_rows", "problems", "bounds",
                  "not_fitting", "overrides", "bottom"):  # fmt: skip
        assert getattr(a, field) == getattr(b, field), field
    for field in ("per_hardware", "per_op", "critical_batches", "derated", "chips", "lines",
                  "chip_lines", "series", "fleet", "fleet_curves", "serving",
                  "serving_curves", "training"):  # fmt: skip
        pd.testing.assert_frame_equal(text(getattr(a, field)), text(getattr(b, field)),
                                      check_dtype=False, obj=field)  # fmt: skip
    assert set(a.findings) == set(b.findings)
    for key, want in a.findings.items():
        got = b.findings[key]
        if isinstance(want, pd.DataFrame):
            pd.testing.assert_frame_equal(text(got).reset_index(drop=True),
                                          text(want).reset_index(drop=True),
                                          check_dtype=False, obj=key)  # fmt: skip
        else:
            assert got == want, key


def cut_run(path, catalog, cuts: list[float], cal=None, prices=None):
    """The Dask engine's statistics without Dask: the plan cut at `cuts` (fractions), each
    partition computed and reduced as a worker does, the client's merge and finish (`cal`:
    the run's calibration; `prices`: its USD per chip-hour by chip)."""
    loaded = load_scenarios(path, catalog, planned=True)
    plan = loaded.planned
    at = plan.snapped(sorted({0, plan.total, *(int(c * plan.total) for c in cuts)})).tolist()
    given = dict(calibration=cal, prices=prices)
    parts = [computed(plan.rows(lo, hi), **given)
             for lo, hi in zip(at[:-1], at[1:], strict=True)]  # fmt: skip
    parts = parts or [computed(plan.rows(0, 0), **given)]
    merged = merge([p[2] for p in parts])
    problems = with_problems(loaded.problems, refused_problems(loaded.source, merged.refused))
    records = list(catalog_records(catalog, chips_counted(merged)))
    rejected = len({p.line for p in problems})
    summary = finish(merged, records, loaded.source_rows, rejected, len(problems), cal)
    results = pd.concat([p[0] for p in parts], ignore_index=True)
    return results, problems, summary


@settings(
    max_examples=MANY,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(text_=files, cuts=st.lists(st.floats(0, 1), max_size=6))
@example(text_=ISSUE_CASE, cuts=[])
@example(text_=ISSUE_CASE, cuts=[0.5])
@example(text_=FLEET_CASE, cuts=[0.3, 0.31, 0.7])
def test_cut_anywhere_the_statistics_are_the_local_ones(tmp_path, text_, cuts):
    path, tiny = write(tmp_path, text_)
    catalog = load_catalog([tiny])
    local = pipeline.analyze(path, hardware=catalog)
    results, problems, summary = cut_run(path, catalog, cuts)
    assert [str(p) for p in problems] == [str(p) for p in local.problem_list]
    pd.testing.assert_frame_equal(text(results), text(local.results), check_dtype=False)
    same_summary(local.summary, summary)


def test_the_issues_case_keeps_the_h100_row_and_blames_hardware(tmp_path):
    path, tiny = write(tmp_path, ISSUE_CASE)
    local = pipeline.analyze(path, hardware=[tiny])
    assert local.results["name"].tolist() == ["m[hardware=h100]"]
    ((line, name, column, _),) = local.problems.itertuples(index=False)
    assert (line, name, column) == (2, "m", "hardware")


NO_SHRINK = (Phase.explicit, Phase.reuse, Phase.generate)  # a Dask run per step: too slow
SHARED = ("tool", "input_path", "input_sha256", "tool_version", "catalog_version",
          "source_rows", "scenarios", "rejected_rows", "rows", "warnings")  # fmt: skip


@settings(
    max_examples=max(5, MANY // 8),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(text_=files, partition_rows=st.integers(1, 1200))
@example(text_=ISSUE_CASE, partition_rows=1)
@example(text_=FLEET_CASE, partition_rows=7)
def test_end_to_end_the_dask_run_is_the_local_one(tmp_path_factory, cluster, text_,
                                                  partition_rows):  # fmt: skip
    from pipeline.engines.dask.run import MIN_PARTITION_ROWS, run_dask

    tmp_path = tmp_path_factory.mktemp("run")
    path, tiny = write(tmp_path, text_)
    catalog = load_catalog([tiny])
    local = pipeline.analyze(path, hardware=catalog)
    written = local.write(tmp_path / "local", plots=False, workbook=False, report=False)
    total = load_scenarios(path, catalog, planned=True).planned.total
    if total > MIN_PARTITION_ROWS:  # the engine refuses smaller partitions of such a run
        partition_rows = max(partition_rows, MIN_PARTITION_ROWS)
    got = run_dask(path, tmp_path / "dask", hardware=catalog, partition_rows=partition_rows,
                   scheduler=cluster.scheduler_address)  # fmt: skip
    assert [str(p) for p in got.problems] == [str(p) for p in local.problem_list]
    assert sorted(got.warnings) == sorted(local.warnings)
    parts = sorted((got.folder / "results").glob("part-*.parquet"))
    rows = pd.concat([pd.read_parquet(p) for p in parts], ignore_index=True) if parts else None
    if rows is not None and len(rows):
        want = pd.read_parquet(written.folder / "results.parquet")
        pd.testing.assert_frame_equal(text(rows), text(want), check_dtype=False)
    else:
        assert local.summary.scenarios == 0
    same_summary(local.summary, got.record.summary)
    mine = json.loads((written.folder / "summary.json").read_text())
    theirs = json.loads((got.folder / "summary.json").read_text())
    assert theirs == mine
    a = json.loads((written.folder / "manifest.json").read_text())
    b = json.loads((got.folder / "manifest.json").read_text())
    assert set(a) == set(b)  # one schema
    assert {k: a[k] for k in SHARED} == {k: b[k] for k in SHARED}
    assert (a["engine"], b["engine"]) == ("local", "dask")
    assert sum(p["rows"] for p in b["partitions"]) == a["scenarios"] == b["scenarios"]


def test_no_line_is_lost_between_engines_helpers():
    """The helper that compares tables sees a difference (a differential that cannot fail
    would be a defect)."""
    a = pd.DataFrame({"x": ["a", "b"], "y": [1.0, np.nan]})
    with pytest.raises(AssertionError):
        pd.testing.assert_frame_equal(text(a), text(a.assign(y=[1.0, 2.0])))


def test_groups_cut_anywhere_are_the_local_ones(tmp_path):
    """Issue 31: a partition cut inside a group is moved to the group's end
    (Planned.snapped), so a group's total sums all its rows; cut anywhere, the statistics
    and results are the local engine's."""
    scenario = (
        "name,op,hardware,B,D,F,group,count,flops,bytes\n"
        "up,matmul,h100,1..64*2,4096,14336,mlp,32,,\n"
        'down,"BF,FD->BD",h100,1..64*2,4096,14336,mlp,32,,\n'
        "alone,matmul,v5e,8|16,1024,1024,,,,\n"
        "a,matmul,v5e,8,1024,1024,blk,,,\n"
        "b,custom,v5e,,,,blk,,1e9,1e6\n"
    )
    path, catalog, local = local_run(tmp_path, scenario)
    assert (local.results["op"].astype(str) == "group").sum() == 7 + 1
    cuts_agree(path, catalog, local, ([0.1], [0.2, 0.5, 0.51, 0.9], [0.99]))


def local_run(tmp_path, scenario: str):
    """`scenario` written to a file, the catalog, and the local engine's run of it (no problem)."""
    path = tmp_path / "s.csv"
    path.write_text(scenario)
    catalog = load_catalog()
    local = pipeline.analyze(path, hardware=catalog)
    assert not local.problem_list
    return path, catalog, local


def cuts_agree(path, catalog, local, cuts_list, cal=None) -> None:
    """`path` cut at each of `cuts_list` merges to `local`'s results and summary."""
    for cuts in cuts_list:
        results, _, summary = cut_run(path, catalog, cuts, cal)
        pd.testing.assert_frame_equal(text(results), text(local.results), check_dtype=False)
        same_summary(local.summary, summary)
        assert summary.calibration == local.summary.calibration


def test_a_calibrated_run_cut_anywhere_has_the_local_estimates(tmp_path):
    """Issue 32: every partition applies the calibration to its rows (steps' totals summed
    in it), so the merged estimates, series ranges and findings are the local ones."""
    measured = tmp_path / "m.csv"
    measured_rows(30).to_csv(measured, index=False)  # 25 rows a group at least
    pipeline.calibrate(measured, tmp_path / "cal.toml")
    path = tmp_path / "s.csv"
    path.write_text(
        "name,op,model,hardware,B,D,F,T,S,measured_seconds\n"
        "d,transformer,llama3-8b,h100,1..64*2,,,1,2048,\n"
        "m,matmul,,h100,1..512*2,4096,4096,,,1e-4\n"
    )
    cal, _ = calibration_from(tmp_path / "cal.toml")
    local = pipeline.analyze(path, calibration=tmp_path / "cal.toml")
    assert local.results["t_estimate"].notna().all()
    cuts_agree(path, load_catalog(), local, ([0.3], [0.1, 0.5, 0.77]), cal)


def test_transformer_steps_cut_anywhere_are_the_local_ones(tmp_path):
    """Issue 31: a step is one scenario of the plan, so a partition holds whole steps and
    their totals; a sweep of steps cut between them merges to the local statistics."""
    scenario = (
        "name,op,model,hardware,chips,shard,B,T,S,notes\n"
        "d,transformer,llama3-8b,h100,,,1..256*2,1,2048,decode\n"
        "tp,transformer,llama3-70b,h100,8,N,64,1,8192,tensor parallel\n"
        "m,transformer,mixtral-8x7b,h100|b200,,,1..64*4,1,1024,moe\n"
    )
    path, catalog, local = local_run(tmp_path, scenario)
    cuts_agree(path, catalog, local, ([0.5], [0.1, 0.33, 0.9]))


def test_serve_rows_cut_anywhere_are_the_local_ones(tmp_path):
    """Issue 43: a serve row is one scenario of the plan, expanded into its steps (and its
    blank B found) inside each partition, so a partition holds whole serve rows; cut
    between them, the results, the serving answer and every statistic are the local ones."""
    scenario = (
        "name,op,model,hardware,dtype,chips,shard,B,D,F,isl,osl,tpot_target,draft_tokens,"
        "acceptance,draft_model,notes\n"
        "s,serve,llama3-70b,h100|b200,bf16|fp8,8,N,,,,2048,256,0.03,,,,target\n"
        "b,serve,mixtral-8x7b,h100,,4,N,8|64,,,1024,128,,,,,swept\n"
        "m,matmul,,h100,,,,8..64*2,4096,4096,,,,,,,a plain row between\n"
        "k,serve,llama3-70b,h100,,8,N,16,,,1024,128,,4,0.7,llama3-8b,speculative\n"
    )
    path, catalog, local = local_run(tmp_path, scenario)
    assert (local.results["op"].astype(str) == "serve").sum() == 4 + 2 + 1
    results, _, summary = cut_run(path, catalog, [0.05, 0.5, 0.8])
    pd.testing.assert_frame_equal(text(results), text(local.results), check_dtype=False)
    same_summary(local.summary, summary)
    pd.testing.assert_frame_equal(text(summary.serving), text(local.summary.serving),
                                  check_dtype=False)  # fmt: skip


def test_serve_rows_with_prices_cut_anywhere_are_the_local_ones(tmp_path):
    """Issue 44: each partition prices its own rows (the prices sent with them), so cut
    between serve rows the cost columns, the serving answer's cost and energy ranks and the
    fleet's cheapest are the local ones."""
    scenario = (
        "name,op,model,hardware,dtype,chips,shard,B,isl,osl,tpot_target\n"
        "s,serve,llama3-70b,h100|b200|mi300x,bf16|fp8,8,N,,2048,256,0.03\n"
        "b,serve,mixtral-8x7b,h100|b200,,4,N,8|64,1024,128,\n"
    )
    prices = tmp_path / "p.csv"
    prices.write_text("hardware,usd_per_chip_hour,source,date\nh100,2.5,q,2026-11-01\n"
                      "b200,6,q,2026-11-01\n", encoding="utf-8")  # fmt: skip
    path = tmp_path / "s.csv"
    path.write_text(scenario)
    catalog = load_catalog()
    local = pipeline.analyze(path, hardware=catalog, prices=prices)
    assert local.summary.serving["cost_rank"].notna().any()
    usd = {"h100": 2.5, "b200": 6.0}
    for cuts in ([0.5], [0.1, 0.4, 0.8]):
        results, _, summary = cut_run(path, catalog, cuts, prices=usd)
        pd.testing.assert_frame_equal(text(results), text(local.results), check_dtype=False)
        same_summary(local.summary, summary)


def test_train_rows_cut_anywhere_are_the_local_ones(tmp_path):
    """Issue 45: a train row is one scenario and one result row; cut anywhere, the results,
    the training answer and every statistic are the local ones."""
    path, catalog, local = local_run(tmp_path, TRAINING)
    assert len(local.summary.training) == 8
    for cuts in ([0.5], [0.2, 0.4, 0.9]):
        results, _, summary = cut_run(path, catalog, cuts)
        pd.testing.assert_frame_equal(text(results), text(local.results), check_dtype=False)
        same_summary(local.summary, summary)
