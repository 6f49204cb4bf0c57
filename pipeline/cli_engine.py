"""`pipeline run --engine dask`: its options, and the run of each input on Dask
(engine.dask_run), reported as the local engine's run is: problems on stderr, one summary
line per input, the same exit statuses; the partitions done on a progress bar."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from pipeline.cli_support import Checked, index_line, input_line, warnings_line
from pipeline.engine.cluster import DEFAULT_WORKER_WAIT, Progress, scheduler_problem
from pipeline.engine.dask_run import DEFAULT_PARTITION_ROWS, MIN_PARTITION_ROWS
from pipeline.errors import printable
from pipeline.i18n import _
from pipeline.render import format as fmt
from pipeline.run.index import failed_entry, index_entry, write_index
from pipeline.run.write import Options, Written
from pipeline.scenarios.xlsx import is_workbook

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
     "--engine dask: scenarios per partition (one task, one Parquet file); at least "
     f"{fmt.count(MIN_PARTITION_ROWS)} in a run of more scenarios than that."}),
    ("--worker-wait", {"above": 0, "default": DEFAULT_WORKER_WAIT, "metavar": "SECONDS",
     "help": "With --engine dask: how long the run waits while the scheduler has no worker "
     "(none started yet, or all killed), the wait shown, before it stops with an error; also "
     "the longest wait for a finished partition's result or the scheduler's answer."}),
    ("--csv", {"is_flag": True, "help": "With --engine dask: also results/part-NNNNN.csv."}),
)  # fmt: skip
DASK_ONLY = ("scheduler", "partition_rows", "worker_wait", "csv")


def run_usage(given: set[str], engine: dict, sheet: str | None, paths: list[Path]) -> str | None:
    """What makes run's options unusable together (a usage error, exit 2), or None. `given`:
    the options given on the command line (or by the environment), whatever their value."""
    if engine["engine"] != "dask":
        named = [f"--{name.replace('_', '-')}" for name in DASK_ONLY if name in given]
        if len(named) == 1:
            return _("{option} is for --engine dask only (this run uses the local engine): add "
                     "--engine dask, or leave it out", option=named[0])  # fmt: skip
        if named:
            return _("{options} and {last} are for --engine dask only (this run uses the local "
                     "engine): add --engine dask, or leave them out",
                     options=", ".join(named[:-1]), last=named[-1])  # fmt: skip
    if engine["scheduler"] is not None and (problem := scheduler_problem(engine["scheduler"])):
        return problem
    if sheet is not None:  # a regular file's first bytes only: a pipe is never read here
        for path in paths:
            if path.is_file() and not is_workbook(path.name, _head(path)):
                return _("--sheet picks a workbook's sheet, and {path} is not a workbook "
                         "(.xlsx): leave --sheet out, or give workbooks only",
                         path=printable(path))  # fmt: skip
    return None


def dask_checked(
    path: Path, catalog, sheet: str | None, encoding: str | None, keep_columns=()
) -> Checked:
    """`path` checked as `run --engine dask` checks it before any worker starts: every row
    (no --max-rows; fleet lists up to the client's limit), nothing expanded or computed.
    `keep_columns`: as --keep-column."""
    from pipeline.scenarios import load_scenarios

    loaded = load_scenarios(
        path, catalog, sheet=sheet, encoding=encoding, planned=True, keep_columns=keep_columns
    )
    warnings = (*catalog.warnings, *loaded.warnings)
    lines = loaded.frame["line"].to_numpy()  # of each valid row, unexpanded
    return Checked(loaded.source, loaded.source_rows, loaded.planned.total, loaded.problems,
                   warnings, lines)  # fmt: skip


def _head(path: Path) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(8)
    except OSError:  # unreadable: the run says so, with the reason
        return b""


def run_on_dask(paths, output_dir: Path, catalog, names, engine: dict, read: dict, how: dict,
                ui) -> int:  # fmt: skip
    """Each input run on Dask; the exit status (0 clean, 1 rows rejected or a failure, 2 an
    option this engine does not take)."""
    from pipeline.engine.dask_run import run_dask  # Dask itself is imported there, lazily

    echo, errors, say, bar = ui  # the command line's problem printer, error guard, echo and bar
    if how["baseline"] is not None:
        say(_("Error: {text}", text=_(
            "--baseline is not taken with --engine dask: compare the finished run with an "
            "earlier one by `pipeline compare EARLIER NEW` (it reads a Dask run's "
            "results/part-*.parquet).")), err=True)  # fmt: skip
        return 2
    write = dict(how["write"])
    protect = write.pop("protect")  # the inputs: never under an output folder or index.html
    options = Options(**write)
    status, runs = 0, []
    for path, name in zip(paths, names, strict=True):
        with errors() as failed, _progress(path, how["quiet"], bar, say) as progress:
            got = run_dask(
                path, output_dir, hardware=catalog, scheduler=engine["scheduler"],
                partition_rows=engine["partition_rows"], csv=engine["csv"], force=options.force,
                worker_wait=engine["worker_wait"], name=name, strict=how["strict"],
                options=options, progress=progress, **read,
            )  # fmt: skip
            echo(got.problems, () if how["quiet"] else got.warnings)
            status = max(status, 1 if got.problems else 0)
            files = tuple(got.folder / f for f in ("report.html",) if options.report)
            runs.append(index_entry(got.record, Written(got.folder, files, ())))
            if not how["quiet"]:
                say(input_line(
                    got.record.source, got.scenarios, got.record.summary.bounds,
                    got.rejected_rows, got.folder, _written(got.files), got.partitions,
                ))  # fmt: skip
            elif line := warnings_line(got.record.source, got.warnings, got.folder, got.files):
                say(line, err=True)  # -q: how many warnings, and where they are
        if failed:
            status = 1
            runs.append(failed_entry(str(path), name, failed[0]))
    if len(paths) > 1 and options.report:  # as the local engine: one page over the inputs
        with errors() as failed:
            index = write_index(output_dir, runs, protect=protect)
            if not how["quiet"]:
                say(index_line(len(runs), printable(index)))
        status = 1 if failed else status
    return status


# the order the summary line names a Dask run's files in, as the local engine's
SHOWN = ("results/part-*.parquet", "results/part-*.csv", "errors.csv", "summary.json",
         "plots/*.png", "workbook.xlsx", "report.html", "manifest.json")  # fmt: skip


def _written(files: tuple[str, ...]) -> str:
    """The files a run wrote (its manifest's), the partitions and the charts each named once
    by a pattern: only what is there (no plots/*.png when nothing was drawn)."""
    named = set()
    for name in files:
        folder, _, base = name.rpartition("/")
        stem = "part-*" if folder == "results" else "*"
        named.add(f"{folder}/{stem}{Path(base).suffix}" if folder else name)
    return ", ".join(sorted(named, key=lambda n: (SHOWN.index(n) if n in SHOWN else len(SHOWN), n)))


@contextmanager
def _progress(path: Path, quiet: bool, bar, say) -> Iterator[Progress | None]:
    """run_dask's progress: on a terminal (stderr), `bar` (click's progress bar) of the
    partitions done, its label saying so while the run waits for a worker; elsewhere one
    line when such a wait starts; nothing with -q."""
    if quiet:
        yield None
        return
    label = printable(path)

    def words(wait_left: float | None) -> str:
        if wait_left is None:
            return _("{input}: partitions", input=label)
        return _("{input}: waiting for a Dask worker ({seconds} s left)…", input=label,
                 seconds=f"{max(wait_left, 0):.0f}")  # fmt: skip

    if not sys.stderr.isatty():
        waiting = False

        def line(done: int, of: int, wait_left: float | None) -> None:
            nonlocal waiting
            if wait_left is not None and not waiting:
                say(words(wait_left), err=True)
            waiting = wait_left is not None

        yield line
        return
    with ExitStack() as stack:
        shown = None

        def step(done: int, of: int, wait_left: float | None) -> None:
            nonlocal shown
            if shown is None:
                shown = stack.enter_context(bar(length=of, label=words(None), file=sys.stderr,
                                                show_eta=False, show_pos=True))  # fmt: skip
            shown.label = words(wait_left)
            if done > shown.pos:
                shown.update(done - shown.pos)
            else:
                shown.render_progress()  # the label alone changed

        yield step
