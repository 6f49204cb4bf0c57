"""Worker processes die with the run that started them, however it ends (even kill -9); SIGTERM
stops a run as Ctrl-C does."""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
from contextlib import contextmanager

_PR_SET_PDEATHSIG = 1


def die_with_parent(parent_pid: int) -> None:
    """In a child process: have the kernel kill it when its parent dies (Linux; elsewhere the
    parent stops its children on the way out, which kill -9 does not allow).

    Linux ties this to the parent *thread* that started the child: start workers from the
    run's main thread."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL))
        except (OSError, AttributeError):
            return
    if os.getppid() != parent_pid:  # the parent died before we could ask
        os._exit(1)


STOPS = {signal.SIGINT, signal.SIGTERM}


@contextmanager
def held_signals():
    """Ctrl-C and SIGTERM held meanwhile, then acted on: for steps that must not be cut in
    two, such as starting worker processes (a KeyboardInterrupt raised inside an at-fork
    handler is swallowed by Python, and the run would go on). Held at Python's level, not
    with a signal mask: the kernel may hand the signal to any of the process's threads
    (pyarrow's, BLAS's), while Python runs its handlers in the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    before = {s: signal.signal(s, lambda signum, frame: caught.append(signum)) for s in STOPS}
    try:
        yield
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)
        for s in dict.fromkeys(caught):  # now the run's own handlers act on it
            signal.raise_signal(s)


def init_worker(parent_pid: int) -> None:
    """Initializer of a worker process: the parent handles Ctrl-C and stops its workers
    (SIGTERM, default action), and a parent killed outright takes them with it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    die_with_parent(parent_pid)


@contextmanager
def sigterm_as_interrupt():
    """SIGTERM (what `timeout` and CI cancels send) stops a run as Ctrl-C does: temp folders
    removed, worker processes stopped, previous outputs untouched."""

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
