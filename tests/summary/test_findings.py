"""summary/findings.py: the findings of frames cut anywhere, inside series too, merged, are
those found over every row: the same rows ranked, each with the rows of its series the
finding covers, and the same totals; and the worst row per series is pandas' own."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import pipeline
from pipeline.catalogs.hardware import load_catalog
from pipeline.summary.findings import PARTIAL_KEYS, merge_findings, worst_per_series
from pipeline.summary.partial import computed
from tests.helpers import load_text, write_scenarios

# every finding has rows: memory-bound matmuls, rows too big for HBM, measured times far
# from the prediction (and near it), a collective row
TEXT = """
name,op,hardware,B,D,F,bytes,chips,measured_seconds
small,matmul,h100,1..900,4096,4096,,,1e-3
big,matmul,h100|b200,1..60*2,262144,262144,,,
near,matmul,tpu-v5e,1..400,8192,8192,,,2e-4
ag,all_gather,h100,,,,1000..1000000000*10,8,
fast,matmul,h100,1..40,4096,4096,,,1e-6
"""
TEXT_COLUMNS = {c: str for c in ("name", "series", "hardware", "bound")}


def parts_of(tmp_path, cuts: list[int]) -> tuple[list[dict], int]:
    """partial_findings of the frames the plan's scenarios are cut into at `cuts`."""
    plan = load_text(tmp_path, load_catalog(), TEXT, planned=True).planned
    cuts = [*cuts, plan.total]
    frames = [plan.rows(lo, hi) for lo, hi in zip(cuts[:-1], cuts[1:], strict=True)]
    return [computed(frame)[2].findings for frame in frames], plan.total


@pytest.mark.parametrize("cuts", [[0, 1], [0, 450, 901, 1300], [0, 5, 200, 899, 1000, 1310, 1325]])
def test_findings_merged_from_any_cut_are_those_of_every_row(tmp_path, cuts):
    local = pipeline.analyze(write_scenarios(tmp_path, TEXT)).summary.findings
    parts, total = parts_of(tmp_path, cuts)
    got = merge_findings(parts)
    assert got["scenarios"] == total
    assert all(local[k] for k in ("comm_total", "nofit_total", "measured_off_total",
                                  "measured_below_total"))  # fmt: skip
    assert set(got) - set(PARTIAL_KEYS) == set(local)
    for key, want in local.items():
        if isinstance(want, pd.DataFrame):
            pd.testing.assert_frame_equal(
                got[key].astype(TEXT_COLUMNS).reset_index(drop=True),
                want.astype(TEXT_COLUMNS).reset_index(drop=True),
                check_dtype=False,
            )
        else:
            assert got[key] == want, key


def test_merging_is_associative(tmp_path):
    """Merged in any grouping (the client may fold partitions as they come), the same."""
    parts, _ = parts_of(tmp_path, [0, 5, 200, 899, 1000, 1310])
    whole = merge_findings(parts)
    nested = merge_findings([merge_findings(parts[:2]), merge_findings(parts[2:])])
    for key, want in whole.items():
        if isinstance(want, pd.DataFrame):
            pd.testing.assert_frame_equal(nested[key].reset_index(drop=True),
                                          want.reset_index(drop=True))  # fmt: skip
        else:
            assert nested[key] == want, key


def test_a_frame_sends_the_rows_of_its_edge_series(tmp_path):
    plan = load_text(tmp_path, load_catalog(), TEXT, planned=True).planned
    got = computed(plan.rows(100, 905))[2].findings  # the end of 'small', the start of 'big'
    assert got["edges"]["slowest"] == {"small": 800, "big": 5}  # every row is in "slowest"
    assert got["edges"]["nofit"] == {"big": 5}
    assert got["ends"] == ["small", "big"] and got["scenarios"] == 805


@pytest.mark.parametrize("chunk", [4096, 16, 2])  # one argsort; the leading rows first
def test_worst_per_series_is_the_stable_sort_and_first_per_series(chunk):
    """Against the plain pandas statement of it, with ties, NaN and repeated series."""
    rng = np.random.default_rng(7)
    n = 2_000
    table = pd.DataFrame(
        {
            "series": rng.choice([f"s{i}" for i in range(300)], n),
            "value": np.where(rng.random(n) < 0.1, np.nan, rng.integers(0, 50, n).astype(float)),
        }
    )
    sizes = table.groupby("series")["series"].transform("size")
    expected = (
        table.assign(in_series=sizes)
        .sort_values("value", ascending=False, kind="stable")
        .drop_duplicates("series")
        .head(25)
    )
    codes = pd.factorize(table["series"])[0]
    picks, in_series = worst_per_series(table["value"].to_numpy(), codes, 25, chunk)
    assert picks.tolist() == expected.index.tolist()
    assert in_series.tolist() == expected["in_series"].tolist()
    empty = worst_per_series(np.array([]), np.array([], dtype=int), 25)
    assert len(empty[0]) == 0


# measured faster than the floor: a memory-bound matmul whose activations fit H100's L2 (0.7 x
# its floor, as in AIConfigurator's tables), one far too big for any cache, a compute-bound
# one, a small all-reduce of 8 chips under its latency floor; and one above its floor
BELOW = """
name,op,hardware,B,D,F,bytes,chips,link,measured_seconds
l2,matmul,h100,32768,512,32,,,,7.5e-6
huge,matmul,h100,64,1048576,4096,,,,1.0e-4
math,matmul,h100,8192,8192,8192,,,,2.0e-4
ar,all_reduce,h100,,,,32768,8,nvlink,1.0e-6
slow,matmul,h100,32768,512,32,,,,1.0
"""


def test_rows_below_the_floor_are_listed_deepest_first_with_their_likely_cause(tmp_path):
    a = pipeline.analyze(write_scenarios(tmp_path, BELOW))
    t = a.results.set_index("name")
    assert (t.loc[["l2", "huge", "math", "ar"], "measured_over_predicted"] < 1).all()
    found = a.summary.findings
    below = found["measured_below"]
    assert found["measured_below_total"] == 4 and found["measured_below_series"] == 4
    causes = dict(zip(below["name"], below["cause"], strict=True))
    assert causes == {"l2": "cache", "huge": "rates", "math": "rates", "ar": "one_shot"}
    ratio = below["ratio"].to_numpy()
    assert (np.diff(ratio) >= 0).all()  # the farthest under its floor first
    assert ratio == pytest.approx(
        t.loc[below["name"], "measured_over_predicted"].to_numpy(), rel=1e-12
    )


def test_a_row_of_n_ops_below_the_floor_has_the_cause_of_one_op(tmp_path):
    """Found by a review: a row with a `count` compared n ops' bytes with one op's cache and
    n ops' measured time with one op's latency floor, so its cause became "rates"."""
    text = """
name,op,bytes,B,D,F,chips,hardware,link,count,measured_seconds
ar1,all_reduce,1024,,,,8,h100,nvlink,1,3e-06
ar100,all_reduce,1024,,,,8,h100,nvlink,100,3e-04
mm1,matmul,,32768,512,32,,h100,,1,7.4368e-06
mm100,matmul,,32768,512,32,,h100,,100,7.4368e-04
"""
    below = pipeline.analyze(write_scenarios(tmp_path, text)).summary.findings["measured_below"]
    causes = dict(zip(below["name"], below["cause"], strict=True))
    assert causes == {"ar1": "one_shot", "ar100": "one_shot", "mm1": "cache", "mm100": "cache"}
