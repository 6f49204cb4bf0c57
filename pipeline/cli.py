"""The command line: parse the options, call the library (`pipeline.analyze`, `Analysis.write`,
`pipeline.catalog`), print what happened. Every error becomes a message in one place
(`_errors`); exit status 0 all good, 1 rejected rows or an error, 2 a usage error."""

from __future__ import annotations

import codecs
import glob
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click

import pipeline
from pipeline.cli_engine import ENGINE_OPTIONS, run_on_dask
from pipeline.cli_support import escaped, output_names, sigterm_as_interrupt, summary_lines
from pipeline.errors import PipelineError, UnknownHardware, printable, quoted
from pipeline.limits import (
    DEFAULT_MAX_CHARTS,
    DEFAULT_MAX_ROWS,
    DEFAULT_TABLE_ROWS,
    DEFAULT_WORKBOOK_INPUT_ROWS,
    DEFAULT_WORKBOOK_ROWS,
    MAX_ROWS_LIMIT,
)
from pipeline.render import format as fmt
from pipeline.render.catalog_text import catalog_lines

_HARDWARE_OPTION = click.option(
    "--hardware",
    "hardware_files",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="CSV or TOML file adding chips or overriding catalog fields (repeatable).",
)
_MAX_ROWS_OPTION = click.option(
    "--max-rows", type=click.IntRange(min=1, max=MAX_ROWS_LIMIT), default=DEFAULT_MAX_ROWS,
    show_default=True, help="Most scenarios a file may expand to (sweeps); rows past it are "
    "rejected (the local engine).")  # fmt: skip


def engine_options(command):
    """run's --engine, --scheduler, --partition-rows and --csv (cli_engine.ENGINE_OPTIONS)."""
    for name, spec in reversed(ENGINE_OPTIONS):
        spec, choices, low = dict(spec), spec.get("choices"), spec.get("min")
        kind = click.Choice(choices) if choices else click.IntRange(min=low) if low else None
        spec = {k: v for k, v in spec.items() if k not in ("choices", "min")}
        command = click.option(name, type=kind, show_default=True, **spec)(command)
    return command


_SHEET_OPTION = click.option(
    "--sheet", help="A workbook's sheet to read (default: Scenarios, else Inputs, else the first)."
)


def _encoding(ctx, param, value: str | None) -> str | None:
    try:
        return value if value is None else codecs.lookup(value).name
    except LookupError:
        raise click.BadParameter(f"unknown encoding {quoted(value)} (e.g. cp1252)") from None


_ENCODING_OPTION = click.option(
    "--encoding", callback=_encoding, help="A CSV's encoding when not UTF-8 (e.g. cp1252)."
)


def _echo_problems(problems, warnings) -> None:
    for w in warnings:
        click.echo(f"warning: {printable(w)}", err=True)
    for p in problems:
        click.echo(str(p), err=True)  # one line each, control characters escaped


@contextmanager
def _errors() -> Iterator[list[str]]:
    """The one place errors become messages: a PipelineError prints the rows it is about
    (strict mode), then `Error: ...`; running out of memory says how to avoid it. The list
    yielded gets the message, for the caller to record the failure."""
    failed: list[str] = []
    try:
        yield failed
    except PipelineError as exc:
        _echo_problems(getattr(exc, "problems", ()), getattr(exc, "warnings", ()))
        click.echo(escaped(f"Error: {exc}"), err=True)
        failed.append(str(exc))
    except MemoryError:
        message = "out of memory; a smaller --max-rows (or fewer sweep values) needs less"
        click.echo(f"Error: {message}", err=True)
        failed.append(message)


def _output_dir(ctx, param, value: str) -> Path:
    if value == "":
        raise click.BadParameter("is empty; give a folder, e.g. -o output")
    return Path(value)


def _expand_inputs(patterns: tuple[str, ...]) -> list[Path]:
    """Each argument as a path, or as a shell-style glob when it names no file."""
    paths: list[Path] = []
    for pattern in patterns:
        if Path(pattern).exists() or not glob.has_magic(pattern):
            paths.append(Path(pattern))
            continue
        matches = sorted(glob.glob(pattern))
        if not matches:
            raise click.BadParameter(f"no file matches {quoted(pattern)}", param_hint="SCENARIOS")
        paths.extend(Path(m) for m in matches)
    return paths


