"""One partition of a Dask run, on a worker: its scenarios expanded from the source rows it
touches (sent through the run's folder, never inside Dask's task graph), computed by the local
engine's model, written as results/part-NNNNN.parquet, and reduced to its Partial
(summary.partial: every statistic of the run), which the client merges."""

from __future__ import annotations

import os
import pickle
import socket
from pathlib import Path

from pipeline.model.step_totals import STEP_ROWS
from pipeline.run.tables import write_csv, write_parquet
from pipeline.scenarios.plan import Planned
from pipeline.summary.partial import computed
from pipeline.textfile import atomic_file, file_sha256


class FolderUnseen(Exception):
    """The worker does not see the run's results folder (args: the folder, the worker's
    host): -o is not on a file system the workers share, or the run ended meanwhile."""


def part_name(number: int) -> str:
    return f"part-{number:05d}"


def send_part(
    folder: Path,
    number: int,
    part: Planned,
    calibration=None,
    models_rows: int = STEP_ROWS,
    prices=None,
) -> str:
    """Write what partition `number` needs (Planned.part's rows, the calibration, the Models
    table's cap, the prices: USD per chip-hour by chip) into `folder`/results, a hidden file
    the worker reads (compute_partition given its path): the task graph then holds a path,
    not the rows, which can be hundreds of MB (Dask warns of a graph past 10 MB, and its
    scheduler keeps each task's graph while it runs), and a worker lost midway leaves it
    there for the next. Written whole (a temporary name, renamed); the client removes it once
    the partition is merged, and the manifest lists none left."""
    path = Path(folder) / "results" / f".{part_name(number)}.input.pickle"
    with atomic_file(path, path.with_name(f"{path.name}.{os.getpid()}.tmp")) as tmp:
        with open(tmp, "wb") as f:
            sent = (part, calibration, models_rows, prices)
            pickle.dump(sent, f, protocol=pickle.HIGHEST_PROTOCOL)
    return str(path)


def compute_partition(
    part: Planned | str,
    lo: int,
    hi: int,
    number: int,
    folder: str,
    csv: bool,
    calibration=None,
    models_rows: int = STEP_ROWS,
    prices=None,
) -> dict:
    """Compute scenarios lo..hi of `part` (Planned.part's, or the path send_part wrote it, the
    calibration and the prices to), write them into `folder`/results
    (under a temporary name, then renamed; the client lists only the files of the partitions
    it merged, and removes any other) and return its number, the files' SHA-256, the rows'
    Partial (their statistics, refusals, idle chips and chart grids). The client
    makes `folder`/results before any task runs; a task never makes a folder, so one still
    running after its run ended (Ctrl-C, a lost scheduler) cannot bring back the run's
    removed folder: its write fails instead (FolderUnseen)."""
    out = Path(folder) / "results"
    if not out.is_dir():
        raise FolderUnseen(str(out), socket.gethostname())
    if isinstance(part, str):  # sent through the run's folder (send_part)
        try:
            with open(part, "rb") as f:
                part, calibration, models_rows, prices = pickle.load(f)
        except FileNotFoundError:  # the folder went since the look above: the run ended
            raise FolderUnseen(str(out), socket.gethostname()) from None
    frame = part.rows(lo, hi)
    results, _, partial, _ = computed(
        frame, grids=True, calibration=calibration, models_rows=models_rows, prices=prices
    )
    files = {}
    name = part_name(number)
    writers = [(".parquet", write_parquet)] + ([(".csv", write_csv)] if csv else [])
    for suffix, write in writers:
        final = out / f"{name}{suffix}"
        try:  # a full disk leaves no half file for the client to remove
            with atomic_file(final, out / f".{name}{suffix}.{os.getpid()}.tmp") as tmp:
                write(results, tmp)
        except FileNotFoundError:  # the folder went since the look above: the run ended
            raise FolderUnseen(str(out), socket.gethostname()) from None
        files[f"results/{final.name}"] = file_sha256(final)
    return {
        "number": number,
        "files": files,
        "partial": partial,  # every statistic of these rows (summary.partial), merged by the client
    }
