"""render/charts/grid.py: a roofline drawn from a sample and every scenario's grid
(summary.grids) has every scenario's counts and, past SCATTER_LIMIT points, their density,
weighted by the scenarios in each bin."""

from __future__ import annotations

import numpy as np

import pipeline
from pipeline.render.charts import png
from pipeline.render.charts.data import chart_frame, roofline_data
from pipeline.render.charts.grid import with_grid
from pipeline.summary.grids import chart_grids
from tests.helpers import write_scenarios

TEXT = """
name,op,hardware,B,D,F,bytes,chips,compute_efficiency
a,matmul,h100,1..4000,1024|8192,4096,,,
d,matmul,h100,1..1000,4096,4096,,,0.5
ag,all_gather,h100,,,,1000..1000000*10,8,
"""


def _frame(tmp_path):
    analysis = pipeline.analyze(write_scenarios(tmp_path, TEXT))
    return analysis, chart_frame(analysis)


def test_a_roofline_from_a_sample_and_the_grid_has_every_scenarios_counts(tmp_path):
    analysis, frame = _frame(tmp_path)
    chip = next(r for r in analysis.hardware if r["name"] == "h100")
    full = roofline_data(frame, chip)
    sample = roofline_data(frame.iloc[::50], chip)
    got = with_grid(sample, chart_grids(frame))
    assert got.title == full.title == "h100 roofline: 9,000 scenarios"
    assert got.counts == full.counts and got.not_fitting == full.not_fitting
    assert got.collectives == full.collectives == 4
    assert got.points.weight is not None and got.points.weight.sum() == 9_000  # dense: binned
    assert not got.labels and not got.trails
    assert [d.rows for d in got.derated] == [d.rows for d in full.derated] == [1000]
    assert np.isclose(got.points.x.min(), full.points.x.min(), rtol=0.04)  # a bin's width
    assert png(got).startswith(b"\x89PNG")
