"""group_changes: a comparison's changes grouped by series and cause as people read them, the
scenario edits before what the hardware numbers moved (a comparison's `groups`)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.changes.compare import compare_results
from pipeline.changes.groups import (
    GROUP_COLUMNS,
    PART_COLUMNS,
    origins,
)
from tests.helpers import BOOK_SCENARIOS, analyze_file

EDIT = ("q5_h100_bf16,matmul,512,", "q5_h100_bf16,matmul,128,")


@pytest.fixture(scope="module")
def issue_case(tmp_path_factory, book):
    """Issue 29's case: q1-q5.csv, then tpu-v5e's HBM bandwidth 8.2e11 -> 9e11 (a hardware
    file) and q5_h100_bf16's B 512 -> 128 (an edit of the file)."""
    path = tmp_path_factory.mktemp("edited") / "q1-q5.csv"
    text = BOOK_SCENARIOS.read_text(encoding="utf-8")
    assert text.count(EDIT[0]) == 1
    path.write_text(text.replace(*EDIT), encoding="utf-8")
    hardware = pd.DataFrame([{"name": "tpu-v5e", "hbm_bandwidth": 9e11}])
    new = analyze_file(path, hardware=hardware)
    return compare_results(book.results, new.results)


def _parts(grouped, at: int) -> pd.DataFrame:
    return grouped.parts[grouped.parts["group"] == at].set_index("change")


def test_the_edit_comes_first_then_the_catalog_cause_one_line_per_series(issue_case):
    grouped = issue_case.groups
    groups = grouped.groups
    assert list(groups.columns) == list(GROUP_COLUMNS)
    assert list(grouped.parts.columns) == list(PART_COLUMNS)
    first = groups.iloc[0]
    assert (first["origin"], first["series"], first["causes"], first["hardware"]) == (
        "edit", "q5_h100_bf16", "B 512 → 128", "h100",
    )  # fmt: skip
    own = _parts(grouped, 0)
    assert list(own.index) == ["bound", "t_lower"]  # the flip, then the time
    assert (own.loc["bound", "old"], own.loc["bound", "new"]) == ("compute", "memory")
    assert own.loc["t_lower", "ratio_min"] == pytest.approx(0.5789, abs=1e-4)
    catalog = groups.iloc[1:]
    assert (catalog["origin"] == "catalog").all() and (catalog["hardware"] == "tpu-v5e").all()
    assert (catalog["causes"] == "hbm_bandwidth 8.2e11 → 9e11").all()
    assert catalog["block"].nunique() == 1 and catalog["series"].is_unique
    assert catalog["block_scenarios"].iloc[0] == catalog["scenarios"].sum() == 1030
    assert catalog["block_series"].iloc[0] == len(catalog) == 8
    # the series whose bound moved lead the cause's block, in file order
    assert catalog["series"].tolist()[:3] == ["v5e_critical_intensity", "q3_D4096", "q3_D1024"]


def test_a_sweeps_flips_are_one_part_with_the_stretch_of_the_sweep_that_moved(issue_case):
    grouped = issue_case.groups
    at = int(np.flatnonzero(grouped.groups["series"] == "q3_D4096")[0])
    line = grouped.groups.iloc[at]
    assert (line["scenarios"], line["span"], line["example"]) == (512, "B = 1…512", "q3_D4096[B=1]")
    parts = _parts(grouped, at)
    assert list(parts.index) == ["bound", "t_lower", "critical_batch"]
    flips = parts.loc["bound"]
    assert (flips["old"], flips["new"], flips["scenarios"]) == ("memory", "compute", 14)
    assert (flips["span"], flips["example"]) == ("B = 123…136", "q3_D4096[B=123]")
    times = parts.loc["t_lower"]
    assert (times["scenarios"], times["span"]) == (128, "B = 1…128")
    assert times["ratio_min"] == pytest.approx(8.2 / 9) and times["ratio_max"] < 0.95
    critical = parts.loc["critical_batch"]
    assert (critical["old_min"], critical["old_max"], critical["new_min"]) == (137, 137, 123)


