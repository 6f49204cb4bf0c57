"""Round four of the hostile probe (issue 39), the Dask engine: a run whose workers die after a
partition finished but before the client fetched it stops within --worker-wait (a real
`dask scheduler` and `dask worker` on 127.0.0.1, the worker killed right after the client's
`wait` saw the partition finished), and a run of many source rows sends Dask no large graph
(no UserWarning reaches the user)."""

from __future__ import annotations

import gc
import os
import signal
import socket
import subprocess
import sys
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed")

from pipeline.engines.dask.cluster import EngineError  # noqa: E402
from pipeline.engines.dask.run import run_dask  # noqa: E402
from pipeline.run.write import Options  # noqa: E402
from tests.helpers import ROOT, write_scenarios  # noqa: E402

NO_PAGES = Options(plots=False, workbook=False, report=False)  # the graph, not the pages

DASK = Path(sys.executable).parent / "dask"
TEXT = "name,op,hardware,B,D,F\nq,matmul,h100,1..3000,64,64\n"  # 3,000 scenarios


@contextmanager
def dask_cluster(tmp_path: Path, workers: int = 1) -> Iterator[tuple[str, list[int]]]:
    """`dask scheduler` on a free port of 127.0.0.1 and `workers` `dask worker`s without a
    nanny (a killed worker stays dead): the address and the workers' process ids. Every
    process started is killed at the end."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path, env=env,
                 start_new_session=True)  # fmt: skip
    started = []
    try:
        started.append(subprocess.Popen(
            [DASK, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
            **quiet))  # fmt: skip
        for _ in range(workers):
            started.append(subprocess.Popen(
                [DASK, "worker", address, "--host", "127.0.0.1", "--nthreads", "1",
                 "--no-dashboard", "--no-nanny"], **quiet))  # fmt: skip
        with distributed.Client(address, timeout=60) as client:
            client.wait_for_workers(workers, timeout=60)
            pids = list(client.run(os.getpid).values())
        yield address, pids
    finally:
        for proc in started:
            with suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)


def in_thread(call, timeout: float = 60):
    """`call()`'s outcome (its value or its exception), run in a thread of its own: a call
    still running after `timeout` seconds (a hang) fails the test instead of hanging it."""
    got: dict = {}

    def target():
        try:
            got["value"] = call()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            got["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(timeout)
    assert not thread.is_alive(), f"still waiting after {timeout} s: the run hangs"
    return got


def test_workers_dying_after_a_partition_finished_stop_the_run_within_the_wait(
    tmp_path, monkeypatch, caplog
):
    """The issue's case: the worker holding a finished partition's result is killed after the
    client's `wait` saw it finished and before `result()` fetched it; with no other worker
    the run must end in the no-worker EngineError, --worker-wait consulted."""
    path = write_scenarios(tmp_path, TEXT)
    real_wait = distributed.wait
    with dask_cluster(tmp_path) as (address, pids):

        def wait(futures, timeout=None, return_when="ALL_COMPLETED"):
            got = real_wait(futures, timeout=timeout, return_when=return_when)
            if got.done and pids:  # a partition finished: its worker dies before the fetch
                for pid in pids:
                    os.kill(pid, signal.SIGKILL)
                pids.clear()
            return got

        monkeypatch.setattr(distributed, "wait", wait)
        got = in_thread(lambda: run_dask(path, tmp_path / "out", scheduler=address,
                                         partition_rows=1000, worker_wait=2))  # fmt: skip
    assert not pids  # the worker was killed, after a partition finished
    assert isinstance(got.get("error"), EngineError), got
    said = str(got["error"])
    assert said.startswith(f"no Dask worker at {address} for 2 s"), said
    assert "of 3 partitions done; nothing written" in said and "--worker-wait" in said
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())
    gc.collect()  # no task of the given-up fetch left behind to log its error
    assert "never retrieved" not in caplog.text and "destroyed" not in caplog.text


def test_a_run_of_many_source_rows_sends_dask_no_large_graph(tmp_path):
    """The issue's case, 60,000 rows `sN,matmul,512|1|4096,<D>,4096,h100` (a partition's
    rows 11 MB, past Dask's 10 MB warning): a partition's rows reach its worker through the
    run's folder, not inside the task graph, so Dask never warns of a large graph (here
    2,000 rows against a warning threshold lowered to 64 kB, the same in small)."""
    import dask

    rows = [f"s{i},matmul,512|1|4096,{64 + i},4096,h100" for i in range(2000)]
    path = write_scenarios(tmp_path, "name,op,B,D,F,hardware\n" + "\n".join(rows) + "\n")
    with (
        dask.config.set({"distributed.admin.large-graph-warning-threshold": "64kB"}),
        warnings.catch_warnings(record=True) as seen,
    ):
        warnings.simplefilter("always")
        got = run_dask(path, tmp_path / "out", workers=1, options=NO_PAGES)
    assert got.scenarios == 6000 and not got.problems
    assert not [str(w.message) for w in seen if "graph" in str(w.message)]
    assert sorted(p.name for p in (got.folder / "results").iterdir()) == ["part-00000.parquet"]
