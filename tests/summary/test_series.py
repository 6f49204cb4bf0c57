"""Series, the unit people read (pipeline/summary/series.py): checked against the results they
summarize, and against the book where a sweep turns compute-bound."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import pipeline
from pipeline.summary.series import bottom_line, series_lines
from pipeline.summary.turns import MIXED
from tests.helpers import ROOT

COLLECTIVES = ROOT / "scenarios" / "collectives.csv"


@pytest.fixture(scope="module")
def lines(book) -> pd.DataFrame:
    return book.summary.lines


def test_one_line_per_source_row_in_file_order(book, lines):
    series = book.results["series"].astype(str)
    assert list(lines.index) == list(pd.unique(series))
    assert lines["scenarios"].sum() == len(book.results)
    assert (lines["scenarios"] == series.value_counts().reindex(lines.index)).all()


def test_times_are_min_and_max_of_the_series_rows(book, lines):
    """The series table against results.csv: t_lower's min and max per series."""
    results = book.results
    grouped = results.groupby(results["series"].astype(str), sort=False)["t_lower"]
    np.testing.assert_array_equal(lines["t_min"], grouped.min().reindex(lines.index))
    np.testing.assert_array_equal(lines["t_max"], grouped.max().reindex(lines.index))


def test_bound_counts_and_label(book, lines):
    results = book.results
    counts = pd.crosstab(results["series"].astype(str), results["bound"].astype(str))
    for b in ("compute", "memory"):
        assert (lines[b] == counts[b].reindex(lines.index).fillna(0)).all()
    single = lines[lines["scenarios"] == 1]
    assert (single["bound"] != MIXED).all()
    assert lines.loc["q5_h100_bf16", "bound"] == "compute"
    assert lines.loc["q3_D4096", "bound"] == MIXED


def test_a_batch_sweep_turns_compute_bound_at_its_critical_batch(book, lines):
    """Book Q3: the v5e matmul sweep over B turns compute-bound at the critical batch; the
    series says where, and that point is the rows' exact critical_batch."""
    results = book.results
    for name in ("q3_D4096", "q3_D1024"):
        line = lines.loc[name]
        rows = results[results["series"].astype(str) == name]
        critical = int(rows["critical_batch"].iloc[0])
        assert line["change_dim"] == "B" and int(line["change_at"]) == critical
        b = rows["B"].to_numpy(dtype=float)
        bound = rows["bound"].astype(str).to_numpy()
        assert (bound[b >= critical] == "compute").all()
        assert (bound[b < critical] == "memory").all()


def test_no_change_point_where_the_sweep_is_not_of_the_batch():
    rows = [
        {
            "name": "overD",
            "op": "matmul",
            "B": 256,
            "D": "64..65536*2",
            "F": 4096,
            "hardware": "v5e",
        }
    ]
    line = pipeline.analyze(rows).summary.lines.loc["overD"]
    assert line["change_dim"] == "" and pd.isna(line["change_at"])


def test_collectives_carry_their_size(tmp_path):
    a = pipeline.analyze(COLLECTIVES)
    lines = a.summary.lines
    sweep = lines.loc["v5e_allgather_message_sweep"]
    assert (sweep["bytes_min"], sweep["bytes_max"]) == (1e3, 1e9)
    assert sweep["scenarios"] == 7 and sweep["bound"] == "network"
    assert lines.loc["v5e_allgather_16GB_16", "not_fitting"] == 1


def test_bottom_line_numbers(book, lines):
    bottom = bottom_line(lines, len(book.results))
    assert bottom["series"] == 13 and bottom["scenarios"] == 1035 and bottom["chips"] == 3
    assert sum(bottom["bounds"].values()) == 13
    assert bottom["changing"] == 2
    slowest = book.results["t_lower"].idxmax()
    assert bottom["slowest"] == book.results.at[slowest, "series"]
    assert bottom["slowest_time"] == book.results.at[slowest, "t_lower"]


def test_no_rows_no_lines(book):
    empty = series_lines(book.results.head(0), book.facts.head(0))
    assert empty.empty and bottom_line(empty, 0)["series"] == 0


def test_lines_of_consecutive_parts_merge_into_the_lines_of_the_whole():
    """The Dask engine's partitions: any cut, fleet series across cuts, bounds that change."""
    from pipeline.summary.series import merge_lines

    a = pipeline.analyze(ROOT / "scenarios" / "fleet.csv")
    results, facts = a.results, a.facts
    whole = series_lines(results, facts)
    for cuts in ([0, 5, 77, 200, 201, 300, len(results)], [0, len(results)], [0, 1, len(results)]):
        parts = [
            series_lines(results.iloc[x:y].reset_index(drop=True),
                         facts.iloc[x:y].reset_index(drop=True))
            for x, y in zip(cuts[:-1], cuts[1:], strict=True)
        ]  # fmt: skip
        pd.testing.assert_frame_equal(merge_lines(parts), whole, check_dtype=False)
    assert merge_lines([]).empty


def test_each_chip_of_a_sweep_has_its_own_line_merged_over_any_cut():
    """chip_lines: per sweep series and chip, the line of that chip's rows only (a fleet
    series' own line on each chip), single rows left out; consecutive parts merge into the
    lines of the whole, a collective's knee range widened with them."""
    from pipeline.summary.series import chip_lines, merge_chip_lines

    a = pipeline.analyze(ROOT / "scenarios" / "fleet.csv")
    results, facts = a.results, a.facts
    whole = chip_lines(results, facts)
    line = whole.loc[("mlp_bf16", "h100")]
    mine = results[(results["series"] == "mlp_bf16") & (results["hardware"] == "h100")]
    assert (line["hardware"], line["scenarios"]) == ("h100", len(mine)) == ("h100", 13)
    assert (line["t_min"], line["t_max"]) == (mine["t_lower"].min(), mine["t_lower"].max())
    assert whole.index.names == ["series", "hardware"]
    assert whole.loc["mlp_bf16"].index.tolist()[:3] == ["h100", "h200", "b200"]  # file order
    assert set(whole.index.get_level_values(0)) <= set(a.summary.series.index)  # sweeps only
    for cuts in ([0, 5, 77, 200, 201, 300, len(results)], [0, len(results)], [0, 1, len(results)]):
        parts = [
            chip_lines(results.iloc[x:y].reset_index(drop=True),
                       facts.iloc[x:y].reset_index(drop=True))
            for x, y in zip(cuts[:-1], cuts[1:], strict=True)
        ]  # fmt: skip
        pd.testing.assert_frame_equal(merge_chip_lines(parts), whole, check_dtype=False)
    mix = pipeline.analyze(ROOT / "scenarios" / "collectives.csv")
    knees = chip_lines(mix.results, mix.facts)[["knee_min", "knee_chip_max"]].dropna()
    assert len(knees) and (knees["knee_min"] > 0).all()
    empty = chip_lines(results.head(0), facts.head(0))
    assert empty.empty and list(merge_chip_lines([empty, empty]).columns) == list(empty.columns)
