"""engines/dask/merge.py: the client keeps each partition's files and Partial as it arrives, in
any order, and merges them in file order with the model's merge."""

from __future__ import annotations

import pandas as pd
import pytest

from pipeline.catalogs.hardware import load_catalog
from pipeline.engines.dask.merge import Merged, merge_partition
from pipeline.engines.dask.partition import compute_partition
from tests.helpers import load_text

TEXT = """
name,op,hardware,B,D,F
a,matmul,h100,1..3000,4096,4096
b,matmul,tpu-v5e|b200,1..700,8192,8192
"""


@pytest.mark.parametrize("order", [[0, 1, 2], [2, 0, 1]])
def test_partitions_merge_in_file_order_whatever_the_arrival(tmp_path, order):
    plan = load_text(tmp_path, load_catalog(), TEXT, planned=True).planned
    for folder in ("whole", "parts"):  # the client makes results/, never a task
        (tmp_path / folder / "results").mkdir(parents=True)
    whole = compute_partition(*plan.part(0, plan.total), 0, str(tmp_path / "whole"), False)
    cuts = [0, 2999, 3100, plan.total]
    got = [
        compute_partition(*plan.part(lo, hi), k, str(tmp_path / "parts"), False)
        for k, (lo, hi) in enumerate(zip(cuts[:-1], cuts[1:], strict=True))
    ]
    merged = Merged()
    for k in order:
        merge_partition(merged, got[k])
    assert merged.rows == plan.total
    assert [p["number"] for p in merged.partition_list()] == [0, 1, 2]
    part = merged.partial(whole["partial"])
    assert list(part.lines.index) == ["a", "b"]
    pd.testing.assert_frame_equal(part.lines, whole["partial"].lines, check_dtype=False)
    assert Merged().partial(whole["partial"]) is whole["partial"]  # no partition: the empty one
