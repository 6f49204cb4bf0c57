"""Shared fixtures: the catalog, and the shipped book scenarios analyzed once per session."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

import pipeline
from pipeline.analysis import Analysis
from pipeline.model.catalog import Catalog, load_catalog

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
GOLDEN = Path(__file__).resolve().parent / "golden"
BOOK_SCENARIOS = ROOT / "scenarios" / "q1-q5.csv"
STARTED = "2026-01-01T00:00:00+00:00"


def pytest_addoption(parser):
    parser.addoption(
        "--update-golden",
        action="store_true",
        help="rewrite the golden files in tests/golden/ from this run (review the diff!)",
    )


@pytest.fixture
def update_golden(request) -> bool:
    return bool(request.config.getoption("--update-golden"))


def fixed(analysis: Analysis) -> Analysis:
    """The analysis with a fixed start time and tool version, and its file named relative to
    the repository, for outputs that are the same bytes on every machine."""
    source = analysis.source
    if Path(source).is_absolute() and Path(source).is_relative_to(ROOT):
        source = Path(source).relative_to(ROOT).as_posix()
    return replace(analysis, started=STARTED, tool_version="test", source=source)


def analyze_file(path: Path, **kwargs) -> Analysis:
    return fixed(pipeline.analyze(path, **kwargs))


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return load_catalog()


@pytest.fixture(scope="session")
def book() -> Analysis:
    """scenarios/q1-q5.csv analyzed: 13 source rows, two Q3 sweeps over B = 1..512."""
    return analyze_file(BOOK_SCENARIOS)


@pytest.fixture
def data_dir() -> Path:
    return DATA
