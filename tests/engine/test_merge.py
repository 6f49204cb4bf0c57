"""engine/merge.py: partitions' aggregates merged in any arrival order are those of the
whole run: counts, series lines in file order, the slowest scenarios, the findings (a series
cut by partitions counted whole) and the chart grids."""

from __future__ import annotations

import pandas as pd
import pytest

from pipeline.engine.findings import merge_findings
from pipeline.engine.merge import Merged, merge_partition
from pipeline.engine.partition import compute_partition
from pipeline.model.catalog import load_catalog
from tests.helpers import load_text

TEXT = """
name,op,hardware,B,D,F,bytes,chips
a,matmul,h100,1..3000,4096,4096,,
b,matmul,v5e|b200,1..700,8192,8192,,
c,all_gather,h100,,,,1000..1000000000*10,8
"""


@pytest.mark.parametrize("order", [[0, 1, 2, 3], [3, 1, 0, 2]])
def test_merged_partitions_are_the_whole_run(tmp_path, order):
    plan = load_text(tmp_path, load_catalog(), TEXT, planned=True).planned
    for folder in ("whole", "parts"):  # the client makes results/, never a task
        (tmp_path / folder / "results").mkdir(parents=True)
    whole = compute_partition(*plan.part(0, plan.total), 0, str(tmp_path / "whole"), False)
    cuts = [0, 300, 2999, 3900, plan.total]  # series a cut inside its memory-bound rows
    got = [
        compute_partition(*plan.part(lo, hi), k, str(tmp_path / "parts"), False)
        for k, (lo, hi) in enumerate(zip(cuts[:-1], cuts[1:], strict=True))
    ]
    merged = Merged()
    for k in order:
        merge_partition(merged, got[k])
    assert merged.rows == whole["rows"] == plan.total
    pd.testing.assert_frame_equal(
        merged.counts.sort_values(["hardware", "op", "bound"]).reset_index(drop=True),
        whole["counts"].sort_values(["hardware", "op", "bound"]).reset_index(drop=True),
    )
    lines = merged.series_lines()
    assert list(lines.index) == ["a", "b", "c"]  # file order, whatever the arrival order
    pd.testing.assert_frame_equal(lines, whole["lines"], check_dtype=False)
    assert merged.slowest == whole["slowest"]
    found = merge_findings([merged.findings[k] for k in sorted(merged.findings)], merged.rows)
    want = whole["findings"]
    assert found["comm_total"] > 0 and found["comm"]["in_series"].max() > 300  # cut series
    for key in want:
        if key == "edges":
            continue
        if isinstance(want[key], pd.DataFrame):
            text = {c: str for c in ("name", "series", "hardware", "bound")}
            pd.testing.assert_frame_equal(
                found[key].astype(text).reset_index(drop=True),
                want[key].astype(text).reset_index(drop=True),
                check_dtype=False,
            )
        else:
            assert found[key] == want[key], key
    keys = ["chart", "hardware", "bound", "fits", "ix", "iy"]
    pd.testing.assert_frame_equal(
        merged.grids.bins.sort_values(keys).reset_index(drop=True),
        whole["grids"].bins.sort_values(keys).reset_index(drop=True),
        check_dtype=False,
    )
    summary = merged.summary(plan.total, 4)
    assert summary["scenarios"] == plan.total and summary["partitions"] == 4
    assert sum(summary["bounds"].values()) == plan.total
    assert [p["number"] for p in merged.partition_list()] == [0, 1, 2, 3]
