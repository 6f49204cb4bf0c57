"""One partition of a Dask run, on a worker: its scenarios expanded from the source rows it
touches, computed by the local engine's model, written as results/part-NNNNN.parquet, and
summed up in small aggregates the client merges (engine.merge)."""

from __future__ import annotations

import hashlib
import os
import socket
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.engine.findings import partition_findings
from pipeline.model.overflow import refused_rows
from pipeline.model.roofline import compute_record
from pipeline.model.series import series_lines
from pipeline.model.summary import critical_batches, derated_table, not_fitting
from pipeline.render.charts.data import FACT_COLUMNS
from pipeline.render.charts.grid import chart_grids
from pipeline.render.tables import write_csv, write_parquet
from pipeline.scenarios.expand import idle_chips
from pipeline.scenarios.plan import Planned

SLOWEST = 10  # the slowest scenarios each partition sends back


class FolderUnseen(Exception):
    """The worker does not see the run's results folder (args: the folder, the worker's
    host): -o is not on a file system the workers share, or the run ended meanwhile."""


def part_name(number: int) -> str:
    return f"part-{number:05d}"


def compute_partition(part: Planned, lo: int, hi: int, number: int, folder: str, csv: bool) -> dict:
    """Compute scenarios lo..hi of `part` (Planned.part's), write them into `folder`/results
    (under a temporary name, then renamed; the client lists only the files of the partitions
    it merged, and removes any other) and return the aggregates: rows, file checksums,
    counts per hardware/op/bound, the series' partial lines, the critical batches, the
    findings, the derated rows, the chart grids (charts.grid), the refused rows and the
    idle-chip table. The client makes `folder`/results before any task runs; a task never
    makes a folder, so one still running after its run ended (Ctrl-C, a lost scheduler)
    cannot bring back the run's removed folder: its write fails instead (FolderUnseen)."""
    out = Path(folder) / "results"
    if not out.is_dir():
        raise FolderUnseen(str(out), socket.gethostname())
    frame = part.rows(lo, hi)
    results, facts = compute_record(frame)
    own = frame["own_numbers"].to_numpy(dtype=bool)
    refused = refused_rows(results)
    bad = np.zeros(len(results), dtype=bool)
    bad[refused.index.to_numpy()] = True
    refusals = [
        (int(frame["line"].iat[p]), str(results["series"].iat[p]), str(refused.iat[k, 0]),
         f"{refused.iat[k, 1]} (at '{results['name'].iat[p]}')")
        for k, p in enumerate(refused.index.tolist())
    ]  # fmt: skip
    if bad.any():
        results = results[~bad].reset_index(drop=True)
        facts = facts[~bad].reset_index(drop=True)
        own = own[~bad]
    files = {}
    name = part_name(number)
    writers = [(".parquet", write_parquet)] + ([(".csv", write_csv)] if csv else [])
    for suffix, write in writers:
        final = out / f"{name}{suffix}"
        tmp = out / f".{name}{suffix}.{os.getpid()}.tmp"
        try:
            write(results, tmp)
        except FileNotFoundError:  # the folder went since the look above: the run ended
            raise FolderUnseen(str(out), socket.gethostname()) from None
        except BaseException:  # a full disk: no half file left for the client to remove
            tmp.unlink(missing_ok=True)
            raise
        os.replace(tmp, final)
        files[f"results/{final.name}"] = _sha256(final)
    return {
        "number": number,
        "rows": len(results),
        "files": files,
        "counts": _counts(results, own),
        "lines": series_lines(results, facts),  # the local engine's, merged by merge_lines
        "critical": critical_batches(results),  # per series, chip and dtypes: low, high
        "slowest": results.nlargest(SLOWEST, "t_lower")[["name", "hardware", "t_lower", "bound"]]
        .astype({"hardware": str, "bound": str})
        .to_dict("records"),
        "refused": refusals,
        "findings": partition_findings(results, (facts["kind"] == "collective").to_numpy()),
        "derated": derated_table(results),
        "grids": chart_grids(pd.concat([results, facts[list(FACT_COLUMNS)]], axis=1)),
        "idle": idle_chips(frame),  # rows splitting a dim over more chips than it has
    }


def _counts(results: pd.DataFrame, own: np.ndarray) -> pd.DataFrame:
    """Scenarios per hardware, op, bound and fit, and of them those giving their own peak,
    HBM or link numbers (grouped on the categories' codes, not text)."""
    keys = results[["hardware", "op", "bound"]].assign(fits=~not_fitting(results).to_numpy())
    grouped = pd.DataFrame({"scenarios": 1, "own": own.astype(np.int64)}, index=results.index)
    counts = grouped.groupby([keys[c] for c in keys.columns], observed=True, sort=False).sum()
    return counts.reset_index().astype({"hardware": str, "op": str, "bound": str, "fits": bool})


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
