"""Shared fixtures: the shipped book scenarios, loaded and computed once per session."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest

from pipeline.batch import errors_frame
from pipeline.hardware import Catalog, catalog_records, load_catalog
from pipeline.meta import RunMeta
from pipeline.roofline import compute_roofline
from pipeline.scenarios import Loaded, load_scenarios

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
BOOK_SCENARIOS = ROOT / "scenarios" / "q1-q5.csv"


@dataclass
class ComputedRun:
    """A loaded and computed file, as the output stages receive it."""

    loaded: Loaded
    results: pd.DataFrame
    errors: pd.DataFrame
    hardware: list[dict]
    meta: RunMeta


def compute_file(path: Path, catalog: Catalog) -> ComputedRun:
    loaded = load_scenarios(path, catalog)
    results = compute_roofline(loaded.frame)
    used = sorted(results["hardware"].unique())
    meta = RunMeta(
        run_name=path.stem,
        input_path=str(path),
        input_sha256="0" * 64,
        started="2026-01-01T00:00:00+00:00",
        tool_version="test",
        catalog_version=catalog.version,
        source_rows=loaded.source_rows,
        scenarios=len(results),
        rejected_rows=loaded.rejected_lines,
    )
    return ComputedRun(
        loaded, results, errors_frame(loaded.problems), catalog_records(catalog, used), meta
    )


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return load_catalog()


@pytest.fixture(scope="session")
def book_run(catalog) -> ComputedRun:
    """scenarios/q1-q5.csv computed: 13 source rows, two Q3 sweeps over B = 1..512."""
    return compute_file(BOOK_SCENARIOS, catalog)


@pytest.fixture
def data_dir() -> Path:
    return DATA
