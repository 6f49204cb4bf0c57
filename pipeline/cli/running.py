"""`pipeline run` and `pipeline validate`: scenario files in, outputs (or only messages) out."""

from __future__ import annotations

import sys
from pathlib import Path

import click

import pipeline
from pipeline.api.analyze import output_names
from pipeline.catalogs.prices import load_prices
from pipeline.cli import progress
from pipeline.cli.lines import (
    Checked,
    added_line,
    answer_lines,
    fail_status,
    failed_line,
    index_line,
    input_line,
    no_baseline_note,
    removed_line,
    summary_lines,
    validate_line,
    warnings_line,
    written_files,
)
from pipeline.cli.options import (
    CALIBRATION_OPTION,
    ENCODING_OPTION,
    HARDWARE_OPTION,
    KEEP_COLUMN_OPTION,
    LANG_OPTION,
    MAX_ROWS_OPTION,
    MODELS_OPTION,
    SHEET_OPTION,
    change_kinds,
    echo_problems,
    engine_options,
    errors,
    expand_inputs,
    fatal,
    hardware_catalog,
    model_inputs,
    output_folder,
    run_usage,
)
from pipeline.errors import printable
from pipeline.i18n import _
from pipeline.limits import (
    DEFAULT_MAX_CHARTS,
    DEFAULT_TABLE_ROWS,
    DEFAULT_WORKBOOK_INPUT_ROWS,
    DEFAULT_WORKBOOK_ROWS,
)
from pipeline.model.step_totals import STEP_ROWS
from pipeline.run.baseline import baseline_folders, chosen_baseline, removed_runs
from pipeline.run.children import sigterm_as_interrupt
from pipeline.run.write import Options, Written


@click.command()
@click.argument("scenarios", nargs=-1, required=True)
@click.option(
    "-o",
    "--output-dir",
    default="output",
    show_default=True,
    callback=output_folder,
    help="Folder that receives one sub-folder per input file.",
)
@HARDWARE_OPTION
@MODELS_OPTION
@CALIBRATION_OPTION
@click.option("--prices", "prices_file", type=click.Path(dir_okay=False, path_type=Path),
              help="A price file (CSV or Parquet: hardware, usd_per_chip_hour, source, date; "
              "`pipeline template --prices` writes a starter): results gain usd_per_chip_hour "
              "and cost (USD) beside energy.")  # fmt: skip
@LANG_OPTION
@SHEET_OPTION
@ENCODING_OPTION
@KEEP_COLUMN_OPTION
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
@click.option("-q", "--quiet", is_flag=True, help="Only errors, and for an input with warnings "
              "one line saying how many and where they are listed (no progress bar, no "
              "summary lines).")  # fmt: skip
@click.option("-v", "--verbose", is_flag=True, help="Also print the seconds each stage took.")
@MAX_ROWS_OPTION
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
@click.option("--models-rows", type=click.IntRange(min=1), default=STEP_ROWS, show_default=True,
              help="Steps of the Models table (report.html, workbook.xlsx): the slowest, and "
              "every fleet point's best among them (a swept row's most tokens/s that fits); "
              "results.csv always has every step.")  # fmt: skip
@click.option("--baseline", metavar="DIR|latest", help="An earlier run's OUTPUT_DIR: compare "
              "each input with its own run there (paired by the input's name). `latest`: the "
              "newest finished run beside OUTPUT_DIR, by start time (nightly/<date> folders; "
              "none yet is a note, not an error).")  # fmt: skip
@click.option("--fail-on", metavar="KINDS", help="With --baseline: exit 1 when an input has "
              "a change of these kinds (e.g. bound,fits; cost: a row's cost rose, with "
              "--prices), after writing everything.")  # fmt: skip