def test_every_change_is_in_one_group_and_order_reads_like_the_groups(issue_case):
    grouped = issue_case.groups
    table = issue_case.table
    assert grouped.groups["scenarios"].sum() == table["name"].nunique()
    assert grouped.parts["scenarios"].sum() == len(table)
    assert sorted(grouped.order) == list(range(len(table)))
    read = table.iloc[grouped.order]
    assert read["name"].tolist()[:2] == ["q5_h100_bf16", "q5_h100_bf16"]
    assert read["change"].tolist()[:2] == ["bound", "t_lower"]


def test_origins_edit_catalog_model_added_removed():
    causes = pd.Series(
        ["B 1 → 2", "hbm_bandwidth 8.2e11 → 9e11", "hbm_bandwidth 1 → 2; D 3 → 4",
         "compute_efficiency 1 → 0.5", "hardware h100 → h200; peak_flops 1 → 2", "",
         "x_dtype bf16 → fp8", "", ""]
    )  # fmt: skip
    change = pd.Series(["bound"] * 7 + ["added", "removed"])
    assert origins(change, causes).tolist() == [
        "edit", "catalog", "edit", "catalog", "edit", "model", "edit", "added", "removed",
    ]  # fmt: skip


def test_a_price_change_alone_is_the_prices_origin_and_with_a_catalog_change_the_catalogs():
    causes = pd.Series(["usd_per_chip_hour 2.5 → 3", "usd_per_chip_hour 2.5 → 3; tdp 700 → 1000",
                        "usd_per_chip_hour 2.5 → 3; B 1 → 2"])  # fmt: skip
    change = pd.Series(["cost"] * 3)
    assert origins(change, causes).tolist() == ["prices", "catalog", "edit"]


def _frame(names, t, series=None, **dims) -> pd.DataFrame:
    frame = pd.DataFrame({"name": names, "hardware": "h100", "bound": "memory", "t_lower": t})
    if series is not None:
        frame["series"] = series
    return frame.assign(**dims)


def test_added_and_removed_points_are_grouped_per_series_with_their_stretch():
    old = _frame([f"s[B={b}]" for b in range(1, 5)], 1.0, "s", B=range(1, 5))
    new = _frame([f"s[B={b}]" for b in range(3, 9)], 1.0, "s", B=range(3, 9))
    grouped = compare_results(old, new).groups
    assert grouped.groups[["origin", "series", "scenarios", "span"]].values.tolist() == [
        ["added", "s", 4, "B = 5…8"], ["removed", "s", 2, "B = 1…2"],
    ]  # fmt: skip


def test_results_without_a_series_make_each_scenario_its_own_and_order_by_file():
    old = _frame(["b", "a", "c"], [1.0, 1.0, 1.0])
    new = _frame(["b", "a", "c"], [2.0, 1.0, 3.0])
    c = compare_results(old, new)
    assert c.table["series"].tolist() == ["b", "c"]
    grouped = c.groups
    assert grouped.groups["series"].tolist() == ["b", "c"]  # the model's: file order
    assert (grouped.groups["origin"] == "model").all() and (grouped.groups["span"] == "").all()


def test_no_changes_give_no_groups(book):
    grouped = compare_results(book.results, book.results).groups
    assert grouped.groups.empty and grouped.parts.empty and len(grouped.order) == 0
    assert list(grouped.groups.columns) == list(GROUP_COLUMNS)


def test_many_series_are_grouped_without_a_loop_per_row():
    n, per = 2_000, 50
    b = np.tile(np.arange(1, per + 1), n)
    series = np.repeat([f"s{i}" for i in range(n)], per)
    names = [f"{s}[B={x}]" for s, x in zip(series, b, strict=True)]
    old = _frame(names, 1.0, series, B=b, hbm_bandwidth=1.0)
    new = _frame(names, np.where(b > 10, 2.0, 1.0), series, B=b, hbm_bandwidth=2.0)
    grouped = compare_results(old, new).groups
    assert len(grouped.groups) == n and (grouped.groups["scenarios"] == per - 10).all()
    assert (grouped.groups["span"] == f"B = 11…{per}").all()
    assert grouped.groups["series"].tolist()[:3] == ["s0", "s1", "s2"]
