"""Shared fixtures: the catalog, and the shipped book scenarios analyzed once per session
(the helpers they use are in tests/helpers.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

from pipeline.api.analyze import Analysis
from pipeline.catalogs.hardware import Catalog, load_catalog
from tests.helpers import BIG, BOOK_SCENARIOS, DATA, MIX, TRAINING, analyze_file, analyze_rows

# make test and CI: the same examples on every run, so a pass count is the same twice and a
# failure found once is found again; make soak explores (HYPOTHESIS_PROFILE=explore)
settings.register_profile("derandomized", derandomize=True, database=None, print_blob=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "derandomized"))


def pytest_addoption(parser):
    parser.addoption(
        "--update-golden",
        action="store_true",
        help="rewrite the golden files in tests/golden/ from this run (review the diff!)",
    )


@pytest.fixture
def update_golden(request) -> bool:
    return bool(request.config.getoption("--update-golden"))


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return load_catalog()


@pytest.fixture(scope="session")
def book() -> Analysis:
    """scenarios/q1-q5.csv analyzed: 13 source rows, two Q3 sweeps over B = 1..512."""
    return analyze_file(BOOK_SCENARIOS)


@pytest.fixture(scope="session")
def mix() -> Analysis:
    """Matmuls (one derated) and collective sweeps of bytes on tpu-v5e and h100 (MIX)."""
    analysis = analyze_rows(MIX)
    assert not analysis.problem_list
    return analysis


@pytest.fixture(scope="session")
def training(tmp_path_factory) -> Analysis:
    """Train rows (TRAINING): 6 points of a pure-FSDP fleet over chips, 2 of FSDP x TP."""
    path = tmp_path_factory.mktemp("training") / "training.csv"
    path.write_text(TRAINING, encoding="utf-8")
    return analyze_file(path)


@pytest.fixture(scope="session")
def big(tmp_path_factory) -> Analysis:
    """20,000 scenarios on four chips; the tpu-v5e sweep does not fit in HBM (BIG)."""
    path = tmp_path_factory.mktemp("big") / "big.csv"
    path.write_text(BIG, encoding="utf-8")
    return analyze_file(path)


@pytest.fixture
def data_dir() -> Path:
    return DATA


@pytest.fixture(scope="module")
def cluster():
    """A 2-worker LocalCluster the Dask engine's tests share within a module."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
        silence_logs=40,
    ) as c:  # fmt: skip
        yield c