@engine_options
def run(
    scenarios,
    output_dir: Path,
    hardware_files,
    models_files,
    calibration_file,
    prices_file,
    sheet,
    encoding,
    keep_columns,
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
    models_rows,
    baseline,
    fail_on,
    **engine,
) -> None:
    """Compute every scenario of SCENARIOS (CSV or .xlsx files, or quoted globs).

    Each input gets OUTPUT_DIR/<stem>/ with results.csv and results.parquet (every scenario,
    SI units), errors.csv (rejected rows, if any), summary.json, plots/*.png, workbook.xlsx,
    report.html and manifest.json, written atomically. Several inputs also get
    OUTPUT_DIR/index.html.
    Rejected rows are listed on stderr as FILE:LINE: column COL: reason; then one line per
    input says what was computed and written:

    \b
      scenarios/q1-q5.csv: 1,035 scenarios (compute-bound 669, memory-bound 365,
      network-bound 1), 0 rejected rows -> output/q1-q5/ [results.csv, ...]

    \b
    Examples:
      pipeline run scenarios/q1-q5.csv
      pipeline run 'nightly/*.csv' -o out/ --verbose --report-rows 100
      pipeline run 'scenarios/*.csv' -q -o nightly/$(date +%F) --baseline latest --fail-on bound

    Exit status: 0 all rows valid and all outputs written; 1 some rows rejected (outputs still
    written for the valid rows, rejected rows in errors.csv), a change of --fail-on's kinds
    since the baseline, or a fatal error; 2 usage error.
    """
    with sigterm_as_interrupt():
        paths = expand_inputs(scenarios)
        ctx = click.get_current_context()  # an option given, whatever its value: asked for
        given = {p for p in ctx.params if ctx.get_parameter_source(p).name != "DEFAULT"}
        if problem := run_usage(given, engine, sheet, paths, baseline, fail_on):
            raise click.UsageError(problem)
        with fatal(click.UsageError):  # a kind that does not exist: the command line is wrong
            kinds = None if fail_on is None else change_kinds(fail_on)
        catalog = hardware_catalog(hardware_files)
        catalogs = model_inputs(models_files, calibration_file)
        if prices_file is not None:  # read once here: a wrong file stops before any input
            with fatal():
                load_prices(prices_file, catalog)
            catalogs["prices"] = prices_file
        names = output_names(paths)
        with (
            fatal()
        ):  # a baseline folder missing or unreadable: an error before anything is written
            warn = lambda text: click.echo(text, err=True)  # noqa: E731 (even with -q)
            baseline, note = chosen_baseline(baseline, output_dir, warn)
            if note and not quiet:
                click.echo(note, err=True)
            baselines = baseline_folders(baseline, paths, names)
        protect = (*paths, *hardware_files, *([prices_file] if prices_file else []))
        # (an output folder holding one of `protect` is never replaced)
        read = dict(sheet=sheet, encoding=encoding, keep_columns=keep_columns,
                    models_rows=models_rows)  # fmt: skip
        options = Options(plots=not no_plots, workbook=not no_workbook, report=not no_report,
                          max_charts=max_charts, workbook_rows=workbook_rows,
                          workbook_input_rows=workbook_input_rows, report_rows=report_rows,
                          force=force)  # fmt: skip
        status, runs = 0, []
        for run_dir, source in removed_runs(baseline, baselines):
            gone = kinds is not None and "removed" in kinds  # an input dropped since the baseline
            if gone or not quiet:
                click.echo(removed_line(run_dir, source, gone), err=True)
            status = max(status, 1 if gone else 0)
        for path, name, old in zip(paths, names, baselines, strict=True):
            new_input = baseline is not None and old is None
            if new_input and not quiet and not (kinds and "added" in kinds):
                click.echo(no_baseline_note(path, baseline), err=True)
            with errors() as failed:
                if engine["engine"] == "dask":  # docs/input.md#beyond-one-machine
                    from pipeline.engines.dask.run import run_dask  # Dask is imported there

                    with progress.partitions(path, quiet) as step:
                        got = run_dask(
                            path, output_dir, hardware=catalog, scheduler=engine["scheduler"],
                            partition_rows=engine["partition_rows"], csv=engine["csv"],
                            force=force, worker_wait=engine["worker_wait"], name=name,
                            strict=strict, options=options, progress=step, **read, **catalogs,
                        )  # fmt: skip
                    record, problems, warnings = got.record, got.problems, got.warnings
                    written = Written(got.folder, tuple(got.folder / f for f in got.files), ())
                    lines = [input_line(record.source, got.scenarios, record.summary.bounds,
                                        got.rejected_rows, got.folder, written_files(got.files),
                                        got.partitions)]  # fmt: skip
                    lines += answer_lines(record.summary.serving, record.summary.training)
                    echo_problems(problems, () if quiet else warnings)
                else:
                    record = pipeline.analyze(
                        path, hardware=catalog, max_rows=max_rows, strict=strict, **read, **catalogs
                    )
                    problems, warnings = record.problem_list, record.warnings
                    echo_problems(problems, () if quiet else warnings)
                    with progress.stages(path, quiet) as step:
                        written = record.write(output_dir / name, progress=step, baseline=old,
                                               protect=protect, **vars(options))  # fmt: skip
                    lines = summary_lines(path, record, written, verbose)
                runs.append(pipeline.index_entry(record, written))
                status = max(status, 1 if problems else 0)
                failing = kinds is not None and old is not None and written.changes is not None
                failing = failing and any(written.changes["counts"].get(k, 0) for k in kinds)
                status = max(status, 1 if failing else 0)
                if not quiet:
                    click.echo("\n".join(lines))
                elif line := warnings_line(record.source, warnings, written.folder,
                                           written.files):  # fmt: skip
                    click.echo(line, err=True)  # how many warnings, what they say, where
                if failing:  # with or without -q: a failing night's mail says why
                    line = failed_line(path, written.changes, kinds, written.folder, written.files)
                    click.echo(line, err=True)
                    runs[-1]["status"] = fail_status(written.changes, kinds)
                if new_input and kinds is not None and "added" in kinds:
                    click.echo(added_line(path, baseline, written.folder), err=True)
                    runs[-1]["status"] = _("failed --fail-on: added")
                    status = 1
            if failed:
                status = 1
                runs.append(pipeline.failed_entry(str(path), name, failed[0]))
        if len(paths) > 1 and not no_report:
            with errors() as failed:
                index = pipeline.write_index(output_dir, runs, protect=protect)
                if not quiet:
                    click.echo(index_line(len(runs), printable(index)))
            status = 1 if failed else status
    sys.exit(status)


