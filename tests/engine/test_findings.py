"""engine/findings.py: the findings merged from partitions cut anywhere, inside series too,
are those the local engine finds over every row: the same rows ranked, each with the rows of
its series the finding covers, and the same totals."""

from __future__ import annotations

import pandas as pd
import pytest

import pipeline
from pipeline.engine.findings import merge_findings
from pipeline.engine.partition import compute_partition
from pipeline.model.catalog import load_catalog
from tests.helpers import load_text, write_scenarios

# every finding has rows: memory-bound matmuls, rows too big for HBM, measured times far
# from the prediction (and near it), a collective row
TEXT = """
name,op,hardware,B,D,F,bytes,chips,measured_seconds
small,matmul,h100,1..900,4096,4096,,,1e-3
big,matmul,h100|b200,1..60*2,262144,262144,,,
near,matmul,tpu-v5e,1..400,8192,8192,,,2e-4
ag,all_gather,h100,,,,1000..1000000000*10,8,
"""
TEXT_COLUMNS = {c: str for c in ("name", "series", "hardware", "bound")}


@pytest.mark.parametrize("cuts", [[0, 1], [0, 450, 901, 1300], [0, 5, 200, 899, 1000, 1310]])
def test_findings_merged_from_any_cut_are_the_local_ones(tmp_path, cuts):
    local = pipeline.analyze(write_scenarios(tmp_path, TEXT)).summary.findings
    plan = load_text(tmp_path, load_catalog(), TEXT, planned=True).planned
    cuts = [*cuts, plan.total]
    (tmp_path / "out" / "results").mkdir(parents=True)  # the client makes it, never a task
    parts = [
        compute_partition(*plan.part(lo, hi), k, str(tmp_path / "out"), False)["findings"]
        for k, (lo, hi) in enumerate(zip(cuts[:-1], cuts[1:], strict=True))
    ]
    got = merge_findings(parts, plan.total)
    assert all(local[k] for k in ("comm_total", "nofit_total", "measured_off_total"))
    assert set(got) == set(local)
    for key, want in local.items():
        if isinstance(want, pd.DataFrame):
            pd.testing.assert_frame_equal(
                got[key].astype(TEXT_COLUMNS).reset_index(drop=True),
                want.astype(TEXT_COLUMNS).reset_index(drop=True),
                check_dtype=False,
            )
        else:
            assert got[key] == want, key


def test_a_partition_sends_the_rows_of_its_edge_series(tmp_path):
    plan = load_text(tmp_path, load_catalog(), TEXT, planned=True).planned
    part, a, b = plan.part(100, 905)  # the end of 'small' and the start of 'big'
    (tmp_path / "out" / "results").mkdir(parents=True)
    got = compute_partition(part, a, b, 0, str(tmp_path / "out"), False)["findings"]
    assert got["edges"]["slowest"] == {"small": 800, "big": 5}  # every row is in "slowest"
    assert got["edges"]["nofit"] == {"big": 5}
