"""`pipeline run FILE --engine dask` (docs/input.md#beyond-one-machine): the client checks
the source rows and plans partitions by index range of their expansion (scenarios.plan);
Dask workers expand, compute and write each partition (engine.partition); the client merges
small aggregates only and writes them beside the partitions, atomically, as a local run does.

Dask is imported here only, when this engine runs: the local engine needs none of it."""

from __future__ import annotations

import json
import os
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from pipeline.analysis import strict_refusal
from pipeline.engine.merge import Merged, merge_partition
from pipeline.engine.partition import compute_partition, part_name
from pipeline.engine.views import dask_notice, dask_record
from pipeline.errors import PipelineError, RowProblem, printable
from pipeline.model.catalog import Catalog, load_catalog
from pipeline.record import Record
from pipeline.render.tables import write_csv
from pipeline.run.folder import OutputFolder
from pipeline.run.manifest import file_entries
from pipeline.run.write import Options, write_views
from pipeline.scenarios import load_scenarios
from pipeline.scenarios.expand import idle_chip_words, merge_idle
from pipeline.version import __version__

DEFAULT_PARTITION_ROWS = 1_000_000
CONNECT_TIMEOUT = 10  # seconds to reach a --scheduler before saying it cannot be reached
RETRIES = 2  # a partition whose task raised is tried this many more times (a lost worker's
# tasks are moved by Dask itself, up to its distributed.scheduler.allowed-failures)


class EngineError(PipelineError):
    """The Dask engine cannot run: Dask missing, or its scheduler unreachable."""


@dataclass(frozen=True)
class DaskRun:
    """What a Dask run wrote and found: the folder, the counts, every problem and warning."""

    folder: Path
    scenarios: int
    partitions: int
    source_rows: int
    rejected_rows: int
    problems: tuple[RowProblem, ...]
    warnings: tuple[str, ...]
    merged: Merged
    record: Record  # what the report, workbook and charts show (engine.views): its summary
    # covers every scenario, its results are a sample of them when `record.sampled`


