"""The training answer (summary.training, issue 45 item 3): one line per train row, ranked per
train series by days (the fastest first), the rows that do not fit after them with why; the
step time the estimate where there is one; with prices the run's cost and its rank; the
partials of frames cut anywhere merge into the answer of every row."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import pipeline
from pipeline.catalogs.hardware import load_catalog
from pipeline.scenarios import load_scenarios
from pipeline.summary.partial import computed, merge
from pipeline.summary.training import (
    TRAINING_COLUMNS,
    merge_training,
    rows_of,
    schemes,
    training_answer,
    training_rows,
)
from tests.helpers import write_scenarios

TOKENS, TRAIN_TOKENS = 4e6, 15e12


def step(series, hardware, chips, t, *, parallel=None, fits=True, mfu=0.45, critical=1100.0,
         strategy="fsdp", cost=None, estimate=None, train_tokens=TRAIN_TOKENS, tokens=TOKENS,
         model="llama3-70b"):  # fmt: skip
    """A train row as the model gives it (TRAIN_COLUMNS and the usual ones)."""
    row = {
        "name": f"{series}[hardware={hardware},chips={chips}]", "series": series, "op": "train",
        "model": model, "hardware": hardware, "chips": chips,
        "x_dtype": "bf16", "y_dtype": "bf16", "out_dtype": "bf16", "compute_dtype": "bf16",
        "t_lower": t, "bound": "compute" if mfu >= 0.45 else "network",
        "collective": "all_gather", "memory_footprint": 40e9 if fits else 160e9,
        "hbm_capacity": 80e9, "fits": fits, "tokens": tokens, "train_tokens": train_tokens,
        "parallel": parallel or f"fsdp={chips}", "mfu": mfu,
        "days": train_tokens / tokens * t / 86400, "critical_tokens_per_chip": critical,
        "compute_bound_batch": tokens / chips > critical, "comm_strategy": strategy,
    }  # fmt: skip
    if estimate is not None:
        row["t_estimate"] = estimate
    if cost is not None:
        row["usd_per_chip_hour"] = cost
        row["cost"] = cost * chips * (estimate or t) / 3600
    return row


def frame(rows: list[dict]) -> pd.DataFrame:
    """Results of these train rows with a matmul row (not a train row) after each."""
    out = []
    for r in rows:
        out.append(r)
        out.append({**{k: v for k, v in r.items() if k in ("hardware", "chips", "t_lower")},
                    "name": "mm", "series": "mm", "op": "matmul", "fits": True})  # fmt: skip
    results = pd.DataFrame(out)
    results["fits"] = results["fits"].astype("boolean")
    results["compute_bound_batch"] = results["compute_bound_batch"].astype("boolean")
    return results


def fleet() -> list[dict]:
    return [
        step("a", "h100", 1024, 3.7),
        step("a", "h100", 4096, 1.05, mfu=0.40),
        step("a", "b200", 1024, 1.6),
        step("a", "b200", 4096, 0.9, fits=False),
        step("b", "tpu-v5p", 4096, 2.0, parallel="fsdp=512 tp=8", strategy="tp", critical=72),
    ]


def test_ranked_per_series_by_days_fastest_first_those_not_fitting_after_with_why():
    lines = training_answer(training_rows(frame(fleet())))
    assert list(lines.columns[: len(TRAINING_COLUMNS)]) == list(TRAINING_COLUMNS)
    assert lines["series"].tolist() == ["a", "a", "a", "a", "b"]
    assert lines["config"].tolist() == [
        "h100 bf16 ×4096 fsdp=4096", "b200 bf16 ×1024 fsdp=1024", "h100 bf16 ×1024 fsdp=1024",
        "b200 bf16 ×4096 fsdp=4096", "tpu-v5p bf16 ×4096 fsdp=512 tp=8",
    ]  # fmt: skip
    assert lines["rank"].tolist()[:3] == [1, 2, 3] and pd.isna(lines["rank"][3])
    assert lines["rank"][4] == 1
    assert lines["miss"].tolist() == ["", "", "", "memory", ""]
    # 15 T tokens at 4 M a step: 3.75 M steps of 1.05 s
    assert lines["days"][0] == pytest.approx(15e12 / 4e6 * 1.05 / 86400)
    assert lines["step_time"][0] == 1.05 and lines["time_basis"][0] == "floor"
    assert lines["compute_bound_batch"].tolist() == [False, True, True, False, True]
    assert "train_cost" not in lines.columns and "cost_rank" not in lines.columns


def test_equal_days_share_a_rank_in_file_order():
    rows = [step("a", "h100", 1024, 2.0), step("a", "b200", 1024, 2.0), step("a", "x", 8, 1.0)]
    lines = training_answer(training_rows(frame(rows)))
    assert lines["hardware"].tolist() == ["x", "h100", "b200"]
    assert lines["rank"].tolist() == [1, 2, 2]


def test_without_train_tokens_ranked_by_time_a_token():
    rows = [step("a", "h100", 1024, 2.0, tokens=2e6, train_tokens=np.nan),
            step("a", "b200", 1024, 3.0, tokens=4e6, train_tokens=np.nan)]  # fmt: skip
    lines = training_answer(training_rows(frame(rows)))
    assert lines["hardware"].tolist() == ["b200", "h100"]  # 0.75 µs a token before 1 µs
    assert lines["days"].isna().all()


def test_the_step_time_is_the_estimate_where_there_is_one_and_days_follow_it():
    rows = [step("a", "h100", 1024, 1.0, estimate=2.0, mfu=0.5), step("a", "b200", 1024, 1.5)]
    lines = training_answer(training_rows(frame(rows)))
    assert lines["hardware"].tolist() == ["b200", "h100"]
    h100 = lines.iloc[1]
    assert h100["time_basis"] == "estimate" and h100["step_time"] == 2.0
    assert h100["t_lower"] == 1.0
    assert h100["days"] == pytest.approx(15e12 / 4e6 * 2.0 / 86400)
    assert h100["mfu"] == pytest.approx(0.25)  # the same FLOPs in twice the time


def test_with_prices_the_run_s_cost_and_its_rank_among_those_fitting():
    rows = [step("a", "h100", 1024, 3.7, cost=3.0), step("a", "b200", 1024, 1.6, cost=9.0),
            step("a", "b200", 4096, 0.9, cost=9.0, fits=False)]  # fmt: skip
    lines = training_answer(training_rows(frame(rows)))
    # the step's cost x the steps: 1024 chips x 3.7 s x $3 an hour x 3.75 M steps
    h100 = lines[lines["hardware"] == "h100"].iloc[0]
    assert h100["train_cost"] == pytest.approx(1024 * 3.7 * 3.0 / 3600 * 15e12 / 4e6)
    assert lines["cost_rank"].tolist()[:2] == [2, 1]  # the slower h100 is cheaper
    assert pd.isna(lines["cost_rank"].iloc[2])


def test_each_line_s_scheme_is_its_parallelism_without_the_degrees_that_grow_with_chips():
    lines = training_answer(training_rows(frame(fleet())))
    assert lines["scheme"].tolist() == ["fsdp"] * 4 + ["fsdp tp=8"]
    assert schemes(np.array(["dp=2;fsdp=64 tp=8  pp=4", ""], dtype=object)).tolist() == [
        "dp fsdp tp=8 pp=4",
        "",
    ]


def test_no_train_row_gives_empty_tables_with_their_columns():
    lines = training_answer(training_rows(pd.DataFrame({"op": [], "mfu": []})))
    assert lines.empty and list(lines.columns) == list(TRAINING_COLUMNS)
    lines = training_answer(merge_training([training_rows(pd.DataFrame({"op": ["matmul"]}))]))
    assert lines.empty


@pytest.mark.parametrize("cuts", [[1], [2, 3, 7], [4, 5, 6, 9]])
def test_partials_of_frames_cut_anywhere_merge_into_the_answer_of_every_row(cuts):
    results = frame(fleet())
    bounds = [0, *cuts, len(results)]
    parts = [
        training_rows(results.iloc[lo:hi].reset_index(drop=True))
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)
    ]
    got = training_answer(merge_training(parts))
    want = training_answer(training_rows(results))
    pd.testing.assert_frame_equal(got, want)


TRAIN = """name,op,model,hardware,dtype,chips,tokens,train_tokens,parallel,compute_efficiency
fsdp,train,llama3-70b,h100|b200,bf16,1024|4096,4e6,15e12,,0.45
tp,train,llama3-70b,h100|tpu-v5p,bf16,4096,4e6,15e12,fsdp=512 tp=8,0.45
"""


def test_a_training_run_s_answer_is_one_line_per_train_row_from_the_results(tmp_path):
    a = pipeline.analyze(write_scenarios(tmp_path, TRAIN))
    lines = a.summary.training
    rows = a.results[a.results["op"].astype(str) == "train"]
    assert len(lines) == len(rows) == 6
    by_name = rows.set_index(rows["name"].astype(str))
    for line in lines.to_dict("records"):
        row = by_name.loc[line["name"]]
        assert line["days"] == pytest.approx(row["days"])
        assert line["mfu"] == pytest.approx(row["mfu"])
        assert line["step_time"] == row["t_lower"]
    for _name, part in lines.groupby("series", sort=False):
        ok = part[part["fits"]]
        assert ok["days"].is_monotonic_increasing


def test_a_training_run_cut_anywhere_merges_into_the_local_answer(tmp_path):
    path = write_scenarios(tmp_path, TRAIN)
    local = pipeline.analyze(path)
    plan = load_scenarios(path, load_catalog(), planned=True).planned
    for cuts in ([1], [2, 3, 5]):
        at = plan.snapped(sorted({0, plan.total, *cuts})).tolist()
        parts = [computed(plan.rows(lo, hi))[2] for lo, hi in zip(at[:-1], at[1:], strict=True)]
        lines = training_answer(merge(parts).training)
        pd.testing.assert_frame_equal(lines, local.summary.training)


def test_categorical_text_columns_give_the_answer_of_plain_text_as_python_strings():
    """training_rows keeps a categorical's codes (no text per row); the answer words them."""
    results = frame(fleet())
    coded = results.copy()
    for c in ("op", "hardware", "parallel", "bound", "collective", "comm_strategy"):
        coded[c] = coded[c].astype("category")
    got = training_answer(training_rows(coded))
    plain = training_answer(training_rows(results))  # its texts pandas' str, here object
    pd.testing.assert_frame_equal(got, plain, check_dtype=False)
    for c in ("hardware", "parallel", "scheme", "time_basis", "bound", "comm_strategy"):
        assert got[c].dtype == object and all(type(v) is str for v in got[c]), c
    assert list(got["scheme"]) == ["fsdp", "fsdp", "fsdp", "fsdp", "fsdp tp=8"]