def _catalog(files: tuple[Path, ...]):
    try:
        return pipeline.load_hardware(list(files))
    except PipelineError as exc:
        raise click.ClickException(escaped(str(exc))) from exc


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(pipeline.__version__, prog_name="pipeline")
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
@_SHEET_OPTION
@_ENCODING_OPTION
@click.option("--strict", is_flag=True, help="Any rejected row is fatal: write nothing, exit 1.")
@click.option(
    "--force",
    is_flag=True,
    help="Replace an output folder of an earlier run even when files were added to it or "
    "changed (never a folder without our manifest.json, nor one holding an input).",
)
@click.option("--no-plots", is_flag=True, help="Skip the roofline PNGs.")
@click.option("--no-workbook", is_flag=True, help="Skip workbook.xlsx.")
@click.option("--no-report", is_flag=True, help="Skip report.html.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar and no summary lines.")
@click.option("-v", "--verbose", is_flag=True, help="Also print the seconds each stage took.")
@_MAX_ROWS_OPTION
@click.option("--max-charts", type=click.IntRange(min=0), default=DEFAULT_MAX_CHARTS,
              show_default=True, help="Most charts per run; the summary says which were left "
              "out.")  # fmt: skip
@click.option("--workbook-rows", type=click.IntRange(min=0, max=1_048_575),
              default=DEFAULT_WORKBOOK_ROWS, show_default=True, help="Rows of the workbook's "
              "Results and Errors sheets; results.csv always has all.")  # fmt: skip
@click.option(
    "--workbook-input-rows",
    type=click.IntRange(min=0, max=1_048_575),
    default=DEFAULT_WORKBOOK_INPUT_ROWS,
    show_default=True,
    help="Rows of the workbook's Inputs sheet (at most --workbook-rows); the scenario file "
    "has all.",
)
@click.option("--report-rows", type=click.IntRange(min=0), default=DEFAULT_TABLE_ROWS,
              show_default=True, help="Rows of each per-hardware table in report.html; "
              "results.csv always has all.")  # fmt: skip
@click.option("--baseline", type=click.Path(file_okay=False, path_type=Path), help="An earlier "
              "run's OUTPUT_DIR: compare each input with its <stem>/ there.")  # fmt: skip
