"""Worker processes and the stop signals (pipeline/run/children.py)."""

from __future__ import annotations

import os
import signal
import sys
import threading

import pytest

from pipeline.run.children import held_signals, init_worker

LINUX = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX signals")


class Stopped(Exception):
    pass


@pytest.fixture
def raising_handler():
    """SIGTERM raising Stopped, as the command line's handler raises KeyboardInterrupt."""

    def stop(signum, frame):
        raise Stopped(signum)

    before = signal.signal(signal.SIGTERM, stop)
    yield stop
    signal.signal(signal.SIGTERM, before)


@LINUX
def test_a_signal_inside_the_block_waits_until_its_end(raising_handler):
    reached = []
    with pytest.raises(Stopped):
        with held_signals():
            os.kill(os.getpid(), signal.SIGTERM)
            reached.append("after the signal")  # not cut short
    assert reached == ["after the signal"]
    assert signal.getsignal(signal.SIGTERM) is raising_handler  # the run's handler is back


@LINUX
def test_a_signal_inside_an_at_fork_handler_is_not_lost(raising_handler):
    """What the pool's start does: fork, with at-fork handlers, where an exception raised
    by a signal handler would be swallowed by Python."""
    armed = [True]  # an at-fork handler stays registered: armed for this one fork only
    os.register_at_fork(
        after_in_parent=lambda: (
            armed.pop() and os.kill(os.getpid(), signal.SIGTERM) if armed else None
        )
    )
    pid = 0
    try:
        with pytest.raises(Stopped):
            with held_signals():
                pid = os.fork()
                if pid == 0:
                    os._exit(0)
    finally:
        armed.clear()
        os.waitpid(pid, 0)


def test_no_signal_no_effect(raising_handler):
    with held_signals():
        pass
    assert signal.getsignal(signal.SIGTERM) is raising_handler


def test_outside_the_main_thread_nothing_is_held():
    seen = []

    def other() -> None:
        with held_signals():
            seen.append(signal.getsignal(signal.SIGTERM))

    before = signal.getsignal(signal.SIGTERM)
    thread = threading.Thread(target=other)
    thread.start()
    thread.join()
    assert seen == [before]


@LINUX
def test_a_worker_ignores_ctrl_c_and_stops_on_sigterm():
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the worker
        init_worker(os.getppid())
        ignored = signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        default = signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
        os.write(write, b"ok" if ignored and default else b"no")
        os._exit(0)
    os.close(write)
    assert os.read(read, 2) == b"ok"
    os.waitpid(pid, 0)