def test_a_file_of_one_row_series_keeps_its_order_each_line_first_of_its_series():
    rows = [step(f"s{i}", "h100", 1024, t, fits=i != 1) for i, t in enumerate((3.0, 1.0, 2.0))]
    got = training_answer(training_rows(frame(rows)))
    assert list(got["series"]) == ["s0", "s1", "s2"]
    assert got["rank"].tolist() == [1, pd.NA, 1]
    assert list(got["miss"]) == ["", "memory", ""]


def test_rows_of_compares_a_categorical_s_codes_and_text_alike():
    op = pd.Series(["matmul", "train", None, "train"])
    assert rows_of(op, "train").tolist() == [False, True, False, True]
    assert rows_of(op.astype("category"), "train").tolist() == [False, True, False, True]
    assert not rows_of(pd.Series(["matmul"], dtype="category"), "train").any()


def test_the_cost_rank_is_among_the_lines_that_fit_after_the_lines_are_ranked():
    """A line that does not fit has no cost rank, though it sorts after lines that do."""
    rows = [step("a", "h100", 1024, 3.0, cost=2.0, fits=False),
            step("a", "h100", 2048, 1.0, cost=2.0), step("a", "b200", 1024, 2.0, cost=5.0)]  # fmt: skip
    got = training_answer(training_rows(frame(rows)))
    assert list(got["chips"]) == [2048, 1024, 1024]
    assert got["cost_rank"].fillna(0).tolist() == [1, 2, 0]  # 0: none


@pytest.mark.parametrize("one_row_series", [False, True])
def test_the_partial_s_series_codes_give_the_answer_of_the_series_texts(one_row_series):
    """partial() hands training_rows the series it factorized: the answer is the same, cut or
    whole (the codes of several parts are not comparable: the texts decide then)."""
    rows = fleet()
    if one_row_series:
        rows = [{**r, "series": f"s{i}"} for i, r in enumerate(rows)]
    results = frame(rows)
    want = training_answer(training_rows(results))
    got = training_answer(training_rows(results, pd.factorize(results["series"].astype(str))))
    pd.testing.assert_frame_equal(got, want)
    parts = [results.iloc[:3].reset_index(drop=True), results.iloc[3:].reset_index(drop=True)]
    rows_of_parts = [training_rows(p, pd.factorize(p["series"].astype(str))) for p in parts]
    pd.testing.assert_frame_equal(training_answer(merge_training(rows_of_parts)), want)
