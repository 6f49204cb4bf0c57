"""compare_results: every kind of change, matched by name, with the inputs that caused it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import pipeline
from pipeline.changes.compare import COLUMNS, KINDS, compare_results, merge_changes
from pipeline.errors import InvalidResults
from tests.helpers import BOOK_SCENARIOS

TWO_CHIP = dict(op="matmul", B=4096, F=16384, hardware="v5e", chips=2, shard="D")


def _results(rows, **kw) -> pd.DataFrame:
    return pipeline.analyze(rows, **kw).results


def test_the_chapters_two_chip_example_flips_network_to_compute():
    old = _results([dict(name="tp2", D=8754, **TWO_CHIP)])
    new = _results([dict(name="tp2", D=8756, **TWO_CHIP)])
    assert old.loc[0, "bound"] == "network" and new.loc[0, "bound"] == "compute"
    c = compare_results(old, new)
    flip = c.table[c.table["change"] == "bound"].iloc[0]
    assert (flip["name"], flip["hardware"], flip["old"], flip["new"]) == (
        "tp2", "tpu-v5e", "network", "compute",
    )  # fmt: skip
    assert flip["causes"] == "D 8754 → 8756"
    assert c.counts["bound"] == 1 and c.counts["critical_batch"] == 1  # appeared: 259
    cb = c.table[c.table["change"] == "critical_batch"].iloc[0]
    assert (cb["old"], cb["new"]) == ("", "259")
    assert c.counts["t_lower"] == 0  # 8756 / 8754 is well inside 5 %
    assert c.changed and c.failing(["bound"]) and not c.failing(["fits", "t_lower"])


def test_added_removed_fits_and_time_changes():
    old = _results(
        [
            dict(name="gone", op="matmul", B=8, D=8192, F=8192, hardware="h100"),
            dict(name="fit", op="matmul", B=8, D=8192, F=8192, hardware="h100"),
            dict(name="slow", op="matmul", B=8, D=8192, F=8192, hardware="h100"),
            dict(name="same", op="matmul", B=8, D=8192, F=8192, hardware="h100"),
        ]
    )
    new = _results(
        [
            dict(name="fit", op="matmul", B=8, D=8192, F=8_000_000, hardware="h100"),
            dict(
                name="slow", op="matmul", B=8, D=8192, F=8192, hardware="h100", hbm_efficiency=0.5
            ),  # fmt: skip
            dict(name="same", op="matmul", B=8, D=8192, F=8192, hardware="h100"),
            dict(name="born", op="matmul", B=8, D=8192, F=8192, hardware="h100"),
        ]
    )
    c = compare_results(old, new)
    assert list(c.table.columns) == list(COLUMNS)
    by = {k: c.table[c.table["change"] == k] for k in KINDS}
    assert by["added"]["name"].tolist() == ["born"]
    assert by["removed"]["name"].tolist() == ["gone"]
    assert by["fits"][["name", "old", "new"]].values.tolist() == [["fit", "True", "False"]]
    slow = by["t_lower"].set_index("name").loc["slow"]
    assert slow["ratio"] == pytest.approx(2.0)
    assert slow["causes"] == "hbm_efficiency 1 → 0.5"
    assert float(slow["new"]) == pytest.approx(2 * float(slow["old"]))
    assert "same" not in c.table["name"].tolist()
    assert c.compared == 3 and c.skipped == ()
    assert set(c.counts) == set(KINDS)


def test_every_numeric_change_has_its_ratio_new_over_old():
    old = pd.DataFrame({"name": ["a", "b", "c", "d"], "critical_batch": [310, np.nan, 0, 7],
                        "t_lower": [1.0, 1.0, 0.0, 2.0]})  # fmt: skip
    new = pd.DataFrame({"name": ["a", "b", "c", "d"], "critical_batch": [348, 259, 4, 7],
                        "t_lower": [1.0, 1.0, 0.0, 3.0]})  # fmt: skip
    c = compare_results(old, new)
    cb = c.table[c.table["change"] == "critical_batch"].set_index("name")["ratio"]
    assert cb["a"] == pytest.approx(348 / 310)
    assert np.isnan(cb["b"]) and cb["c"] == np.inf  # from no critical batch, from 0
    assert c.table.set_index(["name", "change"]).at[("d", "t_lower"), "ratio"] == 1.5


def test_threshold_is_a_ratio_band():
    old = pd.DataFrame({"name": ["a", "b", "c"], "t_lower": [1.0, 1.0, 0.0]})
    new = pd.DataFrame({"name": ["a", "b", "c"], "t_lower": [1.049, 1.051, 0.0]})
    c = compare_results(old, new, threshold=0.05)
    assert c.table["name"].tolist() == ["b"]
    assert compare_results(old, new, threshold=0.06).counts["t_lower"] == 0
    assert compare_results(old, new, threshold=0.0).counts["t_lower"] == 2


def test_identical_runs_have_no_changes(book):
    c = compare_results(book.results, book.results)
    assert not c.changed and c.table.empty and c.groups.groups.empty and not len(c.groups)
    assert c.compared == len(book.results)
    assert list(c.table.columns) == list(COLUMNS)


def test_a_hardware_override_is_the_cause_of_every_row_it_moved(book):
    hw = pd.DataFrame([{"name": "tpu-v5e", "hbm_bandwidth": 8.2e11 * 1.5}])
    new = pipeline.analyze(BOOK_SCENARIOS, hardware=hw).results
    c = compare_results(book.results, new)
    moved = c.table[c.table["hardware"] == "tpu-v5e"]
    assert len(moved) > 100
    assert (moved["causes"] == "hbm_bandwidth 8.2e11 → 1.23e12").all()
    assert c.table[c.table["hardware"] != "tpu-v5e"].empty
    # grouped once, here: the renderers read c.groups (changes.groups), never group again
    groups = c.groups.groups
    assert set(groups["origin"]) == {"catalog"} and set(groups["hardware"]) == {"tpu-v5e"}
    assert set(groups["causes"]) == {"hbm_bandwidth 8.2e11 → 1.23e12"}
    assert groups["scenarios"].sum() == moved["name"].nunique()


def test_duplicate_names_are_an_error_naming_them():
    old = pd.DataFrame({"name": ["a", "b", "a", "c", "c"], "t_lower": 1.0})
    with pytest.raises(
        InvalidResults, match=r"baseline results name 2 scenario\(s\) more than once \('a', 'c'\)"
    ):
        compare_results(old, old.drop_duplicates("name"))
    with pytest.raises(InvalidResults, match="new results have no 'name' column"):
        compare_results(old.drop_duplicates("name"), pd.DataFrame({"t_lower": [1.0]}))


def test_an_input_column_one_side_lacks_is_skipped_and_said(book):
    old = book.results.drop(columns=["link_bandwidth", "D"])
    c = compare_results(old, book.results)
    assert c.skipped == ("D", "link_bandwidth") and not c.changed


def test_a_result_column_one_side_lacks_is_an_error(book):
    with pytest.raises(InvalidResults, match="the new results have no 'fits' and 't_lower' col"):
        compare_results(book.results, book.results.drop(columns=["t_lower", "fits"]))
    with pytest.raises(InvalidResults, match="the baseline results have no 'bound' column"):
        compare_results(book.results.drop(columns=["bound"]), book.results)


def test_text_where_a_number_belongs_is_an_error_naming_the_row():
    old = pd.DataFrame({"name": ["a", "b"], "t_lower": ["1e-3", "fast"], "fits": ["True", ""]})
    new = pd.DataFrame({"name": ["a", "b"], "t_lower": [1e-3, 2e-3], "fits": [True, None]})
    with pytest.raises(InvalidResults, match="the baseline results, row 2: column t_lower: 'fast'"):
        compare_results(old, new)
    old["t_lower"] = ["1e-3", "nan"]  # numbers as text, a missing one: read as numbers
    assert compare_results(old, new).table["name"].tolist() == ["b"]
    with pytest.raises(InvalidResults, match="row 1: column fits: 'maybe' is not True or False"):
        compare_results(old.assign(fits=["maybe", ""]), new)


def test_a_repeated_column_is_an_error():
    frame = pd.DataFrame([["a", 1.0, 2.0]], columns=["name", "t_lower", "t_lower"])
    with pytest.raises(InvalidResults, match=r"the column 't_lower' twice \(columns 2 and 3\)"):
        compare_results(frame, frame)


@pytest.mark.parametrize("bad", [float("nan"), -0.1, 1, True, "0.05", None])
def test_threshold_must_be_a_number_in_0_1(bad):
    frame = pd.DataFrame({"name": ["a"], "t_lower": [1.0]})
    with pytest.raises((TypeError, ValueError), match=r"threshold must be a number in \[0, 1\)"):
        compare_results(frame, frame, threshold=bad)


def test_columns_read_back_as_text_compare_equal():
    old = pd.DataFrame({"name": ["a"], "bound": ["compute"], "fits": [True], "D": [8192.0],
                        "critical_batch": pd.array([None], dtype="Int64")})  # fmt: skip
    new = pd.DataFrame({"name": ["a"], "bound": pd.Categorical(["compute"]),
                        "fits": pd.array([True], dtype="boolean"), "D": pd.array([8192], "Int64"),
                        "critical_batch": [np.nan]})  # fmt: skip
    assert not compare_results(old, new).changed


def test_failing_rejects_an_unknown_kind(book):
    c = compare_results(book.results, book.results)
    with pytest.raises(ValueError, match="unknown change kind 'bond'"):
        c.failing(["bond"])


def test_each_change_names_its_series_and_its_place_on_the_sweep(book):
    new = book.results.assign(t_lower=book.results["t_lower"] * 2)
    c = compare_results(book.results.drop(columns=["series"]), new)
    assert c.skipped == ()  # series is read to group by, never compared
    sweep = c.table[c.table["name"].str.startswith("q3_D4096[")]
    assert (sweep["series"] == "q3_D4096").all() and len(sweep) == 512
    assert (c.table.loc[c.table["name"] == "dot_product", "series"] == "dot_product").all()
    assert list(c.points.columns) == ["position", "B", "D", "F", "N", "chips"]
    points = c.points.loc[sweep.index]
    assert points["B"].tolist() == list(range(1, 513)) and (points["D"] == 4096).all()
    assert points["position"].is_monotonic_increasing


def test_a_model_change_is_named_as_the_cause_before_the_dims_it_sets():
    """Issue 31: a transformer row moved to another model names the model, then the dims."""
    import pipeline

    row = {"name": "d", "op": "transformer", "hardware": "h100", "B": 32, "T": 1, "S": 2048}
    old = pipeline.analyze([{**row, "model": "llama3-8b"}])
    new = pipeline.analyze([{**row, "model": "mistral-7b"}])
    table = pipeline.compare(old, new).changes.table
    assert set(table["name"]) == {"d/lm_head"}  # the vocabulary: 128,256 -> 32,000
    assert set(table["causes"]) == {"model llama3-8b → mistral-7b; V 128256 → 32000"}


def test_a_total_without_a_cause_of_its_own_says_its_rows_cause():
    rows = [
        {"name": "up", "op": "matmul", "hardware": "h100", "B": "8|64", "D": 4096, "F": 14336,
         "count": 32, "group": "mlp"},
        {"name": "down", "op": "BF,FD->BD", "hardware": "h100", "B": "8|64", "D": 4096,
         "F": 14336, "count": 32, "group": "mlp"},
        {"name": "s", "op": "transformer", "model": "llama3-8b", "hardware": "h100", "B": 8,
         "T": 1, "S": 1024},
    ]  # fmt: skip
    old = pipeline.analyze(rows).results
    rows[1]["count"] = 16
    rows[2]["S"] = 2048
    new = pipeline.analyze(rows).results
    causes = compare_results(old, new).table.set_index("name")["causes"]
    assert causes["mlp[B=8]"] == "in its rows: count 32 → 16"  # from `down`, its row
    assert causes["down[B=64]"] == "count 32 → 16" and "up[B=8]" not in causes
    assert causes["s"] == "S 1024 → 2048"  # a step's own input is its cause


def _series_frame(names, t, series, **dims) -> pd.DataFrame:
    frame = pd.DataFrame({"name": names, "hardware": "h100", "bound": "memory", "t_lower": t})
    return frame.assign(series=series, **dims)


def test_merged_inputs_share_a_cause_and_keep_their_series_apart():
    old = _series_frame(["m[B=1]", "m[B=2]"], 1.0, "m", B=[1, 2], hbm_bandwidth=1.0)
    new = _series_frame(["m[B=1]", "m[B=2]"], 2.0, "m", B=[1, 2], hbm_bandwidth=2.0)
    edited = _series_frame(["m[B=1]", "m[B=2]"], 2.0, "m", B=[1, 2], D=[7, 7], hbm_bandwidth=1.0)
    one, two = compare_results(old, new), compare_results(old.assign(D=5), edited)
    merged = merge_changes([("first", one), ("second", two)])
    assert merged.counts["t_lower"] == 4 and merged.compared == 4
    assert merged.points["position"].tolist() == [0, 1, 2, 3]
    groups = merged.groups.groups
    assert groups[["input", "origin", "series", "causes"]].values.tolist() == [
        ["second", "edit", "m", "D 5 → 7"], ["first", "catalog", "m", "hbm_bandwidth 1 → 2"],
    ]  # fmt: skip
    with pytest.raises(ValueError, match="at least one"):
        merge_changes([])


def _prices(usd: float) -> pd.DataFrame:
    return pd.DataFrame({"hardware": ["h100"], "usd_per_chip_hour": [usd], "source": ["q"],
                         "date": ["2026-11-01"]})  # fmt: skip


COSTED = [dict(name="m", op="matmul", B=4096, D=8192, F=8192, hardware="h100")]


def test_a_price_rise_is_a_cost_change_caused_by_the_price():
    old = _results(COSTED, prices=_prices(2.0))
    new = _results(COSTED, prices=_prices(3.0))
    c = compare_results(old, new)
    assert c.counts["cost"] == 1 and c.counts["t_lower"] == 0
    row = c.table[c.table["change"] == "cost"].iloc[0]
    assert row["causes"] == "usd_per_chip_hour 2 → 3"
    assert row["ratio"] == pytest.approx(1.5)
    assert c.failing(["cost"])
    # a price cut is no cost change: --fail-on cost fails on a rise only
    back = compare_results(new, old)
    assert back.counts["cost"] == 0 and not back.failing(["cost"])


def test_a_tdp_rise_is_an_energy_change_caused_by_the_tdp(catalog):
    from dataclasses import replace

    hotter = replace(catalog, chips=catalog.chips.assign(tdp=catalog.chips["tdp"] * 1.2))
    old, new = _results(COSTED), _results(COSTED, hardware=hotter)
    c = compare_results(old, new)
    assert c.counts["energy"] == 1 and c.counts["cost"] == 0
    row = c.table[c.table["change"] == "energy"].iloc[0]
    assert row["causes"].startswith("tdp 700 → 840")
    assert row["ratio"] == pytest.approx(1.2)


def test_prices_given_or_left_out_are_a_cost_change_a_nightly_notices():
    priced, bare = _results(COSTED, prices=_prices(2.0)), _results(COSTED)
    assert compare_results(priced, bare).counts["cost"] == 1
    assert compare_results(bare, priced).counts["cost"] == 1
    assert compare_results(bare, bare).counts["cost"] == 0
