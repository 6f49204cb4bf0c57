"""engines/dask/sample.py: the rows a Dask run's report, workbook and charts show: a small plan
whole; a long sweep thinned within its budget, its first, last and small values kept; more
source rows than the budget, evenly spaced ones kept."""

from __future__ import annotations

import numpy as np

from pipeline.catalogs.hardware import load_catalog
from pipeline.engines.dask.sample import sample_plan
from tests.helpers import load_text


def test_a_small_plan_is_kept_whole(tmp_path):
    text = "name,op,hardware,B,D,F\na,matmul,h100,1..64,4096,4096\nb,matmul,b200,8,8,8\n"
    plan = load_text(tmp_path, load_catalog(), text, planned=True).planned
    sample = sample_plan(plan)
    assert sample.total == plan.total == 65
    assert sample.rows(0, 65)["name"].tolist() == plan.rows(0, 65)["name"].tolist()


def test_a_long_sweep_is_thinned_to_its_share_keeping_its_ends(tmp_path):
    text = "name,op,hardware,B,D,F\na,matmul,h100,1..100000,256..65536*2,1|2|3\n"
    plan = load_text(tmp_path, load_catalog(), text, planned=True).planned
    sample = sample_plan(plan, budget=10_000)
    assert plan.total == 2_700_000 and 5_000 < sample.total <= 10_000
    rows = sample.rows(0, sample.total)
    assert set(rows["D"]) == {256 * 2**k for k in range(9)}  # 9 values: kept whole
    assert set(rows["F"]) == {1, 2, 3}
    b = np.unique(rows["B"].to_numpy())
    assert b[0] == 1 and b[-1] == 100_000  # the first and the last
    assert {1, 2, 3, 5, 10} <= set(b.tolist())  # a log-spaced half: where the curve bends
    assert rows["name"].iat[0] == "a[B=1,D=256,F=1]"
    assert rows["series"].eq("a").all()


def test_more_source_rows_than_the_budget_keeps_evenly_spaced_ones(tmp_path):
    text = "name,op,hardware,B,D,F\n" + "".join(
        f"r{i},matmul,h100,{i + 1},8,8\n" for i in range(100)
    )
    plan = load_text(tmp_path, load_catalog(), text, planned=True).planned
    sample = sample_plan(plan, budget=10)
    names = sample.rows(0, sample.total)["name"].tolist()
    assert len(names) == 10 and names[0] == "r0" and names[-1] == "r99"


def test_fleet_points_share_the_budget_it_bounds_the_sample(tmp_path):
    # issue 30: 14 fleet points of a 2.7 M sweep each kept 5,000 rows: 63,504 > 50,000
    text = "name,op,hardware,dtype,B,D,F\nm,matmul,h100|h200|b200|mi300x|gaudi3|tpu-v5e|tpu7x,"
    text += "bf16|fp8,1..7143,256..65536*2,1024|4096|16384\n"
    plan = load_text(tmp_path, load_catalog(), text, planned=True).planned
    sample = sample_plan(plan, budget=50_000)
    assert plan.total > 2_000_000 and 40_000 < sample.total <= 50_000
