"""The 2-worker LocalCluster the Dask engine's tests share within a module."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
        silence_logs=40,
    ) as c:  # fmt: skip
        yield c
