"""engines/dask/cluster.py: which scheduler addresses a run takes, and how partitions are submitted
and waited for, on a fake client (the real scheduler's cases are in
tests/test_promises_r3_dask.py): a few in flight at a time, a bounded wait for workers,
Dask's failures as one EngineError each."""

from __future__ import annotations

import concurrent.futures
import threading
from concurrent.futures import CancelledError

import pytest

from pipeline.engines.dask import cluster
from pipeline.engines.dask.cluster import EngineError, compute_partitions, scheduler_problem


@pytest.mark.parametrize("address", ["tcp://10.0.0.7:8786", "10.0.0.7:8786", "TCP://h:1",
                                     "ws://h:8786"])  # fmt: skip
def test_tcp_and_ws_addresses_are_taken(address):
    assert scheduler_problem(address) is None


@pytest.mark.parametrize(
    ("address", "said"),
    [
        ("", "--scheduler is empty: give a running scheduler's address (tcp://HOST:8786)"),
        ("  ", "--scheduler is empty"),
        ("tls://h:8786", "--scheduler tls://h:8786: a tls:// scheduler needs TLS certificates"),
        ("wss://h:8786", "--scheduler wss://h:8786: a wss:// scheduler needs TLS certificates"),
        ("ucx://h:8786", "--scheduler ucx://h:8786: a ucx:// scheduler needs UCX"),
        ("http://h:8787", "--scheduler http://h:8787: unknown protocol http://"),
        ("tcp\n://h", "--scheduler tcp\\n://h: unknown protocol tcp\\n://"),  # escaped
    ],
)
def test_other_addresses_are_refused_by_name(address, said):
    assert scheduler_problem(address).startswith(said)


class Future:
    status = "finished"

    def __init__(self, k, outcome):
        self.k, self.outcome, self.released = k, outcome, False

    def result(self, timeout=None):
        if isinstance(self.outcome, BaseException):
            raise self.outcome
        return self.outcome

    def release(self):
        self.released = True


class Killed(Exception):
    allowed_failures = 3


class Fake:
    """A client and its module: `threads` says the workers' threads at each look (the last
    repeated), `outcome(k)` a partition's result or exception; `wait` finishes the oldest
    future in flight, or times out while no worker is there."""

    KilledWorker = Killed

    def __init__(self, threads, outcome=lambda k: {"k": k}):
        self.threads, self.outcome = list(threads), outcome
        self.in_flight_seen, self.submitted = [], []

    def nthreads(self, callback_timeout=None):
        now = self.threads.pop(0) if len(self.threads) > 1 else self.threads[0]
        if isinstance(now, BaseException):
            raise now
        return {f"w{i}": 1 for i in range(now)}

    def submit(self, k, lo, hi):
        self.submitted.append((k, lo, hi))
        return Future(k, self.outcome(k))

    def wait(self, futures, timeout, return_when):
        self.in_flight_seen.append(len(futures))
        if not self.threads[0]:
            raise TimeoutError
        return {futures[0]}, set(futures[1:])


@pytest.fixture(autouse=True)
def fetched_at_once(monkeypatch):
    """A fake future's result, fetched at once (a real one is fetched on Dask's event loop)."""

    def fetch(client, future):
        got = concurrent.futures.Future()
        try:
            got.set_result(future.result())
        except Killed:
            got.set_result(None)  # as gather(errors="skip") gives a failed task's result
        except BaseException as exc:  # noqa: BLE001 - the fetch's own error, as Dask's
            got.set_exception(exc)
        return got

    monkeypatch.setattr(cluster, "_fetch", fetch)


def run(fake, total=10_000, rows=1_000, **kwargs):
    merged, shown = [], []
    kwargs.setdefault("worker_wait", 60)
    cuts = [*range(0, total, rows), total] if total else [0, 0]
    count = compute_partitions(fake, fake, cuts, fake.submit, merged.append,
                               progress=lambda *a: shown.append(a), **kwargs)  # fmt: skip
    return count, merged, shown


def test_two_partitions_per_worker_thread_are_in_flight_never_more():
    fake = Fake([3])
    count, merged, shown = run(fake)
    assert count == 10 and sorted(m["k"] for m in merged) == list(range(10))
    assert max(fake.in_flight_seen) == 6  # 3 threads, 2 each
    assert fake.submitted[-1] == (9, 9_000, 10_000)
    assert shown[-1] == (10, 10, None)


def test_a_run_of_no_scenario_is_one_empty_partition():
    fake = Fake([1])
    count, merged, _ = run(fake, total=0)
    assert count == 1 and fake.submitted == [(0, 0, 0)]


