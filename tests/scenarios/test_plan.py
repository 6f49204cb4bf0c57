"""scenarios/plan.py: a file checked but not expanded; any range of its expansion built from
the rows it touches is the same rows as the local engine's, with nothing lost or repeated at
a partition boundary (inside a sweep row or between rows)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.catalogs.hardware import load_catalog
from pipeline.scenarios.plan import PLAN_LIMIT
from tests.helpers import load_text

TEXT = """
name,op,hardware,dtype,chips,shard,B,D,F,bytes
one,matmul,h100,bf16,1,,8,16,32,
grid,matmul,v5e,bf16,1,,1..64*2,128|256|512,4096,
fleet,matmul,h100|b200,bf16|fp8,1|2,B,1..9,64,64,
bad,matmul,h10,bf16,1,,8,8,8,
two,matmul,a100,bf16,1,,4,4,4,
ag,all_gather,h100,,8,,,,,1000..1000000*10
"""


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def plain(frame: pd.DataFrame) -> pd.DataFrame:
    """A frame with its categoricals as text, to compare slices built apart."""
    return frame.astype({c: str for c in frame.columns if frame[c].dtype == "category"})


def test_any_partitioning_gives_the_local_expansion_row_for_row(tmp_path, catalog):
    local = load_text(tmp_path, catalog, TEXT)
    planned = load_text(tmp_path, catalog, TEXT, planned=True)
    plan = planned.planned
    assert [str(p) for p in planned.problems] == [str(p) for p in local.problems]
    assert plan.total == len(local.frame) == 1 + 7 * 3 + 2 * 2 * 2 * 9 + 1 + 4
    rng = np.random.default_rng(0)
    for size in (1, 2, 5, 7, 13, plan.total):
        cuts = list(range(0, plan.total, size)) + [plan.total]
        parts = []
        for lo, hi in zip(cuts[:-1], cuts[1:], strict=True):
            part, a, b = plan.part(lo, hi)  # only the rows this range touches, sent alone
            assert len(part.frame) <= (hi - lo) + 1 or size == plan.total
            parts.append(part.rows(a, b))
        joined = pd.concat([plain(p) for p in parts], ignore_index=True)
        pd.testing.assert_frame_equal(joined, plain(local.frame), check_dtype=False)
    for _ in range(20):  # random ranges, boundaries anywhere
        lo, hi = sorted(rng.integers(0, plan.total + 1, 2).tolist())
        part, a, b = plan.part(lo, hi)
        pd.testing.assert_frame_equal(
            plain(part.rows(a, b)),
            plain(local.frame.iloc[lo:hi].reset_index(drop=True)),
            check_dtype=False,
        )


def test_a_huge_sweep_is_planned_by_count_and_built_by_range(tmp_path, catalog):
    loaded = load_text(
        tmp_path,
        catalog,
        "name,op,hardware,B,D,F\nbig,matmul,h100,1..100000000,1..1000,8\n",
        planned=True,
    )
    plan = loaded.planned
    assert plan.total == 100_000_000_000
    part, a, b = plan.part(99_999_999_998, 100_000_000_000)
    rows = part.rows(a, b)
    assert list(rows["name"]) == ["big[B=100000000,D=999]", "big[B=100000000,D=1000]"]
    too_big = load_text(
        tmp_path,
        catalog,
        "name,op,hardware,B,D,F\nhuge,matmul,h100,1..9007199254740992,1..9,8\n",
        planned=True,
    )
    assert too_big.planned.total == 0
    assert [p.reason for p in too_big.problems] == [
        f"expands to {9 * 2**53:,} scenarios, which takes the file past {PLAN_LIMIT:,}, the "
        "most one run counts exactly"
    ]


GROUPED = """
name,op,hardware,B,D,F,group
a,matmul,h100,1..8,64,64,
up,matmul,h100,1..16,64,64,g
down,matmul,h100,1..16,64,64,g
b,matmul,h100,8,64,64,
"""


def test_cuts_never_fall_inside_a_group_and_are_worked_out_one_at_a_time(tmp_path, catalog):
    plan = load_text(tmp_path, catalog, GROUPED, planned=True).planned
    assert plan.total == 8 + 32 + 1
    cuts = plan.cuts(10)  # 10, 20, 30 fall in group g (scenarios 8 to 40): moved to 40
    assert len(cuts) == 6 and [cuts[k] for k in range(6)] == [0, 40, 40, 40, 40, 41]
    assert plan.snapped([0, 8, 9, 39, 40, 41]).tolist() == [0, 8, 40, 41]
    assert [plan.cuts(100)[k] for k in range(2)] == [0, 41]
    huge = load_text(tmp_path, catalog, "name,op,hardware,B,D,F\nx,matmul,h100,1..2000000000,8,8\n",
                     planned=True).planned  # fmt: skip
    cuts = huge.cuts(1000)  # two million partitions: no array of them is built
    assert len(cuts) == 2_000_001 and cuts[1_999_999] == 1_999_999_000 and cuts[2_000_000] == 2e9