def run_dask(
    path: str | Path,
    out_dir: str | Path,
    *,
    hardware=None,
    scheduler: str | None = None,
    partition_rows: int = DEFAULT_PARTITION_ROWS,
    csv: bool = False,
    force: bool = False,
    sheet: str | None = None,
    encoding: str | None = None,
    workers: int | None = None,
    timeout: float = CONNECT_TIMEOUT,
    name: str | None = None,
    strict: bool = False,
    options: Options | None = None,
) -> DaskRun:
    """Check `path`, compute its scenarios on Dask (`scheduler`: an address, else a
    LocalCluster of `workers` processes, one per core) in partitions of `partition_rows`,
    and write OUT_DIR/<name>/ (name: the file's stem): results/part-NNNNN.parquet (and .csv
    with `csv`), errors.csv, summary.json, the charts, workbook.xlsx, report.html (as
    `options`, run.write.Options, say: all by default) and manifest.json. A failed run leaves
    the folder as it was. `hardware`: as for pipeline.analyze (paths, DataFrames, a Catalog);
    `strict`: any rejected row raises InvalidScenarios, nothing computed."""
    catalog = hardware if isinstance(hardware, Catalog) else load_catalog(
        [] if hardware is None else list(hardware) if isinstance(hardware, list | tuple)
        else [hardware]
    )  # fmt: skip
    if partition_rows < 1:
        raise ValueError(f"partition_rows must be 1 or more, not {partition_rows}")
    client_module = _dask()
    started = datetime.now(UTC).isoformat(timespec="seconds")
    t0 = time.perf_counter()
    path = Path(path)
    loaded = load_scenarios(path, catalog, sheet=sheet, encoding=encoding, planned=True)
    if strict and loaded.problems:
        raise strict_refusal(loaded, catalog)
    plan = loaded.planned
    total = plan.total
    options = options or Options()
    t_load = time.perf_counter() - t0
    ranges = [(lo, min(lo + partition_rows, total)) for lo in range(0, total, partition_rows)]
    target = Path(out_dir) / (name or path.stem)
    merged = Merged()
    with OutputFolder(target, inputs=[path, *catalog.files], force=force) as tmp:
        with _client(client_module, scheduler, workers, timeout) as client:
            token = uuid.uuid4().hex[:8]  # a run's own task keys, on a shared scheduler
            futures = []
            for k, (lo, hi) in enumerate(ranges):
                part, a, b = plan.part(lo, hi)
                futures.append(
                    client.submit(
                        compute_partition,
                        part,
                        a,
                        b,
                        k,
                        str(tmp),
                        csv,
                        key=f"roofline-{token}-{part_name(k)}",
                        retries=RETRIES,
                        pure=False,
                    )  # fmt: skip
                )
            for future in client_module.as_completed(futures):
                merge_partition(merged, future.result())
                future.release()  # the client keeps the aggregates, never the rows
        problems = (*loaded.problems, *merged.refused_problems(loaded.source))
        lines = plan.frame["line"].to_numpy()[plan.valid]
        per_line = pd.Series(plan.counts[plan.valid]).groupby(lines).sum()
        idle = merge_idle(merged.idle, {int(k): int(v) for k, v in per_line.items()})
        warnings = (*catalog.warnings, *loaded.warnings, *idle_chip_words(idle, path))
        errors = pd.DataFrame(
            [(p.line, p.name, p.column, p.reason) for p in problems],
            columns=["line", "name", "column", "reason"],
        )
        if len(errors):
            write_csv(errors, tmp / "errors.csv")
        rejected = len({p.line for p in problems})
        summary = merged.summary(total, len(ranges))
        (tmp / "summary.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
        timings = {"load": t_load, "compute": time.perf_counter() - t0 - t_load}
        record = dask_record(merged, loaded, catalog, problems, warnings, started, timings)
        first = [dask_notice(record, len(ranges))]
        _, notices, _ = write_views(
            record, tmp, options, target.name, lambda stage: None, tables=False, notices=first
        )
        files = sorted(p for p in tmp.rglob("*") if p.is_file())
        manifest = {
            "tool": "roofline-pipeline",
            "engine": "dask",
            "run_name": target.name,
            "input_path": str(path),
            "started": started,
            "tool_version": __version__,
            "catalog_version": catalog.version,
            "source_rows": loaded.source_rows,
            "scenarios": merged.rows,
            "rejected_rows": rejected,
            "partitions": merged.partition_list(),
            "warnings": list(warnings),
            "notices": notices,
            "files": _entries(tmp, files, merged),
            "timings_seconds": {"total": round(time.perf_counter() - t0, 3)},
        }
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", "utf-8")
    return DaskRun(
        folder=target,
        scenarios=merged.rows,
        partitions=len(ranges),
        source_rows=loaded.source_rows,
        rejected_rows=rejected,
        problems=problems,
        warnings=warnings,
        merged=merged,
        record=record,
    )


def _entries(tmp: Path, files: list[Path], merged: Merged) -> list[dict]:
    """The manifest's file entries; a partition's SHA-256 is the one its worker computed as
    it wrote it (the client never reads the rows back to hash them)."""
    digests = {name: d for p in merged.partitions.values() for name, d in p["files"].items()}
    entries = []
    for path in files:
        name = path.relative_to(tmp).as_posix()
        if name not in digests:
            entries += file_entries(tmp, [path])
            continue
        info = path.stat()
        entries.append({"path": name, "bytes": info.st_size, "sha256": digests[name],
                        "mtime_ns": info.st_mtime_ns})  # fmt: skip
    return entries


def _dask():
    """dask.distributed, or a clear error saying how to install it."""
    try:
        import distributed
    except ImportError:
        raise EngineError(
            "--engine dask needs Dask: pip install 'roofline-pipeline[dask]'"
        ) from None
    return distributed


class _client:
    """A Client on `scheduler` (reached within `timeout` seconds, else EngineError), or on a
    LocalCluster this run starts and stops: `workers` processes, one thread each."""

    def __init__(self, module, scheduler: str | None, workers: int | None, timeout: float):
        self.module, self.scheduler, self.timeout = module, scheduler, timeout
        self.workers = workers or os.cpu_count() or 1
        self.cluster = None
        self.client = None

    def __enter__(self):
        if self.scheduler:
            try:
                self.client = self.module.Client(self.scheduler, timeout=self.timeout)
            except (OSError, TimeoutError, ValueError) as exc:
                raise EngineError(
                    f"cannot reach the Dask scheduler at {printable(self.scheduler)} within "
                    f"{self.timeout:g} s ({type(exc).__name__}); start one with `dask "
                    "scheduler` and give its address (tcp://HOST:8786)"
                ) from None
            return self.client
        import dask  # installed with distributed

        # Dask's nanny sets MALLOC_TRIM_THRESHOLD_=65536 in its workers, which turns off
        # glibc's dynamic mmap threshold: then every array past 128 KiB is mapped and
        # unmapped afresh, and its pages faulted in again, which made a partition 25 % (1M
        # rows) to 55 % (500k) slower than the same call in a plain process. The run's own
        # cluster keeps glibc's default; a user's cluster is theirs (README).
        with dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}):
            self.cluster = self.module.LocalCluster(
                n_workers=self.workers, threads_per_worker=1, processes=True,
                dashboard_address=None, silence_logs=40,
            )  # fmt: skip
        self.client = self.module.Client(self.cluster)
        return self.client

    def __exit__(self, *exc) -> None:
        if self.client is not None:
            self.client.close()
        if self.cluster is not None:
            self.cluster.close()
