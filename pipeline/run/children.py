"""Worker processes die with the run that started them, however it ends (even kill -9)."""

from __future__ import annotations

import ctypes
import os
import signal
import sys

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


def init_worker(parent_pid: int) -> None:
    """Initializer of a worker process: the parent handles Ctrl-C and stops its workers
    (SIGTERM, default action), and a parent killed outright takes them with it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    die_with_parent(parent_pid)
