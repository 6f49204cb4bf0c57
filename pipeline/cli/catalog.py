"""`pipeline hardware` (the catalog, a chip, chips side by side and their chart) and
`pipeline template` (the starter workbook)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

import pipeline
from pipeline.catalogs.chips import peak_dtype
from pipeline.catalogs.prices import PRICES_PATH, write_prices_template
from pipeline.cli.calibrations import chip_line
from pipeline.cli.lines import escaped
from pipeline.cli.options import (
    HARDWARE_OPTION,
    LANG_OPTION,
    echo_problems,
    errors,
    fatal,
    hardware_catalog,
    hardware_usage,
)
from pipeline.errors import OutputError, UnknownHardware, printable
from pipeline.i18n import _
from pipeline.render import format as fmt
from pipeline.render.text.catalog import catalog_lines
from pipeline.textfile import refuse_existing, write_file


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
    problem = hardware_usage(names, compare, chart, dtype)
    if problem or (force and chart is None):
        raise click.UsageError(problem or "--force replaces the chart: give --chart PATH.png too")
    _refuse_existing(chart, force)
    catalog = hardware_catalog(hardware_files)
    echo_problems((), catalog.warnings)  # doubts about a user file's figures (catalogs/checks.py)
    if not names:
        click.echo("\n".join(catalog_lines(pipeline.catalog(catalog), catalog.version)))
        return
    try:
        lines, chosen = hardware_lines(catalog, names, compare, raw)
    except UnknownHardware as exc:
        error = click.ClickException(escaped(str(exc)))
        error.exit_code = 2 if compare else 1  # a single NAME: as before --compare existed
        raise error from exc
    click.echo("\n".join(lines))
    if not compare and (said := chip_line(chosen[0])):  # its groups of `--calibration published`
        click.echo(said)
    with errors() as failed:  # a chart not written: exit 1
        if chart is not None:
            said = write_chips_chart(chart, catalog, chosen, dtype)
            click.echo(said, err=True)
    sys.exit(1 if failed else 0)


def _refuse_existing(path: Path | None, force: bool) -> None:
    """A file this command writes (hardware --chart) is refused when one is there, unless
    --force, as `template` refuses its PATH: a scenario file named *.png is never lost."""
    if path is not None:
        with fatal():
            refuse_existing(path, force)


def _template_path(ctx, param, value: str) -> Path:
    if value == "":  # Path("") would be '.', a name nobody gave
        raise click.BadParameter("'' is empty; name the workbook, e.g. scenarios.xlsx")
    return Path(value)


@click.command()
@click.argument("path", default="scenarios.xlsx", callback=_template_path)
@click.option("--force", is_flag=True, help="Replace PATH when it exists.")
@click.option("--prices", is_flag=True, help="Write a starter price file instead (default "
              "PATH prices.csv): every catalog chip, its price left blank for you to fill "
              "in.")  # fmt: skip
@HARDWARE_OPTION
@LANG_OPTION
def template(path: Path, force: bool, prices: bool, hardware_files: tuple[Path, ...]) -> None:
    """Write a starter workbook at PATH (default scenarios.xlsx): the book's examples on its
    Scenarios sheet, drop-down lists, a note on each column, the catalog on a Hardware sheet
    (for reference: to add or change a chip, give a --hardware file).

    With --prices, a starter price file for `run --prices` instead: a row per catalog chip,
    usd_per_chip_hour and date blank, source saying where to look; no price ships.
    """
    catalog = hardware_catalog(hardware_files)
    echo_problems((), catalog.warnings)  # doubts about a user file's figures, as `run` says
    if prices:
        ctx = click.get_current_context()
        if ctx.get_parameter_source("path").name == "DEFAULT":
            path = Path(PRICES_PATH)
        with fatal():
            write_prices_template(path, catalog, force=force)
        click.echo(_("{path}: written; fill in the prices you pay, then give it to run --prices",
                     path=printable(path)))  # fmt: skip
        return
    with fatal():
        pipeline.write_template(path, force=force, hardware=catalog)
    click.echo(_("{path}: written; fill in its Scenarios sheet, then run it", path=printable(path)))


def hardware_lines(catalog, names, compare: bool, raw: bool) -> tuple[list[str], list[str]]:
    """What `pipeline hardware NAME` (its fields, then each field's source) or `--compare
    NAMES` prints, and the chips' catalog names; UnknownHardware naming every unknown one."""
    from pipeline.catalogs.chips import chip_table, overridden_fields, resolve_chips
    from pipeline.catalogs.sources import chip_sources, load_sources
    from pipeline.render.text.catalog import chip_lines, compare_lines, source_lines

    chosen = resolve_chips(catalog, names)
    if compare:
        return compare_lines(chip_table(catalog, chosen), raw), chosen
    name = chosen[0]
    row, sources = catalog.chips.loc[name], chip_sources(name)
    if "per" not in sources:  # the divisor of a system figure, from the same rows
        every = load_sources()
        per = every.loc[every["name"] == name].groupby("field")["per"].first()
        sources = sources.assign(per=sources["field"].map(per))
    changed = overridden_fields(catalog, name)
    if len(sources) and not changed:  # each field's own source says it better
        row = row.drop("source")
    lines = chip_lines(name, row, raw) + source_lines(sources, list(row.index), changed)
    return lines, chosen


def write_chips_chart(path: Path, catalog, names: list[str], dtype: str | None) -> str:
    """Write the chips chart (pipeline.charts.chips) of catalog chips `names` at `dtype`
    (default bf16) to `path`, a PNG (so never over a scenario or hardware file); returns
    what to say of it."""
    from pipeline.charts import chips
    from pipeline.render.charts.style import png_bytes

    if path.suffix.lower() != ".png":
        raise OutputError(f"{printable(path)}: the chart is a PNG; name it *.png")
    family = peak_dtype(dtype or "bf16")
    write_file(path, png_bytes(chips(names, family, catalog)))
    left = [n for n in names if fmt.missing(catalog.chips.at[n, f"peak_{family}"])]
    drawn = fmt.plural(len(names) - len(left), "chip")
    note = f" (not drawn, no {family} peak: {', '.join(left)})" if left else ""
    return printable(f"{family} rooflines of {drawn} -> {path}{note}")