def dask_checked(
    path: Path, catalog, sheet: str | None, encoding: str | None, keep_columns=(), models=None
) -> Checked:
    """`path` checked as `run --engine dask` checks it before any worker starts: every row
    (no --max-rows; fleet lists up to the client's limit), nothing expanded or computed.
    `keep_columns`: as --keep-column; `models`: --models' catalog."""
    from pipeline.scenarios import load_scenarios

    loaded = load_scenarios(
        path,
        catalog,
        sheet=sheet,
        encoding=encoding,
        planned=True,
        keep_columns=keep_columns,
        models=models,
    )
    warnings = (*catalog.warnings, *loaded.warnings)
    lines = loaded.frame["line"].to_numpy()  # of each valid row, unexpanded
    return Checked(loaded.source, loaded.source_rows, loaded.planned.total, loaded.problems,
                   warnings, lines)  # fmt: skip


@click.command()
@click.argument("scenarios", nargs=-1, required=True)
@HARDWARE_OPTION
@MODELS_OPTION
@LANG_OPTION
@SHEET_OPTION
@ENCODING_OPTION
@KEEP_COLUMN_OPTION
@MAX_ROWS_OPTION
@click.option("--engine", type=click.Choice(("local", "dask")), default="local",
              show_default=True, help="Check as this engine's run would: dask checks the rows "
              "as its client does (no --max-rows), nothing expanded or computed.")  # fmt: skip
def validate(
    scenarios, hardware_files, models_files, sheet, encoding, keep_columns, max_rows: int,
    engine: str,
) -> None:  # fmt: skip
    """Check SCENARIOS only: the same messages as `run`, nothing written. Exit 1 on any problem.

    \b
    One line per input after its messages:
      scenarios/q1-q5.csv: 13 rows read, 1,035 valid scenarios, 0 rejected rows

    A file past --max-rows is checked as --engine dask checks it, and its line says so
    ("over --max-rows (1,000,000) for the local engine; valid for --engine dask").
    """
    catalog, models = hardware_catalog(hardware_files), model_inputs(models_files)["models"]
    status = 0
    for path in expand_inputs(scenarios):
        with errors() as failed:
            over = None
            if engine == "dask":
                checked = dask_checked(path, catalog, sheet, encoding, keep_columns, models)
            else:
                analysis = pipeline.analyze(
                    path, hardware=catalog, max_rows=max_rows, sheet=sheet, encoding=encoding,
                    keep_columns=keep_columns, models=models,
                )  # fmt: skip
                checked = Checked.of(analysis)
                if checked.problems:  # some past --max-rows? then a file for the Dask engine
                    planned = dask_checked(path, catalog, sheet, encoding, keep_columns, models)
                    if planned.scenarios > max_rows:
                        checked, over = planned, max_rows
            echo_problems(checked.problems, checked.warnings)
            line = validate_line(checked, dask=engine == "dask", over=over)
            click.echo(line)
            status = max(status, 1 if checked.problems or over else 0)
        status = 1 if failed else status
    sys.exit(status)
