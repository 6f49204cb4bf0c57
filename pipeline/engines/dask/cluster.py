"""The Dask side of a run (engines.dask.run): a client on a scheduler, or on a local cluster
the run starts and stops; the partitions submitted a few at a time, the next as one
completes, so a plan of any size costs the client nothing up front; and each way Dask can
fail (no worker, a partition that kills its workers, the scheduler lost) as one EngineError
saying what to do, never a hang or a traceback.

Dask is imported here only when this engine runs: the local engine needs none of it."""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import CancelledError
from contextlib import ExitStack, contextmanager

from pipeline.errors import PipelineError, printable
from pipeline.render import format as fmt

CONNECT_TIMEOUT = 10  # seconds to reach a --scheduler before saying it cannot be reached
DEFAULT_WORKER_WAIT = 60  # seconds a run waits with no worker before it stops (--worker-wait)
IN_FLIGHT = 2  # partitions submitted per worker thread: one running, one queued behind it
POLL = 0.5  # seconds between looks at the workers while no partition completes
# protocols a run can reach without a security configuration (tls://, wss://) or UCX (ucx://)
PROTOCOLS = ("tcp", "ws")
TLS = "needs TLS certificates (a Dask security configuration), which this tool does not take"
UCX = "needs UCX (ucx-py and its network set-up), which this tool does not set up"
NOT_TAKEN = {"tls": TLS, "wss": TLS, "ucx": UCX, "ucxx": UCX}

Progress = Callable[[int, int, float | None], None]  # partitions done, of total, wait left


class EngineError(PipelineError):
    """The Dask engine cannot run or finish: Dask missing, no scheduler or worker, a lost
    scheduler, a partition its workers cannot survive."""


def dask_module():
    """dask.distributed, or a clear error saying how to install it."""
    try:
        import distributed
    except ImportError:
        raise EngineError(
            "--engine dask needs Dask: pip install 'roofline-pipeline[dask]'"
        ) from None
    return distributed


def scheduler_problem(address: str) -> str | None:
    """What makes `address` no scheduler address this engine can use, or None."""
    if not address.strip():
        return (
            "--scheduler is empty: give a running scheduler's address (tcp://HOST:8786), or "
            "leave it out for a local cluster"
        )
    scheme, sep, _ = address.strip().partition("://")
    scheme = scheme.lower() if sep else "tcp"  # HOST:PORT is Dask's tcp://HOST:PORT
    if scheme in NOT_TAKEN:
        tunnel = ", inside a trusted network or through an SSH tunnel"
        return (
            f"--scheduler {printable(address)}: a {scheme}:// scheduler {NOT_TAKEN[scheme]}; "
            "give the scheduler's tcp:// address (tcp://HOST:8786)"
            + (tunnel if NOT_TAKEN[scheme] is TLS else "")
        )
    if scheme not in PROTOCOLS:
        return (
            f"--scheduler {printable(address)}: unknown protocol {printable(scheme)}://; give "
            "the scheduler's tcp:// address (tcp://HOST:8786)"
        )
    return None


@contextmanager
def connected(module, scheduler: str | None, workers: int | None, timeout: float):
    """A Client on `scheduler` (reached within `timeout` seconds, else EngineError), or on a
    LocalCluster this run starts and stops: `workers` processes, one thread each, and no
    dashboard. While it is open, distributed's own log lines are held back: what goes wrong
    is said once, as an EngineError."""
    with ExitStack() as stack:
        # distributed's loggers each their own level (distributed.client: warning): all held
        for name in ["distributed", *logging.root.manager.loggerDict]:
            if name == "distributed" or name.startswith("distributed."):
                logger = logging.getLogger(name)
                stack.callback(logger.setLevel, logger.level)
                logger.setLevel(logging.CRITICAL + 1)
        if scheduler:
            try:
                client = module.Client(scheduler, timeout=timeout)
            except (OSError, TimeoutError, ValueError) as exc:
                raise EngineError(
                    f"cannot reach the Dask scheduler at {printable(scheduler)} within "
                    f"{timeout:g} s ({type(exc).__name__}); start one with `dask "
                    "scheduler` and give its address (tcp://HOST:8786)"
                ) from None
            stack.callback(client.close)
            yield client
            return
        import dask  # installed with distributed

        # Dask's nanny sets MALLOC_TRIM_THRESHOLD_=65536 in its workers, which turns off
        # glibc's dynamic mmap threshold: then every array past 128 KiB is mapped and
        # unmapped afresh, and its pages faulted in again, which made a partition 25 % (1M
        # rows) to 55 % (500k) slower than the same call in a plain process. The run's own
        # cluster keeps glibc's default; a user's cluster is theirs (README).
        with dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}):
            # The scheduler serves HTTP (health checks) even without a dashboard, on 8787
            # unless told otherwise, and warns when another cluster holds that port: the
            # run's own cluster takes any free port on this machine, and no dashboard.
            cluster = module.LocalCluster(
                n_workers=workers or os.cpu_count() or 1, threads_per_worker=1, processes=True,
                dashboard_address="127.0.0.1:0", scheduler_kwargs={"dashboard": False},
                silence_logs=logging.CRITICAL,
            )  # fmt: skip
        stack.callback(cluster.close)
        client = module.Client(cluster)
        stack.callback(client.close)
        yield client


