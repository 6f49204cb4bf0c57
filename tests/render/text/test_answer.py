"""The answer in words (pipeline/render/text/answer.py): the bottom line and the series lines every
output a person reads shows first."""

from __future__ import annotations

import pandas as pd

import pipeline
from pipeline.render.text.answer import (
    bottom_line,
    bound_text,
    calibration_sentence,
    critical_text,
    fits_text,
    meaning,
    series_rows,
    time_text,
)
from tests.helpers import ROOT


def test_bottom_line_of_q1_q5(book):
    assert bottom_line(book.summary.bottom) == (
        "13 series (1,035 scenarios) on 3 chips: 7 compute-bound, 3 memory-bound, "
        "1 network-bound, 2 change along their sweep (2 turn compute-bound as the batch "
        "grows). Slowest: q2_int8_weights_bf16, 11.2 ms. Everything fits in HBM."
    )


def test_bottom_line_says_what_does_not_fit_and_when_nothing_ran():
    a = pipeline.analyze(ROOT / "scenarios" / "collectives.csv")
    text = bottom_line(a.summary.bottom)
    assert text.startswith("15 series (27 scenarios) on 2 chips: 15 network-bound.")
    assert text.endswith("1 series does not fit in HBM.")
    none = pipeline.analyze(
        [{"name": "x", "op": "matmul", "B": 1, "D": 1, "F": 1, "hardware": "h10"}]
    )
    assert bottom_line(none.summary.bottom).startswith("No scenario was computed")


def test_series_rows_word_the_numbers(book):
    rows = {r["series"]: r for r in series_rows(book)}
    q3 = rows["q3_D4096"]
    assert q3["shape"] == "B=1..512 D=4096 F=4096"
    assert q3["time"] == "20.5 µs – 87.2 µs"
    assert q3["bound_text"] == "memory below B = 137, compute from B = 137"
    assert q3["critical"] == "137" and q3["fits"] == "yes"
    q5 = rows["q5_h100_bf16"]
    assert (q5["time"], q5["bound_text"], q5["critical"]) == ("4.45 ms", "compute", "298")
    assert q5["t_min"] == q5["t_max"] == book.summary.lines.at["q5_h100_bf16", "t_max"]


def test_series_rows_are_capped(book):
    assert len(series_rows(book, limit=3)) == 3
    assert [r["series"] for r in series_rows(book, limit=2)] == list(book.summary.lines.index[:2])


def test_words():
    assert time_text(1e-3, 1e-3) == "1.00 ms"
    assert time_text(1e-6, 2.5) == "1.00 µs – 2.50 s"
    assert critical_text(pd.NA, pd.NA) == ""
    assert critical_text(137, 227) == "137 – 227"
    assert fits_text(0, 5) == "yes" and fits_text(5, 5) == "no"
    assert fits_text(2, 5) == "2 of 5 do not"
    line = {"bound": "mixed", "change_dim": "", "compute": 3, "memory": 0, "network": 4}
    assert bound_text(line) == "mixed: 3 compute, 4 network"
    assert set(meaning()) == {"compute", "memory", "network", "mixed"}


def test_the_calibration_sentence_names_it_its_error_and_what_it_did_not_fit():
    from pipeline.render.text.answer import calibration_sentence

    about = {"label": "cal.toml 1a2b", "created": "2026-11-25", "source": "/x/measured.csv",
             "heldout_median": 0.025, "heldout_p90": 0.09, "floor_median": 0.466,
             "floor_p90": 2.5, "unfitted": ["h100 all_gather"],
             "groups": [{"hardware": "h100", "kind": "matmul"}]}  # fmt: skip
    assert calibration_sentence(about) == (
        "Times are floor → estimate: the roofline's floor (t_lower), then t_estimate with "
        "calibration cal.toml 1a2b (2026-11-25, fitted to measured.csv): error 2.5% / 9.0% "
        "held out (the floor's 46.6% / 250.0%), median / p90; not used: h100 all_gather. The "
        "error is max(time / measured, measured / time) - 1."
    )
    assert calibration_sentence({**about, "unfitted": []}).endswith(
        "(the floor's 46.6% / 250.0%), median / p90. The error is max(time / measured, "
        "measured / time) - 1."
    )
    assert calibration_sentence({**about, "groups": []}).startswith(
        "No estimate: calibration cal.toml 1a2b (2026-11-25, fitted to measured.csv) fits no "
        "chip and op kind (h100 all_gather: too few rows"
    )
    assert calibration_sentence(None) is None


def test_a_measured_series_says_its_measured_time_beside_floor_and_estimate():
    rows = [
        {"name": "m", "op": "matmul", "hardware": "h100", "B": 4096, "D": 4096, "F": 4096,
         "measured_seconds": 2.0e-3},
        {"name": "s", "op": "matmul", "hardware": "h100", "B": "1024|2048", "D": 4096,
         "F": 4096, "measured_seconds": 1.0e-3},
        {"name": "u", "op": "matmul", "hardware": "h100", "B": 8, "D": 64, "F": 64},
    ]  # fmt: skip
    plain = {r["series"]: r for r in series_rows(pipeline.analyze(rows))}
    assert plain["m"]["time"] == "139 µs; measured 2.00 ms"
    assert plain["s"]["time"].endswith("; measured 1.00 ms")  # both points measured alike
    assert "measured" not in plain["u"]["time"]  # no measured row: the floor alone
    said = {r["series"]: r for r in series_rows(pipeline.analyze(rows, calibration="published"))}
    assert said["m"]["floor_estimate"].startswith("139 µs → ")
    assert said["m"]["floor_estimate"].endswith("; measured 2.00 ms")
    assert "measured" not in said["m"]["estimate"]


def test_the_published_calibration_is_said_fitted_to_its_repository_and_commit():
    """Found walking the workbook: the sentence took the address's last path part, so the
    published calibration read as 'fitted to published_calibration.py'."""
    said = calibration_sentence(
        pipeline.analyze(
            ROOT / "scenarios" / "q1-q5.csv", calibration="published"
        ).summary.calibration
    )
    assert "fitted to github.com/ai-dynamo/aiconfigurator commit " in said