@engine_options
def run(
    scenarios,
    output_dir: Path,
    hardware_files,
    sheet,
    encoding,
    strict,
    force,
    no_plots,
    no_workbook,
    no_report,
    quiet,
    verbose,
    max_rows,
    max_charts,
    workbook_rows,
    workbook_input_rows,
    report_rows,
    baseline,
    **engine,
) -> None:
    """Compute every scenario of SCENARIOS (CSV or .xlsx files, or quoted globs).

    Each input gets OUTPUT_DIR/<stem>/ with results.csv and results.parquet (every scenario,
    SI units), errors.csv (rejected rows, if any), plots/*.png, workbook.xlsx, report.html
    and manifest.json, written atomically. Several inputs also get OUTPUT_DIR/index.html.
    Rejected rows are listed on stderr as FILE:LINE: column COL: reason; then one line per
    input says what was computed and written:

    \b
      scenarios/q1-q5.csv: 1,035 scenarios (compute-bound 669, memory-bound 365,
      network-bound 1), 0 rejected rows -> output/q1-q5/ [results.csv, ...]

    \b
    Examples:
      pipeline run scenarios/q1-q5.csv
      pipeline run 'nightly/*.csv' -o out/ --verbose --report-rows 100

    Exit status: 0 all rows valid and all outputs written; 1 some rows rejected (outputs still
    written for the valid rows, rejected rows in errors.csv) or a fatal error; 2 usage error.
    """
    with sigterm_as_interrupt():
        paths = _expand_inputs(scenarios)
        catalog, names = _catalog(hardware_files), output_names(paths)
        try:  # a baseline folder missing or unreadable: an error before anything is written
            baselines = pipeline.cli_support.baseline_folders(baseline, names)
        except PipelineError as exc:
            raise click.ClickException(escaped(str(exc))) from exc
        protect = (*paths, *hardware_files)  # an output folder holding one is never replaced
        read = dict(sheet=sheet, encoding=encoding)
        write = dict(
            plots=not no_plots,
            workbook=not no_workbook,
            report=not no_report,
            max_charts=max_charts,
            workbook_rows=workbook_rows,
            workbook_input_rows=workbook_input_rows,
            report_rows=report_rows,
            force=force,
            protect=protect,
        )
        if engine["engine"] == "dask":  # docs/input.md#beyond-one-machine
            how = dict(quiet=quiet, strict=strict, baseline=baseline, write=write)
            ui = (_echo_problems, _errors, click.echo)
            sys.exit(run_on_dask(paths, output_dir, catalog, names, engine, read, how, ui))
        status, runs = 0, []
        for path, name, old in zip(paths, names, baselines, strict=True):
            if baseline is not None and old is None:
                click.echo(pipeline.cli_support.no_baseline_note(path, baseline / name), err=True)
            write["baseline"] = old
            with _errors() as failed:
                analysis = pipeline.analyze(
                    path, hardware=catalog, max_rows=max_rows, strict=strict, **read
                )
                _echo_problems(analysis.problem_list, analysis.warnings)
                with _progress(path, quiet) as step:
                    written = analysis.write(output_dir / name, progress=step, **write)
                runs.append(pipeline.index_entry(analysis, written))
                status = max(status, 1 if analysis.problem_list else 0)
                if not quiet:
                    click.echo("\n".join(summary_lines(path, analysis, written, verbose)))
            if failed:
                status = 1
                runs.append(pipeline.failed_entry(str(path), name, failed[0]))
        if len(paths) > 1 and not no_report:
            with _errors() as failed:
                index = pipeline.write_index(output_dir, runs, protect=protect)
                if not quiet:
                    click.echo(f"index of {fmt.plural(len(runs), 'run')} -> {printable(index)}")
            status = 1 if failed else status
    sys.exit(status)