def compute_partitions(
    client,
    module,
    cuts: Sequence[int],
    submit: Callable[[int, int, int], object],
    merge: Callable[[dict], None],
    *,
    worker_wait: float,
    progress: Progress | None = None,
    where: str | None = None,
) -> int:
    """Compute every partition, partition k the scenarios cuts[k] to cuts[k + 1] (end
    excluded; `submit(k, lo, hi)` makes its future), at most IN_FLIGHT per worker thread
    submitted at a time, and `merge` each result as it completes; the number of
    partitions. `progress(done, of, wait_left)`: after each change, `wait_left` the seconds
    left while no worker is there. EngineError when no worker is there for `worker_wait`
    seconds (a finished partition's worker lost before its result came: the same), a
    finished partition's result is not sent within `worker_wait` seconds, a partition kills
    the workers that run it, or the scheduler (`where`; None: the run's own) is lost or
    does not answer for `worker_wait` seconds: every wait on the cluster is bounded."""
    count = len(cuts) - 1  # a run of no scenario: one, empty ([0, 0])
    in_flight: dict = {}
    done = submitted = 0
    alone_since = None
    show = progress or (lambda done, of, wait_left: None)
    try:
        while done < count:
            threads = _threads(client, where, done, count, worker_wait)
            if threads:
                alone_since = None
            while submitted < count and len(in_flight) < IN_FLIGHT * max(threads, 1):
                lo, hi = int(cuts[submitted]), int(cuts[submitted + 1])
                in_flight[submit(submitted, lo, hi)] = submitted
                submitted += 1
            wait_left = None
            if threads == 0:
                alone_since = alone_since or time.monotonic()
                wait_left = worker_wait - (time.monotonic() - alone_since)
                if wait_left <= 0:
                    raise EngineError(_no_worker(where, worker_wait, done, count))
            show(done, count, wait_left)
            try:
                finished, _ = module.wait(list(in_flight), timeout=POLL,
                                          return_when="FIRST_COMPLETED")  # fmt: skip
            except TimeoutError:
                continue
            except (OSError, CancelledError):  # the scheduler's connection closed, and the
                raise EngineError(_lost(where, done, count)) from None  # futures with it
            for future in finished:
                k = in_flight[future]
                try:  # bounded: the worker holding it may die before it is sent
                    got = _fetched(future, _fetch(client, future), worker_wait,
                                   lambda n=done: _threads(client, where, n, count, worker_wait),
                                   lambda left, n=done: show(n, count, left))  # fmt: skip
                except _Stalled as stalled:
                    if stalled.held:  # a worker holds it and does not send it
                        raise EngineError(_unfetched(k, count, cuts, worker_wait)) from None
                    raise EngineError(_no_worker(where, worker_wait, done, count)) from None
                except module.KilledWorker as exc:
                    raise EngineError(_killed(k, count, cuts, exc)) from None
                except CancelledError:  # the futures of a client whose scheduler is lost
                    raise EngineError(_lost(where, done, count)) from None
                del in_flight[future]
                merge(got)
                future.release()  # the client keeps the aggregates, never the rows
                done += 1
        show(done, count, None)
    finally:
        for future in in_flight:
            future.release()
    return count


class _Stalled(Exception):
    """A finished partition's result did not come for the wait: `held`, a worker holds it
    and does not send it; else its worker was lost and no other is there to compute it."""

    def __init__(self, held: bool):
        super().__init__(held)
        self.held = held


