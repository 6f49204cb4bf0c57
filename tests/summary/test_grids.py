"""summary/grids.py: the rooflines' points binned on one fixed log grid, per chart, chip,
bound and fit: frames' grids add up to the whole's; a collective row is counted, not drawn;
the rows a roofline and a network roofline place."""

from __future__ import annotations

import numpy as np
import pandas as pd

import pipeline
from pipeline.model.roofs import chip_roofs
from pipeline.summary.grids import GRID_STEPS, HIDDEN, KEYS, _bin, chart_grids, talks, with_flops
from tests.helpers import write_scenarios

TEXT = """
name,op,hardware,B,D,F,bytes,chips,shard,compute_efficiency
a,matmul,h100,1..4000,1024|8192,4096,,,,
d,matmul,h100,1..1000,4096,4096,,,,0.5
tp,matmul,h100,64,4096,4096,,8,D,
ag,all_gather,h100,,,,1000..1000000*10,8,,
"""


def frame_of(tmp_path) -> pd.DataFrame:
    analysis = pipeline.analyze(write_scenarios(tmp_path, TEXT))
    return pd.concat([analysis.results, analysis.facts], axis=1)


def test_grids_of_parts_add_up_to_the_whole(tmp_path):
    frame = frame_of(tmp_path)
    whole = chart_grids(frame)
    added = chart_grids(frame.iloc[:3000]) + chart_grids(frame.iloc[3000:])
    for a, b, keys in ((whole.bins, added.bins, KEYS),
                       (whole.derated, added.derated, ["chart", "hardware", "compute", "rate"])):  # fmt: skip
        pd.testing.assert_frame_equal(
            a.sort_values(keys).reset_index(drop=True),
            b.sort_values(keys).reset_index(drop=True),
            check_dtype=False,
        )
    collective = whole.bins[whole.bins["chart"] == "collective"]
    assert collective["scenarios"].sum() == 4 and (collective["ix"] == HIDDEN).all()
    roofline = whole.bins[whole.bins["chart"] == "roofline"]
    assert roofline["scenarios"].sum() == 9_001  # every op with FLOPs, once
    assert whole.bins.loc[whole.bins["chart"] == "network", "scenarios"].sum() == 1  # tp
    assert whole.derated["rows"].sum() == 1000  # d, on the roofline chart


def test_the_rows_each_chart_places(tmp_path):
    frame = frame_of(tmp_path)
    names = frame["series"].to_numpy()
    assert set(names[~with_flops(frame)]) == {"ag"}  # a collective row has no FLOPs
    assert set(names[talks(frame)]) == {"tp"}  # an op that communicates over 8 chips


def test_a_bin_is_a_sixty_fourth_of_a_decade_and_nothing_else_is_drawn():
    x = np.array([1.0, 10.0, 0.0, np.nan, 1e3])
    y = np.array([1.0, 1e12, 5.0, 1.0, np.inf])
    ix, iy = _bin(x, y)
    assert ix.tolist()[:2] == [0, GRID_STEPS] and iy.tolist()[:2] == [0, 12 * GRID_STEPS]
    assert (ix[2:] == HIDDEN).all() and (iy[2:] == HIDDEN).all()  # zero, NaN, inf: hidden


def test_the_roofs_of_parts_are_the_whole_runs(tmp_path):
    """A chip's roofs come from every row's rates (Grids.values): the rows' own HBM bandwidth
    (no catalog number) is the whole run's median, not a part's; its derated roofs count every
    part's rows."""
    text = """name,op,hardware,B,D,F,hbm_bandwidth,compute_efficiency
lo,matmul,h100,1..5,4096,4096,1e12,0.5
hi,matmul,h100,1..4,4096,4096,3e12,0.5
"""
    frame = frame_of_text(tmp_path, text)
    record = {"name": "h100", "peak_bf16": 9.89e14}
    whole = chip_roofs(*_tables(chart_grids(frame)), record)
    added = chip_roofs(*_tables(chart_grids(frame.iloc[:5]) + chart_grids(frame.iloc[5:])), record)
    assert whole == added
    assert whole.hbm.slopes == (("hbm", 1e12),)  # 5 rows at 1e12, 4 at 3e12
    assert chip_roofs(*_tables(chart_grids(frame.iloc[5:])), record).hbm.slopes == (("hbm", 3e12),)
    (roof,) = whole.hbm.derated
    assert (roof.compute, roof.rows) == (0.5, 9)


def frame_of_text(tmp_path, text: str) -> pd.DataFrame:
    analysis = pipeline.analyze(write_scenarios(tmp_path, text))
    return pd.concat([analysis.results, analysis.facts], axis=1)


def _tables(grids) -> tuple[pd.DataFrame, pd.DataFrame]:
    return grids.values, grids.derated


def test_counts_too_many_for_one_key_are_counted_alike(tmp_path, monkeypatch):
    """Rows whose distinct keys cannot be numbered in one int64 are counted another way, to
    the same tables in the same order (here forced: every key is 'too many')."""
    frame = frame_of(tmp_path)
    keyed = chart_grids(frame)
    monkeypatch.setattr("pipeline.summary.grids.KEY_LIMIT", 1)
    counted = chart_grids(frame)
    for name in ("bins", "derated", "values"):
        assert len(getattr(keyed, name)), name
        pd.testing.assert_frame_equal(getattr(keyed, name), getattr(counted, name))
