"""Starting the workbook process (see workbook_job): light to import, so the command line can
start it first and the new interpreter's start-up and imports overlap this one's."""

from __future__ import annotations

import multiprocessing
import os
import signal
from dataclasses import dataclass
from pathlib import Path

from pipeline.children import die_with_parent

PROCESS_MIN_BYTES = 500_000  # ~8,000 rows: measured break-even, see the README


def wants_process(scenarios: Path) -> bool:
    """Whether a run of this input writes its workbook in a process of its own."""
    try:
        return os.stat(scenarios).st_size >= PROCESS_MIN_BYTES
    except OSError:  # the load reports it
        return False


@dataclass
class Spawned:
    """A workbook process waiting for its job, and this side's ends of its two pipes."""

    process: multiprocessing.Process
    inbox: object  # Connection: messages from the process
    outbox: object  # Connection: messages to the process

    def stop(self) -> None:
        if self.process.is_alive():
            self.process.terminate()
            self.process.join()
        self.inbox.close()
        self.outbox.close()


def spawn() -> Spawned:
    """A new workbook process (spawned: no fork of a process that may have threads)."""
    context = multiprocessing.get_context("spawn")
    inbox, child_outbox = context.Pipe(duplex=False)
    child_inbox, outbox = context.Pipe(duplex=False)
    process = context.Process(
        target=_entry, args=(child_inbox, child_outbox, os.getpid()), daemon=True
    )
    process.start()
    child_inbox.close()
    child_outbox.close()
    return Spawned(process, inbox, outbox)


def _entry(inbox, outbox, parent_pid: int) -> None:
    # Ctrl-C reaches the whole process group: the parent stops this process, quietly; and
    # a parent killed outright (kill -9) takes this process with it
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent(parent_pid)
    from pipeline.workbook_job import serve  # the heavy imports happen in the new process

    serve(inbox, outbox)