def _fetched(future, fetch, wait: float, threads: Callable[[], int],
             show: Callable[[float | None], None]) -> dict:  # fmt: skip
    """The result of `future`, a finished partition, as `fetch` (_fetch's) brings it, looked
    at every POLL seconds, never waited for unbounded: if the worker holding it dies first,
    Dask computes it again on a worker still there (its status no longer finished), and
    `show(wait_left)` says the wait while `threads()` says there is none. _Stalled when it
    is held and not sent, or has no worker, for `wait` seconds; the partition's own error
    (Dask's KilledWorker) or CancelledError (a lost scheduler) as they come."""
    since = time.monotonic()  # since when it has been held unsent, or has had no worker
    try:
        while True:
            try:
                got = fetch.result(timeout=POLL)
                break
            except TimeoutError:
                pass
            held = future.status == "finished"
            alone = not held and threads() == 0
            if not held and not alone:  # being computed again, on a worker that is there
                since = time.monotonic()
            left = wait - (time.monotonic() - since)
            if left <= 0:
                raise _Stalled(held)
            show(left if alone else None)
    finally:
        fetch.cancel()  # a fetch given up stops: none left running on the client's loop
    if got is None:  # gathered with errors="skip": its task failed, or was cancelled
        return future.result(timeout=wait)  # done: raises its error at once
    return got


def _fetch(client, future) -> concurrent.futures.Future:
    """`future`'s result as it is fetched on the client's own event loop: a concurrent
    Future, waited for in steps, never cancelled midway (a Dask result() given a timeout
    cancels its gather, leaving tasks that log "Task exception was never retrieved"); its
    error is kept on `future` ("skip": gathered as None)."""
    coro = client.gather(future, errors="skip", asynchronous=True)
    return asyncio.run_coroutine_threadsafe(coro, client.loop.asyncio_loop)


def _threads(client, where: str | None, done: int, count: int, wait: float) -> int:
    """The worker threads the scheduler has now (EngineError when it does not say within
    `wait` seconds)."""
    try:
        return sum(client.nthreads(callback_timeout=wait).values())
    except TimeoutError:  # a scheduler there and not answering (stopped, or overloaded)
        raise EngineError(_lost(where, done, count, wait)) from None
    except (OSError, CancelledError, asyncio.CancelledError):  # the connection closed
        raise EngineError(_lost(where, done, count)) from None


def _no_worker(where: str | None, wait: float, done: int, count: int) -> str:
    if where:
        at, then = f"at {printable(where)}", f"start one (`dask worker {printable(where)}`)"
    else:  # the nannies restart a dead worker: none for so long is one dying again and again
        at, then = "in the run's local cluster", "a smaller --partition-rows needs less memory"
    return (
        f"no Dask worker {at} for {wait:g} s (none started, or every one killed), with "
        f"{fmt.count(done)} of {fmt.plural(count, 'partition')} done; nothing written: "
        f"{then}, or give a longer --worker-wait"
    )


def _lost(where: str | None, done: int, count: int, wait: float | None = None) -> str:
    at = f"at {printable(where)}" if where else "of the run's local cluster"
    how = "mid-run" if wait is None else f"mid-run (no answer for {wait:g} s)"
    return (
        f"lost the Dask scheduler {at} {how}, with {fmt.count(done)} of "
        f"{fmt.plural(count, 'partition')} done; nothing written: check that the scheduler "
        "is running (and reachable), then run again"
        + ("" if wait is None else ", or give a longer --worker-wait")
    )


def _unfetched(k: int, count: int, cuts: Sequence[int], wait: float) -> str:
    lo, hi = int(cuts[k]), int(cuts[k + 1])
    return (
        f"partition {fmt.count(k + 1)} of {fmt.count(count)} (scenarios {fmt.count(lo + 1)} to "
        f"{fmt.count(hi)}) finished on a Dask worker, but its result could not be fetched from "
        f"it for {wait:g} s (the worker unreachable from this machine, or too busy); nothing "
        "written: check that every worker is reachable from here, or give a longer "
        "--worker-wait"
    )


def _killed(k: int, count: int, cuts: Sequence[int], exc) -> str:
    lo, hi = int(cuts[k]), int(cuts[k + 1])
    rows = int(cuts[1] - cuts[0])  # the first partition's size: --partition-rows or more
    tries = getattr(exc, "allowed_failures", 0) + 1  # Dask gives a task up after so many
    who = "the Dask worker" if tries == 1 else f"each of the {tries} Dask workers"
    return (
        f"partition {fmt.count(k + 1)} of {fmt.count(count)} (scenarios {fmt.count(lo + 1)} to "
        f"{fmt.count(hi)}) was on {who} that died running it (out of memory, or killed); "
        f"nothing written: a smaller --partition-rows (now {fmt.count(rows)}) needs "
        "less memory per worker"
    )
