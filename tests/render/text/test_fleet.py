"""The fleet answer in words (render.text.fleet): labels naming what varies, one sentence per
chosen point, one table per fleet series in the order the answer leads with."""

from __future__ import annotations

import pandas as pd
import pytest

import pipeline
from pipeline.render.text.fleet import (
    at_text,
    first_sentences,
    fits_text,
    fleet_answers,
    listed,
    point_labels,
    sentence,
)
from tests.helpers import ROOT


@pytest.fixture(scope="module")
def fleet():
    return pipeline.analyze(ROOT / "scenarios" / "fleet.csv").summary.fleet


def ranked(*rows) -> pd.DataFrame:
    """A ranking of one chosen point, rows (hardware, dtype, chips, t_lower), fastest first."""
    frame = pd.DataFrame(rows, columns=["hardware", "dtype", "chips", "t_lower"])
    return frame.assign(
        series="s", point="critical batch", at="B=64", rank=range(1, len(frame) + 1), model="",
        ratio=frame["t_lower"] / frame["t_lower"].min(), bound="memory", fits=True,
    )  # fmt: skip


def test_labels_name_only_what_varies_in_the_series():
    table = ranked(("b200", "fp8", 1, 1e-5), ("h100", "bf16", 1, 3e-5))
    assert point_labels(table).tolist() == ["b200 fp8", "h100 bf16"]
    table = ranked(("h100", "bf16", 8, 1e-5), ("h100", "bf16", 1, 3e-5))
    assert point_labels(table).tolist() == ["8 chips", "1 chip"]


def test_the_sentence_names_the_fastest_the_runner_up_and_the_slowest():
    table = ranked(("b200", "fp8", 1, 31e-6), ("mi300x", "fp8", 1, 35.34e-6),
                   ("h100", "bf16", 1, 96.1e-6))  # fmt: skip
    table["label"] = point_labels(table)
    assert sentence(table) == (
        "At B = 64 the fastest is b200 fp8, 31.0 µs (memory-bound); mi300x fp8 is 1.14× "
        "slower, h100 bf16 (the slowest of 3) 3.10×."
    )
    two = table.iloc[[0, 1]].assign(t_lower=[31e-6, 31.01e-6], ratio=[1.0, 1.0003])
    assert "mi300x fp8 is as fast (1.00×)" in sentence(two)


def test_ties_and_points_that_do_not_fit_are_said_as_they_are():
    table = ranked(("b200", "fp8", 1, 31e-6), ("b300", "fp8", 1, 31e-6), ("h100", "bf16", 1, 62e-6))
    table["label"] = point_labels(table)
    assert sentence(table) == (
        "At B = 64 b200 fp8 and b300 fp8 tie as the fastest, 31.0 µs (memory-bound); h100 bf16 "
        "is 2.00× slower."
    )
    table["fits"] = [False, True, True]  # the tie is broken by HBM: b300 is the answer
    assert sentence(table) == (
        "At B = 64 the fastest that fits in HBM is b300 fp8, 31.0 µs (memory-bound); b200 fp8 is "
        "as fast but does not fit in HBM; h100 bf16 is 2.00× slower."
    )
    table["fits"] = [False, False, True]
    assert sentence(table) == (
        "At B = 64 the fastest that fits in HBM is h100 bf16, 62.0 µs (memory-bound); b200 fp8 "
        "and b300 fp8 are faster (from 31.0 µs) but do not fit in HBM."
    )


def test_listed_names_a_few_then_counts():
    assert listed(["a"]) == "a"
    assert listed(["a", "b"]) == "a and b"
    assert listed(["a", "b", "c", "d"]) == "a, b, c and d"
    assert listed(list("abcdefg")) == "a, b, c and 4 more"


def test_at_text_reads_as_a_sentence_says_it():
    assert at_text("B=4096") == "B = 4,096"
    assert at_text("D=1024, B=8") == "D = 1,024, B = 8"
    assert at_text("bytes=1000000000") == "bytes = 1.00 GB"
    assert at_text("") == ""


def test_each_fleet_series_gets_a_table_led_by_its_critical_batch(fleet):
    answers = fleet_answers(fleet)
    assert [a["series"] for a in answers] == list(dict.fromkeys(fleet["series"]))
    mlp = answers[0]
    assert [c["point"] for c in mlp["columns"]] == ["first", "critical batch", "last"]
    assert mlp["lead"] == 1 and mlp["sentence"] == mlp["columns"][1]["sentence"]
    lead = fleet[(fleet["series"] == "mlp_bf16") & (fleet["point"] == "critical batch")]
    assert [r["hardware"] for r in mlp["rows"]] == lead["hardware"].tolist()
    ratios = [r["cells"][1]["ratio"] for r in mlp["rows"]]
    assert ratios == sorted(ratios) and ratios[0] == 1.0
    tp = next(a for a in answers if a["series"] == "tp")
    assert [c["point"] for c in tp["columns"]] == ["only"]
    assert tp["sentence"].startswith("The fastest is ")


def test_first_sentences_and_the_cap(fleet):
    pairs = first_sentences(fleet, limit=2)
    assert [s for s, _ in pairs] == ["mlp_bf16", "mlp_fp8"]
    assert all(text.startswith("At B = ") for _, text in pairs)
    assert fleet_answers(fleet.iloc[:0]) == []


def test_with_prices_the_sentence_names_the_cheapest_and_the_least_energy():
    table = ranked(("b200", "fp8", 1, 31e-6), ("mi300x", "fp8", 1, 35.34e-6),
                   ("h100", "bf16", 1, 96.1e-6))  # fmt: skip
    table["label"] = point_labels(table)
    table = table.assign(cost=[6e-8, 2.4e-8, 5e-8], energy=[3.1e-2, 2.9e-2, 6.7e-2])
    table["cost_rank"] = pd.array([3, 1, 2], dtype="Int64")
    table["energy_rank"] = pd.array([2, 1, 3], dtype="Int64")
    assert sentence(table).endswith(
        "h100 bf16 (the slowest of 3) 3.10×; the cheapest that fits is mi300x fp8, 0.400× the "
        "fastest's cost; the least energy, mi300x fp8, 0.935× the fastest's."
    )
    table["cost_rank"] = pd.array([1, 2, 3], dtype="Int64")
    table["energy_rank"] = pd.array([1, 2, pd.NA], dtype="Int64")
    assert sentence(table).endswith(
        "3.10×; the fastest is also the cheapest and uses the least energy."
    )


def test_a_fleet_point_of_model_steps_fits_up_to_its_largest_batch():
    """Issue 43's walk: 'up to B = 185' (max_batch), not the last swept batch's fit."""
    a = pipeline.analyze([{"name": "dec", "op": "transformer", "model": "llama3-70b",
                           "hardware": "h100", "dtype": "bf16|fp8", "chips": "8",
                           "shard": "N", "B": "1..256*2", "T": 1, "S": 8192}])  # fmt: skip
    (answer,) = fleet_answers(a.summary.fleet)
    said = {r["dtype"]: (r["fits_text"], r["fits"]) for r in answer["rows"]}
    assert said["bf16"] == ("up to B = 185", False)  # B = 256 is swept and does not fit
    steps = a.results[(a.results["op"] == "transformer") & (a.results["x_dtype"] == "fp8")]
    assert said["fp8"][0] == f"up to B = {int(steps['max_batch'].iloc[0]):,}"
    assert fits_text("all", "", max_batch=2.0**53) == "every B (to 2^53)"
    assert fits_text("none", "", max_batch=0.0) == "at no batch"
    assert fits_text("up_to", "B=16") == "up to B = 16"  # plain ops: over the sweep
