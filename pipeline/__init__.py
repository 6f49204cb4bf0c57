"""roofline-pipeline: how long will an op take on a chip, and is it compute-, memory- or
network-bound? The roofline model of "How to Scale Your Model" (Austin et al.), chapter "All
About Rooflines", for thousands of scenarios at once (docs/api.md).

    import pipeline
    a = pipeline.analyze("scenarios/q1-q5.csv")
    a.results            # every scenario, the results.csv columns
    a.write("output/q1-q5")
    pipeline.charts.roofline(a, "tpu-v5e")
    pipeline.chips(["h100", "tpu-v6e"])     # chips side by side, ridge points per dtype
    pipeline.models()                       # the model catalog: dims, experts, parameters
    pipeline.run_dask("sweep.csv", "out/")  # past one machine: partitions on Dask workers
"""

from typing import TYPE_CHECKING

from pipeline.api.analyze import (
    Analysis,
    ChipTable,
    analyze,
    catalog,
    chips,
    load_hardware,
    write_template,
)
from pipeline.api.compare import Comparison, RunsComparison, compare, compare_runs
from pipeline.catalogs.llms import ModelCatalog, load_models, models
from pipeline.catalogs.prices import price_template
from pipeline.errors import (
    InvalidCalibrationFile,
    InvalidHardwareFile,
    InvalidModelFile,
    InvalidPriceFile,
    InvalidResults,
    InvalidScenarios,
    OutputError,
    PipelineError,
    ScenarioFileError,
    UnknownHardware,
    UnknownModel,
)
from pipeline.run.index import failed_entry, index_entry, write_index
from pipeline.run.write import Written
from pipeline.traces import import_trace
from pipeline.version import __version__

if TYPE_CHECKING:
    from pipeline import charts
    from pipeline.api.calibrate import Calibrated, calibrate
    from pipeline.engines.dask.run import DaskRun, run_dask

# imported when first used: the charts pull in matplotlib's figure module (0.4 s) and the
# Dask engine its own modules, which `pipeline hardware` or a Dask worker never needs
_LAZY = {
    "charts": ("pipeline.charts", None),
    "DaskRun": ("pipeline.engines.dask.run", "DaskRun"),
    "run_dask": ("pipeline.engines.dask.run", "run_dask"),
    # SciPy's optimizer, a quarter of a second to import: only when a calibration is fitted
    "calibrate": ("pipeline.api.calibrate", "calibrate"),
    "Calibrated": ("pipeline.api.calibrate", "Calibrated"),
}


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module 'pipeline' has no attribute {name!r}")
    import importlib

    module, attribute = _LAZY[name]
    value = importlib.import_module(module)
    value = value if attribute is None else getattr(value, attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "Analysis",
    "Calibrated",
    "ChipTable",
    "Comparison",
    "DaskRun",
    "InvalidCalibrationFile",
    "InvalidHardwareFile",
    "InvalidModelFile",
    "InvalidPriceFile",
    "InvalidResults",
    "InvalidScenarios",
    "ModelCatalog",
    "OutputError",
    "PipelineError",
    "RunsComparison",
    "ScenarioFileError",
    "UnknownHardware",
    "UnknownModel",
    "Written",
    "__version__",
    "analyze",
    "calibrate",
    "catalog",
    "charts",
    "chips",
    "compare",
    "compare_runs",
    "failed_entry",
    "import_trace",
    "index_entry",
    "load_hardware",
    "load_models",
    "models",
    "price_template",
    "run_dask",
    "write_index",
    "write_template",
]
