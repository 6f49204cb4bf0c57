"""render/charts/grid.py: a roofline drawn from a sample and every scenario's grid
(summary.grids) has every scenario's counts and, past SCATTER_LIMIT points, their density,
weighted by the scenarios in each bin."""

from __future__ import annotations

import numpy as np

import pipeline
from pipeline.render.charts import png
from pipeline.render.charts.data import roofline_data
from pipeline.render.charts.grid import with_grid
from pipeline.summary.grids import chart_frame, chart_grids
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
    roofs = analysis.summary.roofs["h100"].hbm  # of every row (summary.grids, model.roofs)
    full = roofline_data(frame, chip, roofs)
    sample = roofline_data(frame.iloc[::50], chip, roofs)
    got = with_grid(sample, chart_grids(frame))
    assert got.title == full.title == "h100 roofline: 9,000 scenarios"
    assert got.counts == full.counts and got.not_fitting == full.not_fitting
    assert got.collectives == full.collectives == 4
    assert got.points.weight is not None and got.points.weight.sum() == 9_000  # dense: binned
    assert not got.labels and not got.trails
    assert [d.rows for d in got.derated] == [d.rows for d in full.derated] == [1000]
    assert np.isclose(got.points.x.min(), full.points.x.min(), rtol=0.04)  # a bin's width
    assert png(got).startswith(b"\x89PNG")


def test_a_sampled_runs_roofs_are_the_whole_runs(tmp_path, cluster, monkeypatch):
    """Its fp8 rows and derated rows only in rows the Dask sample leaves out: the sampled
    run's roofline still draws the fp8 ceiling and the derated roof with every row it holds,
    as the local engine's does (Summary.roofs, from every partition's rates)."""
    import functools

    from pipeline.engines.dask import views
    from pipeline.engines.dask.run import run_dask
    from pipeline.engines.dask.sample import sample_plan
    from pipeline.run.write import Options
    from tests.helpers import planned_charts

    monkeypatch.setattr(views, "sample_plan", functools.partial(sample_plan, budget=400))
    head = "name,op,B,D,F,hardware,dtype,compute_efficiency"
    first = ["a,matmul,512,64,4096,h100,,", "f,matmul,1..64,4096,4096,h100,fp8,0.5"]
    rows = [f"s{n},matmul,512|1|4096,{64 + n},4096,h100,," for n in range(1_200)]
    path = write_scenarios(tmp_path, "\n".join([head, *first, *rows]) + "\n")
    got = run_dask(path, tmp_path / "dask", scheduler=cluster.scheduler_address,
                   partition_rows=1_000, options=Options(plots=False))  # fmt: skip
    assert got.record.sampled
    assert "fp8" not in set(got.record.results["compute_dtype"].astype(str))  # left out
    local, sampled = (
        next(p.build() for p in planned_charts(a) if p.chart.kind == "roofline")
        for a in (pipeline.analyze(path), got.record)
    )
    assert [c.label for c in sampled.ceilings] == [c.label for c in local.ceilings]
    assert [c.family for c in local.ceilings] == ["bf16", "fp8"]
    assert (
        [(d.label, d.rows) for d in sampled.derated]
        == [(d.label, d.rows) for d in local.derated]
        == [("derated: compute 50.0%, HBM 100%", 64)]
    )
