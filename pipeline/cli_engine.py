"""`pipeline run --engine dask`: its options, and the run of each input on Dask
(engine.dask_run), reported as the local engine's run is: problems on stderr, one summary
line per input, the same exit statuses."""

from __future__ import annotations

from pathlib import Path

from pipeline.engine.dask_run import DEFAULT_PARTITION_ROWS
from pipeline.errors import printable
from pipeline.render import format as fmt
from pipeline.run.index import failed_entry, index_entry, write_index
from pipeline.run.write import Options, Written

# run's engine options, as data (cli.py makes them click options: only it imports click)
ENGINE_OPTIONS = (
    ("--engine", {"choices": ("local", "dask"), "default": "local", "help": "local: this "
     "process (no server). dask: Dask workers, partition by partition, for sweeps past one "
     "machine (needs roofline-pipeline[dask]); writes results/part-NNNNN.parquet, "
     "summary.json, errors.csv, the charts, workbook.xlsx and report.html (every scenario "
     "counted, a sample of them listed) and manifest.json. Not with --baseline."}),
    ("--scheduler", {"metavar": "ADDRESS", "help": "With --engine dask: a running Dask "
     "scheduler (tcp://HOST:8786), else a local cluster of one worker per core, started and "
     "stopped by the run. The workers must see -o's folder (a shared file system)."}),
    ("--partition-rows", {"min": 1, "default": DEFAULT_PARTITION_ROWS, "help": "With "
     "--engine dask: scenarios per partition (one task, one Parquet file)."}),
    ("--csv", {"is_flag": True, "help": "With --engine dask: also results/part-NNNNN.csv."}),
)  # fmt: skip


def run_on_dask(paths, output_dir: Path, catalog, names, engine: dict, read: dict, how: dict,
                ui) -> int:  # fmt: skip
    """Each input run on Dask; the exit status (0 clean, 1 rows rejected or a failure, 2 an
    option this engine does not take)."""
    from pipeline.engine.dask_run import run_dask  # Dask itself is imported there, lazily

    echo, errors, say = ui  # the command line's problem printer, error guard and echo
    if how["baseline"] is not None:
        say("Error: --baseline compares results.csv files: not with --engine dask (compare "
            "a local run's, or read the partitions back).", err=True)  # fmt: skip
        return 2
    write = dict(how["write"])
    protect = write.pop("protect")  # the inputs: never under an output folder or index.html
    options = Options(**write)
    written = ["results/part-*.parquet", "summary.json"]
    written += [name for name, on in (("plots/*.png", options.plots), ("workbook.xlsx",
                options.workbook), ("report.html", options.report)) if on]  # fmt: skip
    status, runs = 0, []
    for path, name in zip(paths, names, strict=True):
        with errors() as failed:
            got = run_dask(
                path, output_dir, hardware=catalog, scheduler=engine["scheduler"],
                partition_rows=engine["partition_rows"], csv=engine["csv"], force=options.force,
                name=name, strict=how["strict"], options=options, **read,
            )  # fmt: skip
            echo(got.problems, got.warnings)
            status = max(status, 1 if got.problems else 0)
            files = tuple(got.folder / f for f in ("report.html",) if options.report)
            runs.append(index_entry(got.record, Written(got.folder, files, ())))
            if not how["quiet"]:
                b = got.record.summary.bounds
                say(
                    f"{printable(path)}: {fmt.plural(got.scenarios, 'scenario')} in "
                    f"{fmt.plural(got.partitions, 'partition')} (compute-bound "
                    f"{b['compute']:,}, memory-bound {b['memory']:,}, network-bound "
                    f"{b['network']:,}), {fmt.plural(got.rejected_rows, 'rejected row')} -> "
                    f"{printable(got.folder)}/ [{', '.join([*written, 'manifest.json'])}]"
                )
        if failed:
            status = 1
            runs.append(failed_entry(str(path), name, failed[0]))
    if len(paths) > 1 and options.report:  # as the local engine: one page over the inputs
        with errors() as failed:
            index = write_index(output_dir, runs, protect=protect)
            if not how["quiet"]:
                say(f"index of {fmt.plural(len(runs), 'run')} -> {printable(index)}")
        status = 1 if failed else status
    return status
