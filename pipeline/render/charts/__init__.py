"""Charts: data (dataclasses, `data`) -> matplotlib Figure (`figure`) -> PNG bytes (`png`).

`plan` decides which charts a run draws and names their files; `roofline`, `sweep` and
`summary` draw one kind each; `style` holds what they share, `labels` the label placement,
`fonts` the Hangul font of Korean charts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pipeline.render.charts.data import RooflineData, SweepData
from pipeline.render.charts.fleet_data import FleetData
from pipeline.render.charts.plan import (
    Chart,
    PlannedChart,
    fleet_cap_notice,
    left_out_notice,
    plan_charts,
)
from pipeline.render.charts.serving_data import ServingData
from pipeline.render.charts.step_sweep_data import ModelSweepData
from pipeline.render.charts.summary_data import SummaryData
from pipeline.render.charts.training_data import TrainingData

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "Chart",
    "PlannedChart",
    "figure",
    "fleet_cap_notice",
    "left_out_notice",
    "plan_charts",
    "png",
]


def load() -> None:
    """Import what drawing a chart takes (matplotlib: a quarter of a second): a run does it
    once, before it forks the workers that draw, rather than in each of them."""
    from pipeline.render.charts import (  # noqa: F401
        fleet,
        roofline,
        serving,
        step_sweep,
        style,
        summary,
        sweep,
        training,
    )


ChartData = (
    RooflineData | SweepData | SummaryData | FleetData | ModelSweepData | ServingData | TrainingData
)


def figure(data: ChartData) -> Figure:
    """The Figure of one chart's data (matplotlib imported here, when a chart is drawn: a
    command that draws none, such as `pipeline hardware`, never pays for it)."""
    from pipeline.render.charts.fleet import fleet_figure
    from pipeline.render.charts.roofline import roofline_figure
    from pipeline.render.charts.serving import serving_figure
    from pipeline.render.charts.step_sweep import model_sweep_figure
    from pipeline.render.charts.summary import summary_figure
    from pipeline.render.charts.sweep import sweep_figure
    from pipeline.render.charts.training import training_figure

    if isinstance(data, RooflineData):
        return roofline_figure(data)
    if isinstance(data, SweepData):
        return sweep_figure(data)
    if isinstance(data, SummaryData):
        return summary_figure(data)
    if isinstance(data, FleetData):
        return fleet_figure(data)
    if isinstance(data, ModelSweepData):
        return model_sweep_figure(data)
    if isinstance(data, ServingData):
        return serving_figure(data)
    if isinstance(data, TrainingData):
        return training_figure(data)
    raise TypeError(f"no chart for {type(data).__name__}")


def png(data: ChartData) -> bytes:
    """One chart as PNG bytes (the same data gives the same bytes)."""
    from pipeline.render.charts.style import png_bytes

    return png_bytes(figure(data))
