"""The command line: parse options, call the batch functions, echo what was written.

Only click and the light modules are imported here; the batch functions (pandas, pyarrow,
matplotlib, XlsxWriter) are imported by the commands. So `--help` answers at once, and `run`
can start the workbook process of a big input before this interpreter's own heavy imports.
"""

from __future__ import annotations

import glob
import signal
import sys
import threading
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import click

from pipeline import __version__, workbook_process
from pipeline.errors import PipelineError, printable
from pipeline.limits import (
    DEFAULT_MAX_CHARTS,
    DEFAULT_MAX_ROWS,
    DEFAULT_TABLE_ROWS,
    DEFAULT_WORKBOOK_INPUT_ROWS,
    DEFAULT_WORKBOOK_ROWS,
)

if TYPE_CHECKING:
    from pipeline.hardware import Catalog

_HARDWARE_OPTION = click.option(
    "--hardware",
    "hardware_files",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="CSV or TOML file adding chips or overriding catalog fields (repeatable).",
)
_MAX_ROWS_OPTION = click.option(
    "--max-rows",
    type=click.IntRange(min=1),
    default=DEFAULT_MAX_ROWS,
    show_default=True,
    help="Most scenarios a file may expand to (sweeps); rows past it are rejected.",
)


def _expand_inputs(patterns: tuple[str, ...]) -> list[Path]:
    """Each argument as a path, or as a shell-style glob when it names no file."""
    paths: list[Path] = []
    for pattern in patterns:
        if Path(pattern).exists() or not glob.has_magic(pattern):
            paths.append(Path(pattern))
            continue
        matches = sorted(glob.glob(pattern))
        if not matches:
            raise click.BadParameter(f"no file matches '{pattern}'", param_hint="SCENARIOS")
        paths.extend(Path(m) for m in matches)
    return paths


def _load_catalog(files: tuple[Path, ...]) -> Catalog:
    from pipeline.hardware import load_catalog

    try:
        return load_catalog(files)
    except PipelineError as exc:
        raise click.ClickException(_escaped(str(exc))) from exc


def _echo_problems(loaded_problems, warnings) -> None:
    for w in warnings:
        click.echo(f"warning: {printable(w)}", err=True)
    for p in loaded_problems:
        click.echo(str(p), err=True)  # one line each, control characters escaped


def _echo_error(exc: PipelineError) -> None:
    """`Error: ...` on stderr, after the rows it is about (--strict); each line escaped."""
    _echo_problems(getattr(exc, "problems", ()), getattr(exc, "warnings", ()))
    click.echo(_escaped(f"Error: {exc}"), err=True)


def _escaped(message: str) -> str:
    """A message's lines, each with its control characters escaped."""
    return "\n".join(printable(line) for line in message.split("\n"))


@contextmanager
def _sigterm_as_interrupt():
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


def _output_dir(ctx, param, value: str) -> Path:
    if not value.strip():
        raise click.BadParameter("is empty; give a folder, e.g. -o output")
    return Path(value)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="pipeline")
def cli() -> None:
    """Roofline estimates for op scenarios: compute-, memory- or network-bound, and how long.

    The model is the one of "How to Scale Your Model", chapter "All About Rooflines".
    """


