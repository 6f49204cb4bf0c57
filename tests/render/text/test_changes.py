"""group_lines: the grouped changes worded once for changes.html, the report and the workbook:
origins in reading order, cause blocks, a line per series with its parts."""

from __future__ import annotations

import pandas as pd

from pipeline.changes.compare import compare_results
from pipeline.render.text.changes import group_lines, origin_titles


def _lines(old: pd.DataFrame, new: pd.DataFrame, limit=None) -> dict:
    return group_lines(compare_results(old, new).groups, limit)


def _sweep(t, bound="memory", fits=True, critical=None, peak=1e15) -> pd.DataFrame:
    return pd.DataFrame(
        {"name": [f"s[B={b}]" for b in range(1, 5)], "series": "s", "hardware": "h100",
         "bound": bound, "fits": fits, "critical_batch": critical, "t_lower": t, "B": range(1, 5),
         "peak_flops": peak}
    )  # fmt: skip


def test_a_line_per_series_its_parts_worded_with_where_they_moved():
    old = _sweep([1e-3] * 4, critical=[240.0] * 4)
    new = _sweep([1e-3, 1e-3, 2e-3, 3e-3], bound=["memory", "memory", "compute", "compute"],
                 fits=[True, True, True, False], critical=[200.0, 200, 200, 210],
                 peak=2e15)  # fmt: skip
    (origin,) = _lines(old, new)["origins"]
    assert (origin["origin"], origin["title"]) == ("catalog", origin_titles()["catalog"])
    (block,) = origin["blocks"]
    assert block["cause"] == "h100 peak_flops 1e15 → 2e15"
    (line,) = block["lines"]
    assert (line["series"], line["scenarios"], line["span"], line["example"]) == (
        "s",
        4,
        "B = 1…4",
        "",
    )
    worded = [(p["kind"], p["text"], p["where"]) for p in line["parts"]]
    assert worded == [
        ("bound", "memory → compute", "2 of 4: B = 3…4"),
        ("fits", "fits → does not fit", "1 of 4"),
        ("t_lower", "time 2.00× – 3.00×", "2 of 4: B = 3…4"),
        ("critical_batch", "critical batch 240 → 200 – 210", ""),
    ]
    assert line["text"].startswith("memory → compute (2 of 4: B = 3…4); fits → does not fit")


def test_a_critical_batch_that_appears_and_a_single_scenario():
    old = pd.DataFrame({"name": ["x"], "hardware": "h100", "bound": "memory",
                        "critical_batch": [None], "t_lower": 1.0, "B": 8})  # fmt: skip
    new = old.assign(critical_batch=259.0, B=16)
    (origin,) = _lines(old, new)["origins"]
    line = origin["blocks"][0]["lines"][0]
    assert (origin["origin"], origin["blocks"][0]["cause"]) == ("edit", "B 8 → 16")
    assert line["text"] == "critical batch — → 259" and line["hardware"] == "h100"


def test_a_fleet_series_names_its_chips_and_the_limit_says_the_rest():
    old = pd.DataFrame({"name": ["f[hardware=h100]", "f[hardware=h200]", "g"], "series":
                        ["f", "f", "g"], "hardware": ["h100", "h200", "h100"], "bound": "memory",
                        "t_lower": 1.0, "D": 1})  # fmt: skip
    new = old.assign(D=2, t_lower=2.0)
    everything = _lines(old, new)
    (block,) = everything["origins"][0]["blocks"]
    assert [line["hardware"] for line in block["lines"]] == ["2 chips", "h100"]
    assert block["series"] == "2 series"
    capped = _lines(old, new, limit=1)
    assert (capped["groups"], capped["shown"], capped["more"]) == (2, 1, 1)