@contextmanager
def _progress(path: Path, quiet: bool):
    """A progress bar of the output stages on a terminal (stderr); nothing otherwise."""
    if quiet or not sys.stderr.isatty():
        yield None
        return
    label = printable(path)
    with click.progressbar(
        length=100, label=f"{label}: writing", file=sys.stderr, show_eta=False
    ) as bar:
        done = 0

        def step(stage: str) -> None:
            nonlocal done
            done += 1
            bar.label = f"{label}: {stage}"
            bar.update(max(1, min(100 - bar.pos, 100 // (done + 1))))

        yield step


@cli.command()
@click.argument("scenarios", nargs=-1, required=True)
@_HARDWARE_OPTION
@_SHEET_OPTION
@_ENCODING_OPTION
@_MAX_ROWS_OPTION
def validate(scenarios, hardware_files, sheet, encoding, max_rows: int) -> None:
    """Check SCENARIOS only: the same messages as `run`, nothing written. Exit 1 on any problem.

    \b
    One line per input after its messages:
      scenarios/q1-q5.csv: 13 rows read, 1,035 valid scenarios, 0 rejected rows
    """
    catalog = _catalog(hardware_files)
    status = 0
    for path in _expand_inputs(scenarios):
        with _errors() as failed:
            analysis = pipeline.analyze(
                path, hardware=catalog, max_rows=max_rows, sheet=sheet, encoding=encoding
            )
            _echo_problems(analysis.problem_list, analysis.warnings)
            s = analysis.summary
            click.echo(
                f"{printable(path)}: {fmt.plural(s.source_rows, 'row')} read, "
                f"{fmt.plural(s.scenarios, 'valid scenario')}, "
                f"{fmt.plural(s.rejected_rows, 'rejected row')}"
            )
            status = max(status, 1 if analysis.problem_list else 0)
        status = 1 if failed else status
    sys.exit(status)


@cli.command()
@click.argument("names", nargs=-1)
@_HARDWARE_OPTION
@click.option("--raw", is_flag=True, help="Numbers as stored, in SI units without prefixes "
              "(989000000000000.0 for 989 TFLOP/s).")  # fmt: skip
@click.option("--compare", is_flag=True, help="NAMES side by side, ridge points per dtype.")
@click.option("--chart", type=click.Path(path_type=Path), help="Write NAMES' rooflines on one "
              "chart to this PNG.")  # fmt: skip
@click.option("--dtype", help="The chart's dtype (default bf16), e.g. fp8.")
def hardware(names, hardware_files, raw: bool, compare: bool, chart, dtype) -> None:
    """List the hardware catalog; every field of chip NAME, with units and sources; or, with
    --compare, chips NAMES side by side (the flag anywhere, the names as arguments).

    \b
    Examples:
      pipeline hardware                   the catalog, one chip a line
      pipeline hardware v5e               every field: 197 TFLOP/s, 820 GB/s, 1.00 µs, ...
      pipeline hardware v5e --raw         the same fields as stored: 197000000000000.0, ...
      pipeline hardware --compare h100 h200 tpu-v6e    a column per chip, ridge points per dtype
      pipeline hardware --compare h100 b200 --chart rooflines.png --dtype fp8

    Exit status: 0 shown; 1 an error (a chart not written, an unknown NAME without
    --compare); 2 a usage error (an unknown chip with --compare, options that clash).
    """
    problem = pipeline.cli_support.hardware_usage(names, compare, chart, dtype)
    if problem:
        raise click.UsageError(problem)
    catalog = _catalog(hardware_files)
    _echo_problems((), catalog.warnings)  # doubts about a user file's figures (model/fleet.py)
    if not names:
        click.echo("\n".join(catalog_lines(pipeline.catalog(catalog), catalog.version)))
        return
    try:
        lines, chosen = pipeline.cli_support.hardware_lines(catalog, names, compare, raw)
    except UnknownHardware as exc:
        error = click.ClickException(escaped(str(exc)))
        error.exit_code = 2 if compare else 1  # a single NAME: as before --compare existed
        raise error from exc
    click.echo("\n".join(lines))
    with _errors() as failed:  # a chart not written: exit 1
        if chart is not None:
            said = pipeline.cli_support.write_chips_chart(chart, catalog, chosen, dtype)
            click.echo(said, err=True)
    sys.exit(1 if failed else 0)


@cli.command()
@click.argument("path", default="scenarios.xlsx", type=click.Path(path_type=Path))
@click.option("--force", is_flag=True, help="Replace PATH when it exists.")
@_HARDWARE_OPTION
def template(path: Path, force: bool, hardware_files: tuple[Path, ...]) -> None:
    """Write a starter workbook at PATH (default scenarios.xlsx): the book's examples on its
    Scenarios sheet, drop-down lists, a note on each column, the catalog on a Hardware sheet.
    """
    try:
        pipeline.write_template(path, force=force, hardware=_catalog(hardware_files))
    except PipelineError as exc:
        raise click.ClickException(escaped(str(exc))) from exc
    click.echo(f"{printable(path)}: written; fill in its Scenarios sheet, then run it")


@cli.command()
@click.argument("baseline", type=click.Path(path_type=Path))
@click.argument("new", type=click.Path(path_type=Path))
@click.option("-o", "--output-dir", default="changes", show_default=True, callback=_output_dir)
@click.option("--threshold", type=click.FloatRange(0, 1, max_open=True), default=0.05)
@click.option("--fail-on", help="Kinds that count for the exit status, e.g. bound,fits.")
def compare(baseline: Path, new: Path, output_dir: Path, threshold: float, fail_on) -> None:
    """Diff runs BASELINE and NEW (folders or results files): exit 0 same, 1 changed, 2 error."""
    status = 2
    with _errors():
        kinds = pipeline.cli_support.change_kinds(fail_on)
        result = pipeline.compare(baseline, new, threshold)
        result.write(output_dir)
        click.echo(f"{result.summary()} -> {printable(output_dir)}/")
        status = 1 if result.changes.failing(kinds) else 0
    sys.exit(status)