@cli.command()
@click.argument("scenarios", nargs=-1, required=True)
@click.option(
    "-o",
    "--output-dir",
    default="output",
    show_default=True,
    callback=_output_dir,
    help="Folder that receives one sub-folder per input file.",
)
@_HARDWARE_OPTION
@click.option("--strict", is_flag=True, help="Any rejected row is fatal: write nothing, exit 1.")
@click.option(
    "--force",
    is_flag=True,
    help="Replace an output folder of an earlier run even when it holds files the tool did "
    "not write (never a folder without our manifest.json, nor one holding an input).",
)
@click.option("--no-plots", is_flag=True, help="Skip the roofline PNGs.")
@click.option("--no-workbook", is_flag=True, help="Skip workbook.xlsx.")
@click.option("--no-report", is_flag=True, help="Skip report.html.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar and no summary lines.")
@click.option("-v", "--verbose", is_flag=True, help="Also print the seconds each stage took.")
@_MAX_ROWS_OPTION
@click.option(
    "--max-charts",
    type=click.IntRange(min=0),
    default=DEFAULT_MAX_CHARTS,
    show_default=True,
    help="Most charts per run; the summary says which were left out.",
)
@click.option(
    "--workbook-rows",
    type=click.IntRange(min=0, max=1_048_575),
    default=DEFAULT_WORKBOOK_ROWS,
    show_default=True,
    help="Rows of the workbook's Results and Inputs sheets; results.csv always has all.",
)
@click.option(
    "--workbook-input-rows",
    type=click.IntRange(min=0, max=1_048_575),
    default=DEFAULT_WORKBOOK_INPUT_ROWS,
    show_default=True,
    help="Rows of the workbook's Inputs sheet (at most --workbook-rows); the scenario file "
    "has all.",
)
@click.option(
    "--report-rows",
    type=click.IntRange(min=0),
    default=DEFAULT_TABLE_ROWS,
    show_default=True,
    help="Rows of each per-hardware table in report.html; results.csv always has all.",
)
def run(
    scenarios: tuple[str, ...],
    output_dir: Path,
    hardware_files: tuple[Path, ...],
    strict: bool,
    force: bool,
    no_plots: bool,
    no_workbook: bool,
    no_report: bool,
    quiet: bool,
    verbose: bool,
    max_rows: int,
    max_charts: int,
    workbook_rows: int,
    workbook_input_rows: int,
    report_rows: int,
) -> None:
    """Compute every scenario of SCENARIOS (CSV files or quoted globs).

    Each input gets OUTPUT_DIR/<stem>/ with results.csv and results.parquet (every scenario,
    SI units), errors.csv (rejected rows, if any), plots/*.png, workbook.xlsx, report.html
    and manifest.json, written atomically. Several inputs also get OUTPUT_DIR/index.html.

    \b
    Examples:
      pipeline run scenarios/q1-q5.csv
      pipeline run 'nightly/*.csv' -o out/ --verbose --report-rows 100

    Exit status: 0 all rows valid and all outputs written; 1 some rows rejected (outputs still
    written for the valid rows, rejected rows in errors.csv) or a fatal error; 2 usage error.
    """
    with _sigterm_as_interrupt():
        paths = _expand_inputs(scenarios)
        spawned = None  # a big first input: its workbook process starts up while we import
        if not no_workbook and workbook_process.wants_process(paths[0]):
            spawned = workbook_process.spawn()
        from pipeline.batch import RunOptions, failed_entry, index_entry, run_file, write_index

        catalog = _load_catalog(hardware_files)
        options = RunOptions(
            plots=not no_plots,
            workbook=not no_workbook,
            report=not no_report,
            strict=strict,
            max_rows=max_rows,
            max_charts=max_charts,
            workbook_rows=workbook_rows,
            workbook_input_rows=workbook_input_rows,
            report_rows=report_rows,
            force=force,
        )
        names = _output_names(paths)
        protected = (*paths, *hardware_files)  # an output folder holding one is never replaced
        show_progress = not quiet and sys.stderr.isatty()
        status = 0
        runs: list[dict] = []
        for path, name in zip(paths, names, strict=True):
            try:
                run = partial(
                    run_file, path, output_dir, catalog, options, out_name=name, spawned=spawned,
                    inputs=protected,
                )  # fmt: skip
                summary = _with_progress(run, path, options) if show_progress else run()
            except PipelineError as exc:
                _echo_error(exc)
                status = 1
                runs.append(failed_entry(path, name, str(exc)))
                continue
            finally:
                spawned = None  # the first run had it
            _echo_problems(summary.problems, summary.warnings)
            if summary.problems:
                status = 1
            runs.append(index_entry(summary, name))
            if not quiet:
                _echo_summary(path, summary, verbose)
        if len(paths) > 1 and options.report:
            try:
                index = write_index(output_dir, runs)
            except PipelineError as exc:
                _echo_error(exc)
                status = 1
            else:
                if not quiet:
                    click.echo(f"index of {len(runs)} runs -> {index}")
    sys.exit(status)


def _with_progress(run, path: Path, options):
    """run(progress=...) under a progress bar of its stages."""
    from pipeline.batch import planned_stages

    stages = planned_stages(options)
    lock = threading.Lock()
    with click.progressbar(
        length=len(stages), label=f"{printable(path)}: load", file=sys.stderr, show_eta=False
    ) as bar:
        done: list[str] = []

        def advance(stage: str) -> None:
            with lock:
                done.append(stage)
                left = [s for s in stages if s not in done]
                bar.label = f"{printable(path)}: {left[0] if left else 'done'}"
                bar.update(1)

        return run(progress=advance)


