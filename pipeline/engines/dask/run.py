"""`pipeline run FILE --engine dask` (docs/input.md#beyond-one-machine): the client checks
the source rows and plans partitions by index range of their expansion (scenarios.plan);
Dask workers expand, compute and write each partition (engines.dask.partition), submitted a few
at a time (engines.dask.cluster); the client merges small aggregates only and writes them beside
the partitions, atomically, as a local run does.

Dask is imported (engines.dask.cluster) only when this engine runs: the local engine needs none."""

from __future__ import annotations

import math
import os
import shutil
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from numbers import Integral, Real
from pathlib import Path

from pipeline.api.analyze import check_arguments, check_models_rows, kept_columns, strict_refusal
from pipeline.calibration.file import calibration_from
from pipeline.catalogs.hardware import Catalog, catalog_from
from pipeline.catalogs.llms import models_from
from pipeline.catalogs.prices import load_prices, price_files
from pipeline.engines.dask.cluster import (
    CONNECT_TIMEOUT,
    DEFAULT_WORKER_WAIT,
    EngineError,
    Progress,
    compute_partitions,
    connected,
    dask_module,
    scheduler_problem,
)
from pipeline.engines.dask.merge import Merged, merge_partition
from pipeline.engines.dask.partition import FolderUnseen, compute_partition, part_name, send_part
from pipeline.engines.dask.views import dask_notice, dask_record
from pipeline.errors import RowProblem, described, printable
from pipeline.i18n import use_lang
from pipeline.model.step_totals import STEP_ROWS
from pipeline.record import Record
from pipeline.render import format as fmt
from pipeline.run.folder import OutputFolder
from pipeline.run.manifest import engine_entry, file_entries, write_manifest
from pipeline.run.tables import write_csv
from pipeline.run.write import Options, write_views
from pipeline.scenarios import load_scenarios

__all__ = ["CONNECT_TIMEOUT", "DEFAULT_WORKER_WAIT", "DaskRun", "EngineError", "run_dask"]

DEFAULT_PARTITION_ROWS = 1_000_000
# the smallest partition of a run with more scenarios than that: a partition costs a task, a
# file and its aggregates, which 1,000 scenarios take about as long to compute
MIN_PARTITION_ROWS = 1_000
RETRIES = 2  # a partition whose task raised is tried this many more times (a lost worker's
# tasks are moved by Dask itself, up to its distributed.scheduler.allowed-failures)


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
    files: tuple[str, ...]  # every file written, as manifest.json lists them (and itself)
    record: Record  # what the report, workbook and charts show (engines.dask.views): its summary
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
    keep_columns: str | Sequence[str] = (),
    workers: int | None = None,
    timeout: float = CONNECT_TIMEOUT,
    worker_wait: float = DEFAULT_WORKER_WAIT,
    name: str | None = None,
    strict: bool = False,
    options: Options | None = None,
    progress: Progress | None = None,
    models=None,
    calibration=None,
    lang: str | None = None,
    models_rows: int = STEP_ROWS,
    prices=None,
) -> DaskRun:
    """Check `path`, compute its scenarios on Dask (`scheduler`: an address, else a
    LocalCluster of `workers` processes, one per core) in partitions of `partition_rows`,
    and write OUT_DIR/<name>/ (name: the file's stem): results/part-NNNNN.parquet (and .csv
    with `csv`), errors.csv, summary.json, the charts, workbook.xlsx, report.html (as
    `options`, run.write.Options, say: all by default) and manifest.json. A failed run leaves
    the folder as it was. `hardware`: as for pipeline.analyze (paths, DataFrames, a Catalog);
    `strict`: any rejected row raises InvalidScenarios, nothing computed. `worker_wait`:
    seconds with no worker before the run stops (EngineError); `progress(done, of,
    wait_left)` is called as partitions complete, and while it waits for a worker.
    `keep_columns`, `models`, `calibration`, `models_rows`, `prices`: as for pipeline.analyze
    (the prices and the calibration travel to the workers with the rows); `lang`: as for
    Analysis.write."""
    args = dict(locals())
    _check_arguments(args)
    catalog = catalog_from(hardware)
    args["models"] = None if models is None else models_from(models, strict=True)
    args["calibration"] = None if calibration is None else calibration_from(calibration)
    args["prices"] = None if prices is None else load_prices(prices, catalog)
    module = dask_module()
    try:
        with use_lang(lang):
            return _run(module, Path(path), Path(out_dir), catalog, args)
    except MemoryError:
        raise EngineError(
            "out of memory in this process, the Dask client (it holds the file's rows, a "
            "sample of 50,000 scenarios and a few small tables per partition): fewer source "
            "rows or fleet values, or a larger --partition-rows (fewer partitions), need less"
        ) from None


