"""`pipeline compare`: what changed between two runs, exiting like diff."""

from __future__ import annotations

import sys
from pathlib import Path

import click

import pipeline
from pipeline.api.compare import DEFAULT_THRESHOLD, compare_runs, inputs_of
from pipeline.cli.options import LANG_OPTION, Fraction, change_kinds, errors, output_folder
from pipeline.errors import InvalidResults, printable


@click.command()
@click.argument("baseline", type=click.Path(path_type=Path))
@click.argument("new", type=click.Path(path_type=Path))
@click.option("-o", "--output-dir", default="changes", show_default=True, callback=output_folder)
@click.option("--threshold", type=Fraction(DEFAULT_THRESHOLD),
              default=DEFAULT_THRESHOLD, show_default=True,
              help="A t_lower change is new/old outside 1 ± this.")  # fmt: skip
@click.option("--fail-on", help="Kinds that count for the exit status, e.g. bound,fits "
              "(cost: a row's cost rose).")  # fmt: skip
@LANG_OPTION
def compare(baseline: Path, new: Path, output_dir: Path, threshold: float, fail_on) -> None:
    """Diff runs BASELINE and NEW (folders or results files): exit 0 same, 1 changed, 2 error.

    Two folders `pipeline run -o` wrote for several inputs are compared whole: their inputs
    paired by name, an input only one has added or removed as a whole, one page and one exit
    status for all. The changes go to OUTPUT_DIR (changes.csv, changes.html, manifest.json),
    which may not be, hold or lie inside BASELINE or NEW: a compared run is only read.

    \b
    Examples:
      pipeline compare nightly/2026-11-24 nightly/2026-11-25 --fail-on bound,fits
      pipeline compare old/q1-q5 new/q1-q5 -o changes
    """
    status = 2
    with errors("compare the runs' results.parquet files, or runs of fewer scenarios"):
        kinds = change_kinds(fail_on)
        whole = (inputs_of(baseline), inputs_of(new))
        if all(whole):
            result = compare_runs(baseline, new, threshold)
        elif any(whole) and baseline.exists() and new.exists():
            runs, one = (baseline, new) if whole[0] else (new, baseline)
            raise InvalidResults(
                f"{printable(runs)} holds the runs of several inputs but {printable(one)} is "
                "one run: compare two folders of the same kind (nightly/A nightly/B, or "
                "nightly/A/q1-q5 nightly/B/q1-q5)"
            )
        else:
            result = pipeline.compare(baseline, new, threshold)
        result.write(output_dir)
        click.echo(f"{result.summary()} -> {printable(output_dir)}/")
        changes = result.failing(kinds) if all(whole) else result.changes.failing(kinds)
        status = 1 if changes else 0
    sys.exit(status)
