"""roofline-pipeline: how long will an op take on a chip, and is it compute-, memory- or
network-bound? The roofline model of "How to Scale Your Model" (Austin et al.), chapter "All
About Rooflines", for thousands of scenarios at once (docs/api.md).

    import pipeline
    a = pipeline.analyze("scenarios/q1-q5.csv")
    a.results            # every scenario, the results.csv columns
    a.write("output/q1-q5")
    pipeline.charts.roofline(a, "tpu-v5e")
    pipeline.chips(["h100", "tpu-v6e"])     # chips side by side, ridge points per dtype
    pipeline.run_dask("sweep.csv", "out/")  # past one machine: partitions on Dask workers
"""

from pipeline import charts
from pipeline.analysis import Analysis, analyze, catalog, load_hardware, write_template
from pipeline.compare import Comparison, compare
from pipeline.engine.dask_run import DaskRun, run_dask
from pipeline.errors import (
    InvalidHardwareFile,
    InvalidResults,
    InvalidScenarios,
    OutputError,
    PipelineError,
    ScenarioFileError,
    UnknownHardware,
)
from pipeline.model.chips import chips
from pipeline.run.index import failed_entry, index_entry, write_index
from pipeline.run.write import Written
from pipeline.version import __version__

__all__ = [
    "Analysis",
    "Comparison",
    "DaskRun",
    "InvalidHardwareFile",
    "InvalidResults",
    "InvalidScenarios",
    "OutputError",
    "PipelineError",
    "ScenarioFileError",
    "UnknownHardware",
    "Written",
    "__version__",
    "analyze",
    "catalog",
    "charts",
    "chips",
    "compare",
    "failed_entry",
    "index_entry",
    "load_hardware",
    "run_dask",
    "write_index",
    "write_template",
]