def _run(module, path: Path, out_dir: Path, catalog: Catalog, args: dict) -> DaskRun:
    """run_dask's work, its arguments checked."""
    started = datetime.now(UTC).isoformat(timespec="seconds")
    t0 = time.perf_counter()
    loaded = load_scenarios(
        path, catalog, sheet=args["sheet"], encoding=args["encoding"], planned=True,
        keep_columns=kept_columns(args["keep_columns"]), models=args["models"],
    )  # fmt: skip
    if args["strict"] and loaded.problems:
        raise strict_refusal(loaded, catalog)
    plan = loaded.planned
    total, rows, csv = plan.total, args["partition_rows"], args["csv"]
    if rows < MIN_PARTITION_ROWS < total:
        raise EngineError(
            f"{printable(path)}: partitions of {fmt.plural(rows, 'scenario')} are too small "
            f"to pay their Dask overhead (a task, a file and its aggregates each) in a run of "
            f"{fmt.count(total)}: give --partition-rows {fmt.count(MIN_PARTITION_ROWS)} or "
            f"more (default {fmt.count(DEFAULT_PARTITION_ROWS)})"
        )
    options = args["options"] or Options()
    t_load = time.perf_counter() - t0
    target = out_dir / (args["name"] or path.stem)
    merged = Merged()
    scheduler = args["scheduler"]
    cal, cal_files = args["calibration"] or (None, ())
    priced = args["prices"]  # catalogs.prices.Prices, or None
    usd = None if priced is None else priced.usd_per_chip_hour
    inputs = [path, *catalog.files, *cal_files, *price_files(priced)]
    with OutputFolder(target, inputs=inputs, force=args["force"]) as tmp:
        (tmp / "results").mkdir()  # before any task: a task never makes a folder (partition)
        with connected(module, scheduler, args["workers"], args["timeout"]) as client:
            token = uuid.uuid4().hex[:8]  # a run's own task keys, on a shared scheduler
            sent: dict[int, str] = {}  # partition -> the file its rows were sent in

            def submit(k: int, lo: int, hi: int):
                part, a, b = plan.part(lo, hi)  # built as it is submitted, never all at once
                sent[k] = send_part(tmp, k, part, cal, args["models_rows"], usd)  # not in graph
                return client.submit(compute_partition, sent[k], a, b, k, str(tmp), csv,
                                     key=f"roofline-{token}-{part_name(k)}", retries=RETRIES,
                                     pure=False)  # fmt: skip

            def merge(got: dict) -> None:
                merge_partition(merged, got)
                Path(sent.pop(got["number"])).unlink(missing_ok=True)  # done with its rows

            cuts = plan.cuts(rows)  # every `rows` scenarios, never inside a group
            try:
                partitions = compute_partitions(
                    client, module, cuts, submit, merge,
                    worker_wait=args["worker_wait"], progress=args["progress"], where=scheduler,
                )  # fmt: skip
            except FolderUnseen as exc:
                raise EngineError(
                    f"a Dask worker on {printable(exc.args[1])} does not see the run's folder "
                    f"{printable(exc.args[0])}: every worker must see -o's folder at the same "
                    "path (a shared file system)"
                ) from None
        warnings = (*catalog.warnings, *loaded.warnings)  # the idle chips': dask_record's
        timings = {"load": t_load, "compute": time.perf_counter() - t0 - t_load}
        record, _ = dask_record(merged.partial, loaded, catalog, warnings, started, timings, cal,
                                priced)  # fmt: skip
        problems = record.problem_list
        if problems:
            write_csv(record.problems, tmp / "errors.csv")
        first = [dask_notice(record, partitions)]
        _, notices, _ = write_views(
            record, tmp, options, target.name, lambda stage: None, tables=False, notices=first
        )
        entries = _entries(tmp, merged)
        timings["total"] = time.perf_counter() - t0
        write_manifest(tmp, record, target.name, notices, entries, timings,
                       engine=engine_entry("dask", merged.partition_list()))  # fmt: skip
    return DaskRun(
        folder=target,
        scenarios=merged.rows,
        partitions=partitions,
        source_rows=loaded.source_rows,
        rejected_rows=record.summary.rejected_rows,
        problems=problems,
        warnings=record.warnings,
        merged=merged,
        files=(*(e["path"] for e in entries), "manifest.json"),
        record=record,
    )


