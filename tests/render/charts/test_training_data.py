"""render/charts/training_data.py: a train series' chart data from Summary.training alone: x
the axis the series sweeps (chips, else tokens a step), a line per configuration (chip,
precision, parallelism without the degrees that grow with the chips) in the ranking's order,
and each line's compute-bound threshold: where its tokens a chip equal its critical batch."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pipeline.render.charts.training_data import swept_axis, training_data, training_series
from pipeline.summary.training import training_answer, training_rows
from tests.helpers import planned_charts


def test_the_series_that_sweep_chips_or_tokens(training):
    assert training_series(training.summary.training) == ["fsdp"]  # tp sweeps the chip only
    assert training_series(None) == []
    tp = training.summary.training[training.summary.training["series"] == "tp"]
    assert swept_axis(tp) is None


def test_a_line_per_configuration_over_chips_in_the_ranking_s_order(training):
    data = training_data(training.summary.training, "fsdp")
    assert data.axis == "chips" and data.title == "fsdp: step time against chips"
    assert data.subtitle == "llama3-70b · 15.0T tokens · 16.0M tokens a step"
    assert [ln.label for ln in data.lines] == ["h100 bf16 fsdp", "tpu-v5p bf16 fsdp"]
    h100 = data.lines[0]
    np.testing.assert_array_equal(h100.x, [256, 1024, 4096])
    assert (np.diff(h100.y) < 0).all()  # more chips, a shorter step
    assert h100.fits.tolist() == [False, False, True]
    assert h100.best == "40.3 days at 4,096"
    # tokens / critical: 16 M tokens over about 1,100 tokens a chip, about 14,500 chips
    rows = training.summary.training
    critical = rows.loc[(rows["hardware"] == "h100") & (rows["series"] == "fsdp"),
                        "critical_tokens_per_chip"]  # fmt: skip
    assert h100.threshold == pytest.approx(16e6 / critical.median(), rel=1e-9)
    assert 1e4 < h100.threshold < 2e4


def test_over_tokens_a_step_the_threshold_is_critical_times_chips():
    rows = [
        {"series": "t", "name": f"t{k}", "op": "train", "model": "m", "hardware": "h100",
         "x_dtype": "bf16", "y_dtype": "bf16", "out_dtype": "bf16", "compute_dtype": "bf16",
         "chips": 1024, "parallel": "fsdp=1024", "tokens": tokens, "train_tokens": 1e12,
         "t_lower": tokens / 1e6, "mfu": 0.4, "bound": "compute", "collective": "all_gather",
         "comm_strategy": "fsdp", "critical_tokens_per_chip": 2000.0,
         "compute_bound_batch": tokens / 1024 > 2000, "memory_footprint": 1e9,
         "hbm_capacity": 8e10, "fits": True}
        for k, tokens in enumerate((1e6, 4e6))
    ]  # fmt: skip
    data = training_data(training_answer(training_rows(pd.DataFrame(rows))), "t")
    assert data.axis == "tokens" and data.x_label == "Tokens a step (global batch)"
    (line,) = data.lines
    assert line.threshold == pytest.approx(2000 * 1024)
    assert line.compute_bound.tolist() == [False, True]


def test_a_run_plans_a_training_chart_per_swept_train_series(training, book):
    from pipeline.render.charts import plan_charts
    from pipeline.summary.turns import sweep_lines
    from tests.helpers import chart_rows

    s, rows = training.summary, chart_rows(training)
    planned = plan_charts(rows, list(training.hardware), s.per_hardware, s.overrides,
                          lines=sweep_lines(rows), training=s.training)  # fmt: skip
    kinds = [(p.chart.kind, p.chart.path) for p in planned]
    assert kinds[:2] == [("summary", "plots/summary.png"),
                         ("training", "plots/training-fsdp.png")]  # fmt: skip
    assert not any(k == "fleet" for k, _ in kinds)  # the Training table ranks train rows
    data = planned[1].build()
    assert data.series == "fsdp"
    assert not any(p.chart.kind == "training" for p in planned_charts(book))
