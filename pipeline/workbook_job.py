"""The workbook stage of a run: in this process for small runs, in its own process for big ones.

XlsxWriter is pure Python and the slowest writer of a big run, so it gets a core of its own
while this process computes, draws the charts and writes results.csv, results.parquet and the
report. The process starts before the scenario file is loaded and loads the file's first lines
itself (`scenarios.load_head`): the Results and Inputs sheets only hold the rows under their
caps, and every check is made row by row, so those rows can be computed and written while this
process is still loading the whole file.

Once the whole run is computed, `submit` checks that the process holds the rows the run has at
the top (by their line numbers; should they differ, it sends the right ones and the process
starts the book again) and sends what needs the whole run, all of it small: the Summary
sheet's counts, the hardware records, the first rejected rows, the run's metadata. The chart
list follows once the charts exist; the book is then finished.
The child imports only what the workbook needs (no matplotlib, no Jinja).

Whether a run gets a process is decided twice: by the file's size before the load (so that
the process can start at once), and by the number of scenarios after it (`for_run`: a small
file whose sweeps expand to many scenarios gets a process then, and sends it the rows).
"""

from __future__ import annotations

import hashlib
import queue
import threading
import time
import traceback
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline import workbook_process
from pipeline.errors import OutputError, PipelineError
from pipeline.excel import WorkbookWriter, summary_counts, write_workbook
from pipeline.hardware import Catalog
from pipeline.meta import Chart
from pipeline.roofline import compute_roofline
from pipeline.scenarios import load_head
from pipeline.workbook_process import Spawned

PROCESS_MIN_ROWS = 20_000  # scenarios: a small file whose sweeps expand past it gets a process
HEAD_MARGIN = 1.05  # lines read per row the workbook keeps, for rejected rows
HEAD_EXTRA_LINES = 1000  # and these, so that small caps still read a few lines more


@dataclass(frozen=True)
class Job:
    """What the workbook of one run needs before the run is loaded."""

    scenarios: Path  # the input file
    path: Path  # where workbook.xlsx goes
    run_dir: Path  # the folder chart paths are relative to
    catalog: Catalog
    max_rows: int  # --max-rows
    rows_cap: int  # --workbook-rows
    input_rows_cap: int  # --workbook-input-rows
    own_head: bool = True  # False: the process waits for the rows instead of loading them


def start(job: Job, spawned: Spawned | None = None) -> InProcess | Process:
    """The workbook stage of a run: in its own process when the input is big, in `spawned`
    when one was started already (the command line starts one before its own imports)."""
    if spawned is not None:
        return Process(job, spawned)
    return Process(job) if workbook_process.wants_process(job.scenarios) else InProcess(job)


def for_run(workbook: InProcess | Process, scenarios: int) -> InProcess | Process:
    """The workbook stage once the run is loaded: a small file whose sweeps expanded it to many
    scenarios gets its own process after all. The process is sent its rows: its file's first
    lines may expand to every scenario of the run, which it has no need to compute again."""
    if isinstance(workbook, InProcess) and scenarios >= PROCESS_MIN_ROWS:
        return Process(replace(workbook.job, own_head=False))
    return workbook


class InProcess:
    """Small runs: the book is written here, at `finish`."""

    process = None

    def __init__(self, job: Job):
        self.job = job
        self.seconds = 0.0
        self.run: tuple = ()
        self.charts: tuple[list[Chart], list[str]] = ([], [])

    def submit(self, meta, results, inputs, errors, hardware, lines=None) -> None:
        """The whole run: its metadata, results, input rows, rejected rows, hardware records
        (and each result's line in the input)."""
        self.run = (meta, results, inputs, errors, hardware)

    def send_charts(self, charts: list[Chart], notices: list[str]) -> None:
        self.charts = (charts, notices)

    def finish(self) -> list[str]:
        """Write the book; its notices."""
        start_time = time.perf_counter()
        meta, results, inputs, errors, hardware = self.run
        charts, chart_notices = self.charts
        job = self.job
        notices = write_workbook(
            job.path, meta, results, inputs, errors, hardware, charts, job.run_dir,
            max_rows=job.rows_cap, max_input_rows=job.input_rows_cap, chart_notices=chart_notices,
        )  # fmt: skip
        self.seconds = time.perf_counter() - start_time
        return notices

    def stop(self) -> None:
        pass