def _entries(tmp: Path, merged: Merged) -> list[dict]:
    """The manifest's file entries: the files the client wrote, and of results/ only the
    partitions' files it merged (anything else there, a half-written `.tmp` file of a worker
    killed mid-write, is removed). A partition's SHA-256 is the one its worker computed as it
    wrote it (the client never reads the rows back to hash them)."""
    digests = {name: d for p in merged.partitions.values() for name, d in p["files"].items()}
    for entry in (tmp / "results").iterdir():
        if f"results/{entry.name}" not in digests:
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
    own = sorted(p for p in tmp.rglob("*") if p.is_file() and p.parent != tmp / "results")
    entries = file_entries(tmp, own)
    for name in sorted(digests):
        info = (tmp / name).stat()
        entries.append({"path": name, "bytes": info.st_size, "sha256": digests[name],
                        "mtime_ns": info.st_mtime_ns})  # fmt: skip
    return sorted(entries, key=lambda e: e["path"])


def _check_arguments(args: dict) -> None:
    """run_dask's arguments, checked as pipeline.analyze checks its own: TypeError for a value
    of the wrong kind, ValueError for one out of range."""
    for label in ("path", "out_dir"):
        if not isinstance(args[label], str | os.PathLike):
            raise TypeError(f"{label} must be a path (str or pathlib.Path), not "
                            f"{described(args[label])}")  # fmt: skip
    rows = args["partition_rows"]
    if isinstance(rows, bool) or not isinstance(rows, Integral):
        raise TypeError(
            f"partition_rows must be a whole number (int) of 1 or more, not {described(rows)}"
        )
    if rows < 1:
        raise ValueError(f"partition_rows must be 1 or more, not {fmt.count(rows)}")
    check_models_rows(args["models_rows"])
    texts = ("scheduler", "name", "sheet", "encoding", "lang")
    check_arguments({k: args[k] for k in ("csv", "force", "strict")}, {k: args[k] for k in texts})
    if args["options"] is not None and not isinstance(args["options"], Options):
        raise TypeError(
            "options must be a pipeline.run.write.Options (Options(workbook=False), ...) or "
            f"None, not {described(args['options'])}"
        )
    workers = args["workers"]
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, Integral)):
        raise TypeError(f"workers must be a whole number (int) or None, not {described(workers)}")
    if workers is not None and workers < 1:
        raise ValueError(f"workers must be 1 or more, not {fmt.count(workers)}")
    for label in ("timeout", "worker_wait"):
        value = args[label]
        if isinstance(value, bool) or not isinstance(value, Real):
            raise TypeError(f"{label} must be a number of seconds, not {described(value)}")
        if not 0 < value < math.inf:
            raise ValueError(f"{label} must be a number of seconds above 0, not {value}")
    if args["progress"] is not None and not callable(args["progress"]):
        raise TypeError(f"progress must be a function or None, not {described(args['progress'])}")
    if args["scheduler"] is not None and (problem := scheduler_problem(args["scheduler"])):
        raise ValueError(problem)
