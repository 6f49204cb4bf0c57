"""`pipeline calibrate MEASURED -o FILE.toml`: fit the efficiencies and overhead per chip, op
kind and dtype that bring the roofline to measured times, and write them with their report."""

from __future__ import annotations

import sys
from pathlib import Path

import click

import pipeline
from pipeline.cli.lines import escaped
from pipeline.cli.options import (
    HARDWARE_OPTION,
    LANG_OPTION,
    MODELS_OPTION,
    SHEET_OPTION,
    echo_problems,
    errors,
)


@click.command()
@click.argument("measured", type=click.Path(exists=True, path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default="calibration.toml",
    show_default=True,
    help="The calibration file to write (*.toml, in a folder that exists); its chart (.png) "
    "and page (.html) go beside it.",
)
@click.option("--force", is_flag=True, help="Replace --output and its .png and .html when there.")
@HARDWARE_OPTION
@MODELS_OPTION
@SHEET_OPTION
@LANG_OPTION
def calibrate(measured: Path, output: Path, force: bool, hardware_files, models_files,
              sheet) -> None:  # fmt: skip
    """Fit a calibration to the measured times of MEASURED: a scenario file (CSV or .xlsx)
    whose rows have measured_seconds, or a run's output folder.

    Per chip, op kind (matmul/einsum, custom) and dtype, and per collective, link and chip
    count, it fits the efficiencies and a fixed overhead per op that bring the roofline's
    floor to the measurements (a matmul group with enough rows also a correction for its
    shape), and writes them to --output with the rows used, the error max(t/m, m/t) - 1
    (median / p90: the floor's, the fit's and held out), the date and the input's SHA-256.
    A group with too few rows falls back to a wider one (every dtype, any chip count), and
    one no better than the floor held out is not used: both said, not guessed. Give the file
    to `pipeline run --calibration FILE` (several files of different groups merge): the
    results gain t_estimate beside t_lower. The three files replace files there only with
    --force, and never an input or a file in a run's folder.

    \b
    Examples:
      pipeline calibrate scenarios/measured.csv -o calibration.toml
      pipeline calibrate output/nightly-profile/ -o h100.toml
      pipeline run scenarios/q1-q5.csv --calibration calibration.toml

    Exit status: 0 written; 1 rows refused (said on stderr as by `pipeline validate`; the
    others fitted and written) or an error (no measured row, an unreadable file).
    """
    with errors() as failed:
        hardware = list(hardware_files) or None
        models = list(models_files) or None
        done = pipeline.calibrate(measured, output, force=force, hardware=hardware,
                                  models=models, sheet=sheet)  # fmt: skip
        echo_problems(done.problems, done.warnings)
        click.echo(escaped(repr(done)))
        click.echo(escaped("-> " + ", ".join(str(f) for f in done.files)))
        if done.problems:
            failed.append("rows refused")
    sys.exit(1 if failed else 0)