def _echo_summary(path: Path, summary, verbose: bool) -> None:
    b = summary.bounds
    files = ", ".join(str(p.relative_to(summary.out_dir)) for p in summary.written)
    if len(files) > 160:
        shown = [p for p in summary.written if p.parent == summary.out_dir]
        plots = len(summary.written) - len(shown)
        files = ", ".join(p.name for p in shown) + f", {plots} charts in plots/"
    click.echo(
        f"{printable(path)}: {summary.scenarios} scenarios "
        f"(compute-bound {b['compute']}, memory-bound {b['memory']}, "
        f"network-bound {b['network']}), {summary.rejected} rejected row(s)"
        f" -> {printable(summary.out_dir)}/ [{files}]"
    )
    for notice in summary.notices:
        click.echo(f"  note: {printable(notice)}")
    if verbose:
        timings = ", ".join(f"{k} {v:.2f} s" for k, v in summary.timings.items())
        click.echo(f"  seconds: {timings}")


def _output_names(paths: list[Path]) -> list[str]:
    """One output folder name per input: its sanitized stem, made unique with -2, -3, ..."""
    from pipeline.batch import sanitize_name

    names: list[str] = []
    for path in paths:
        base = sanitize_name(path.stem)
        name, k = base, 2
        while name in names:
            name, k = f"{base}-{k}", k + 1
        names.append(name)
    return names


@cli.command()
@click.argument("scenarios", nargs=-1, required=True)
@_HARDWARE_OPTION
@_MAX_ROWS_OPTION
def validate(scenarios: tuple[str, ...], hardware_files: tuple[Path, ...], max_rows: int) -> None:
    """Check SCENARIOS only: the same messages as `run`, nothing written. Exit 1 on any problem."""
    from pipeline.batch import validate_file

    catalog = _load_catalog(hardware_files)
    status = 0
    for path in _expand_inputs(scenarios):
        try:
            loaded = validate_file(path, catalog, max_rows=max_rows)
        except PipelineError as exc:
            _echo_error(exc)
            status = 1
            continue
        _echo_problems(loaded.problems, loaded.warnings)
        if loaded.problems:
            status = 1
        click.echo(
            f"{printable(path)}: {loaded.source_rows} row(s) read, "
            f"{len(loaded.frame)} valid scenario(s), "
            f"{loaded.rejected_lines} rejected row(s)"
        )
    sys.exit(status)


@cli.command()
@click.argument("name", required=False)
@_HARDWARE_OPTION
def hardware(name: str | None, hardware_files: tuple[Path, ...]) -> None:
    """List the hardware catalog, or show every field of chip NAME with its sources."""
    from pipeline.hardware import catalog_records

    catalog = _load_catalog(hardware_files)
    if name is None:
        click.echo(
            f"{'name':<9} {'aliases':<28} {'bf16 TFLOP/s':>12} {'HBM GB/s':>9} {'HBM GB':>7}"
            "  default link (one-way)"
        )
        for rec in catalog_records(catalog):
            aliases = rec["aliases"].replace(";", ", ")
            if len(aliases) > 28:
                aliases = aliases[:27] + "…"
            link = rec["default_link"]
            bw = rec.get(f"{link}_bandwidth") if link else None
            bf16 = f"{rec['peak_bf16'] / 1e12:.1f}" if rec["peak_bf16"] else "-"
            capacity = f"{rec['hbm_capacity'] / 1e9:.0f}" if rec["hbm_capacity"] else "-"
            click.echo(
                f"{rec['name']:<9} {aliases:<28} {bf16:>12} {rec['hbm_bandwidth'] / 1e9:>9.0f} "
                f"{capacity:>7}  {link} {(bw or 0) / 1e9:.0f} GB/s"
            )
        click.echo(f"catalog version {catalog.version}; `pipeline hardware NAME` shows sources")
        return
    canonical = catalog.resolve(name)
    if canonical is None:
        hint = catalog.suggest(name)
        raise click.ClickException(
            f"unknown hardware '{name}'" + (f" (did you mean '{hint}'?)" if hint else "")
        )
    rec = catalog_records(catalog, [canonical])[0]
    for key, value in rec.items():
        if value is None or value == "":
            continue
        click.echo(f"{key:<17} {value}")
