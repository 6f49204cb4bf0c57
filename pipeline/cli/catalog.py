"""`pipeline hardware` (the catalog, a chip, chips side by side and their chart) and
`pipeline template` (the starter workbook)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

import pipeline
from pipeline.cli.options import (
    HARDWARE_OPTION,
    LANG_OPTION,
    echo_problems,
    errors,
    hardware_catalog,
)
from pipeline.cli_support import escaped
from pipeline.errors import OutputError, PipelineError, UnknownHardware, printable
from pipeline.i18n import _
from pipeline.render.catalog_text import catalog_lines
from pipeline.textfile import refuse_existing


@click.command()
@click.argument("names", nargs=-1)
@HARDWARE_OPTION
@click.option("--raw", is_flag=True, help="Numbers as stored, in SI units without prefixes "
              "(989000000000000.0 for 989 TFLOP/s).")  # fmt: skip
@click.option("--compare", is_flag=True, help="NAMES side by side, ridge points per dtype.")
@click.option("--chart", type=click.Path(path_type=Path), help="Write NAMES' rooflines on one "
              "chart to this PNG.")  # fmt: skip
@click.option("--dtype", help="The chart's dtype (default bf16), e.g. fp8.")
@click.option("--force", is_flag=True, help="Replace the --chart file when it exists.")
@LANG_OPTION
def hardware(names, hardware_files, raw: bool, compare: bool, chart, dtype, force: bool) -> None:
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
    if problem or (force and chart is None):
        raise click.UsageError(problem or "--force replaces the chart: give --chart PATH.png too")
    _refuse_existing(chart, force)
    catalog = hardware_catalog(hardware_files)
    echo_problems((), catalog.warnings)  # doubts about a user file's figures (model/fleet.py)
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
    with errors() as failed:  # a chart not written: exit 1
        if chart is not None:
            said = pipeline.cli_support.write_chips_chart(chart, catalog, chosen, dtype)
            click.echo(said, err=True)
    sys.exit(1 if failed else 0)


def _refuse_existing(path: Path | None, force: bool) -> None:
    """A file this command writes (hardware --chart) is refused when one is there, unless
    --force, as `template` refuses its PATH: a scenario file named *.png is never lost."""
    if path is not None:
        try:
            refuse_existing(path, force)
        except OutputError as exc:
            raise click.ClickException(escaped(str(exc))) from exc


def _template_path(ctx, param, value: str) -> Path:
    if value == "":  # Path("") would be '.', a name nobody gave
        raise click.BadParameter("'' is empty; name the workbook, e.g. scenarios.xlsx")
    return Path(value)


@click.command()
@click.argument("path", default="scenarios.xlsx", callback=_template_path)
@click.option("--force", is_flag=True, help="Replace PATH when it exists.")
@HARDWARE_OPTION
@LANG_OPTION
def template(path: Path, force: bool, hardware_files: tuple[Path, ...]) -> None:
    """Write a starter workbook at PATH (default scenarios.xlsx): the book's examples on its
    Scenarios sheet, drop-down lists, a note on each column, the catalog on a Hardware sheet
    (for reference: to add or change a chip, give a --hardware file).
    """
    catalog = hardware_catalog(hardware_files)
    echo_problems((), catalog.warnings)  # doubts about a user file's figures, as `run` says
    try:
        pipeline.write_template(path, force=force, hardware=catalog)
    except PipelineError as exc:
        raise click.ClickException(escaped(str(exc))) from exc
    click.echo(_("{path}: written; fill in its Scenarios sheet, then run it", path=printable(path)))