def test_no_worker_for_the_wait_is_an_error_and_the_wait_is_shown(monkeypatch):
    clock = iter(range(0, 1000, 1))
    monkeypatch.setattr(cluster.time, "monotonic", lambda: next(clock))
    fake = Fake([0])
    with pytest.raises(EngineError) as err:
        run(fake, worker_wait=5, where="tcp://h:8786")
    assert str(err.value) == (
        "no Dask worker at tcp://h:8786 for 5 s (none started, or every one killed), with 0 of "
        "10 partitions done; nothing written: start one (`dask worker tcp://h:8786`), or give a "
        "longer --worker-wait"
    )
    assert len(fake.submitted) == 2  # while no worker is there: two, ready for the first


def test_workers_back_within_the_wait_carry_on(monkeypatch):
    fake = Fake([0, 0, 0, 1])
    count, merged, shown = run(fake, worker_wait=60)
    assert len(merged) == 10
    waits = [left for _, _, left in shown if left is not None]
    assert waits and all(0 < w <= 60 for w in waits)


def test_a_partition_that_killed_its_workers_says_which_and_what_to_do():
    fake = Fake([1], outcome=lambda k: Killed() if k == 2 else {"k": k})
    with pytest.raises(EngineError) as err:
        run(fake, total=2_500)
    assert str(err.value) == (
        "partition 3 of 3 (scenarios 2,001 to 2,500) was on each of the 4 Dask workers that "
        "died running it (out of memory, or killed); nothing written: a smaller "
        "--partition-rows (now 1,000) needs less memory per worker"
    )


@pytest.mark.parametrize("lost", ["nthreads", "result"])
def test_a_lost_scheduler_is_an_error(lost):
    if lost == "nthreads":
        fake = Fake([1, 1, OSError("closed")])
    else:
        fake = Fake([1], outcome=lambda k: CancelledError() if k == 1 else {"k": k})
    with pytest.raises(EngineError) as err:
        run(fake, where="tcp://h:8786")
    assert str(err.value).startswith("lost the Dask scheduler at tcp://h:8786 mid-run, with ")


@pytest.mark.parametrize(
    ("status", "threads", "said"),
    [
        ("pending", [1, 0], "no Dask worker at tcp://h:8786 for 0.2 s (none started, or every "
         "one killed), with 0 of 10 partitions done; nothing written: start one"),
        ("finished", [1], "partition 1 of 10 (scenarios 1 to 1,000) finished on a Dask worker, "
         "but its result could not be fetched from it for 0.2 s"),
    ],
)  # fmt: skip
def test_a_result_that_never_comes_is_an_error_after_the_wait(monkeypatch, status, threads, said):
    """Its worker lost before the fetch (the task back to pending, no worker left to compute
    it again), or a worker holding it and never sending it: the wait ends, never a hang."""
    monkeypatch.setattr(cluster, "POLL", 0.01)
    monkeypatch.setattr(cluster, "_fetch", lambda client, future: concurrent.futures.Future())
    monkeypatch.setattr(Future, "status", status)
    fake = Fake(threads)
    with pytest.raises(EngineError) as err:
        run(fake, worker_wait=0.2, where="tcp://h:8786")
    assert str(err.value).startswith(said)
    assert "--worker-wait" in str(err.value)


def test_a_result_computed_again_on_a_worker_still_there_is_waited_for(monkeypatch):
    """Its worker lost before the fetch and another one there: Dask computes it again, as
    long as that takes (longer than --worker-wait here), and the run goes on."""
    monkeypatch.setattr(cluster, "POLL", 0.01)

    def fetch(client, future):
        got = concurrent.futures.Future()
        if future.k == 0:  # the first partition's result comes after 0.3 s, 3 waits long
            threading.Timer(0.3, got.set_result, [{"k": 0}]).start()
        else:
            got.set_result(future.result())
        return got

    monkeypatch.setattr(cluster, "_fetch", fetch)
    monkeypatch.setattr(Future, "status", "pending")  # computed again, on the worker there
    count, merged, _ = run(Fake([1]), worker_wait=0.1)
    assert count == 10 and sorted(m["k"] for m in merged) == list(range(10))


def test_a_scheduler_that_stops_answering_is_an_error_after_the_wait():
    """Every look at the cluster is bounded: the scheduler's count of worker threads is
    asked for with --worker-wait as its timeout (a stopped scheduler never answers)."""
    fake = Fake([1, TimeoutError()])
    with pytest.raises(EngineError) as err:
        run(fake, where="tcp://h:8786", worker_wait=5)
    assert str(err.value).startswith(
        "lost the Dask scheduler at tcp://h:8786 mid-run (no answer for 5 s), with 1 of 10 "
        "partitions done; nothing written: check that the scheduler is running (and "
        "reachable), then run again, or give a longer --worker-wait"
    )