class Process:
    """Big runs: the book is written by a process of its own, started here (see the module)."""

    def __init__(self, job: Job, spawned: Spawned | None = None):
        self.job = job
        self.seconds = 0.0
        self.rows_sent = False  # True when the process could not use its own first rows
        self.spawned = spawned or workbook_process.spawn()
        self.process, self.inbox, self.outbox = (
            self.spawned.process, self.spawned.inbox, self.spawned.outbox
        )  # fmt: skip
        try:
            self._send(job)
        except BaseException:
            self.stop()
            raise

    def submit(self, meta, results, inputs, errors, hardware, lines) -> None:
        """As InProcess.submit; what is sent is small whatever the run's size (see the module)."""
        job = self.job
        _, written = self._receive()
        rows = (results.iloc[: job.rows_cap], inputs.iloc[: job.input_rows_cap])
        same = written is not None and written == _rows_digest(
            rows[0], np.asarray(lines)[: job.rows_cap], rows[1]
        )
        self.rows_sent = not same
        self._send(None if same else rows)
        counts, errors_head = summary_counts(results), errors.iloc[: job.rows_cap]
        self._send((meta, counts, len(inputs), errors_head, len(errors), hardware))

    def send_charts(self, charts: list[Chart], notices: list[str]) -> None:
        self._send((charts, notices))

    def finish(self) -> list[str]:
        """Wait for the book; its notices."""
        _, notices, self.seconds = self._receive()
        self.process.join()
        return notices

    def stop(self) -> None:
        self.spawned.stop()

    def _send(self, message) -> None:
        try:
            self.outbox.send(message)
        except OSError as exc:  # the process has stopped: it sent why before it did
            self._receive()
            raise OutputError("the workbook process stopped before it was done") from exc

    def _receive(self) -> tuple:
        try:
            message = self.inbox.recv()
        except EOFError as exc:
            raise OutputError("the workbook process ended without writing workbook.xlsx") from exc
        if message[0] == "error":
            raise OutputError(message[1])
        if message[0] == "bug":  # as a bug in this process would: not a run's error
            raise RuntimeError(f"the workbook process failed:\n{message[1]}")
        return message


def _rows_digest(results: pd.DataFrame, lines, inputs: pd.DataFrame) -> str:
    """What a book's rows hold: every value of its results and input rows, and the input line
    of each result (a row's values hash the same whatever its column's categories)."""
    h = hashlib.sha256()
    for part in (
        pd.util.hash_pandas_object(results, index=False).to_numpy(),
        np.asarray(lines, dtype=np.int64),
        pd.util.hash_pandas_object(inputs, index=False).to_numpy(),
    ):
        data = np.ascontiguousarray(part)
        h.update(len(data).to_bytes(8, "little") + data.tobytes())
    return h.hexdigest()


def _writer(job: Job) -> WorkbookWriter:
    return WorkbookWriter(job.path, max_rows=job.rows_cap, max_input_rows=job.input_rows_cap)


def head_rows(job: Job) -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray] | None:
    """The results and input rows the workbook keeps, from the file's first lines alone, and
    each result's line; None when those lines cannot tell (see the module)."""
    want = max(job.rows_cap, job.input_rows_cap)
    lines = int(want * HEAD_MARGIN) + HEAD_EXTRA_LINES
    try:
        head = load_head(job.scenarios, job.catalog, lines, job.max_rows)
        if head is None:
            return None
        loaded, more = head
        results = compute_roofline(loaded.frame)
    except Exception:  # the parent's whole load says what is wrong, or sends the rows
        return None
    if more and (len(results) < job.rows_cap or loaded.source_rows < job.input_rows_cap):
        return None  # too many rejected rows in the first lines
    lines = loaded.frame["line"].to_numpy()[: job.rows_cap]
    return results.iloc[: job.rows_cap], loaded.inputs.iloc[: job.input_rows_cap], lines


def serve(inbox, outbox) -> None:
    """Runs in the workbook process: its job first, then the run's messages. They are read as
    they come, by a thread, so the parent never waits while rows are written. Every message
    back is a small tuple: ("error", text) for a run's error, ("bug", traceback) for a bug."""
    received: queue.Queue = queue.Queue()
    threading.Thread(target=_read_all, args=(inbox, received), daemon=True).start()

    def receive():
        message = received.get()
        if isinstance(message, BaseException):
            raise message
        return message

    try:
        job = receive()
        start_time = time.perf_counter()
        rows = head_rows(job) if job.own_head else None
        outbox.send(("head", None if rows is None else _rows_digest(rows[0], rows[2], rows[1])))
        writer = None
        if rows is not None:
            writer = _writer(job)
            writer.write_rows(rows[0], rows[1])
        correct = receive()  # None: the rows written are the run's
        if correct is not None:
            if writer is not None:
                writer.discard()
            writer = _writer(job)
            writer.write_rows(*correct)
        meta, counts, inputs_total, errors, errors_total, hardware = receive()
        charts, chart_notices = receive()
        notices = writer.finish(
            meta, counts, inputs_total, errors, errors_total, hardware, charts, chart_notices,
            job.run_dir,
        )  # fmt: skip
        outbox.send(("ok", notices, time.perf_counter() - start_time))
    except EOFError:  # the parent gave up
        return
    except PipelineError as exc:
        outbox.send(("error", str(exc)))
    except Exception:  # a bug: hand the traceback to the parent rather than dying silently
        outbox.send(("bug", traceback.format_exc()))
    finally:
        outbox.close()


def _read_all(inbox, received: queue.Queue) -> None:
    """Every message from the parent, in order; then the exception that ended them (EOFError
    when the parent closed its end; anything else, say a message that cannot be unpickled,
    is handed on as it is, so that serve() reports it rather than waiting forever)."""
    while True:
        try:
            received.put(inbox.recv())
        except (EOFError, OSError) as exc:
            received.put(EOFError(str(exc)))
            return
        except BaseException as exc:
            received.put(exc)
            return
