"""`pipeline calibrations`: the groups of the calibration that ships (`--calibration
published`), each with its form, rows, held-out error and source; and the one line `pipeline
hardware CHIP` says of a chip's published groups."""

from __future__ import annotations

import json
import math

import click

from pipeline.api.calibrate import calibration_record, errors_text
from pipeline.calibration.file import PUBLISHED, calibration_from
from pipeline.cli.lines import escaped
from pipeline.cli.options import LANG_OPTION, fatal
from pipeline.errors import InvalidCalibrationFile
from pipeline.i18n import _

SAID = ("hardware", "kind", "dtype", "chips", "link", "form", "rows", "floor_median", "floor_p90",
        "median", "p90", "heldout_median", "heldout_p90", "fitted", "used", "reason",
        "source")  # fmt: skip


@click.command()
@click.option("--json", "as_json", is_flag=True, help="The calibration and its groups as JSON.")
@LANG_OPTION
def calibrations(as_json: bool) -> None:
    """List the groups of the published calibration, the one that ships with the tool
    (`--calibration published`): per chip, op kind and dtype (a collective: per link and
    chip count) its form, the rows it was fitted to, its error held out and the floor's
    (max(t/m, m/t) - 1, median / p90) and where its measurements came from.

    \b
    Examples:
      pipeline calibrations
      pipeline calibrations --json
      pipeline run scenarios/q1-q5.csv --calibration published

    Exit status: 0 listed; 1 no published calibration ships, or it cannot be read.
    """
    with fatal():
        cal, _files = calibration_from(PUBLISHED)
    record = published_record(cal)
    if as_json:
        click.echo(json.dumps(record, indent=1, ensure_ascii=False))
    else:
        click.echo(escaped("\n".join(published_lines(record))))


def published_record(cal) -> dict:
    """The published calibration as JSON takes it: where it came from, its errors and each
    group's keys, form, rows, errors, use and source (NaN as null)."""
    about = calibration_record(cal)
    groups = [{k: _plain(g.get(k, "")) for k in SAID} for g in about["groups"]]
    head = {k: _plain(v) for k, v in about.items() if k != "groups"}
    return {**head, "version": cal.version, "groups": groups}


def _plain(value):
    if isinstance(value, float) and math.isnan(value):
        return None
    return value.item() if hasattr(value, "item") else value


def published_lines(record: dict) -> list[str]:
    """What `pipeline calibrations` prints: where the calibration came from, then a line per
    group (a group's reason and source, the data's, stay English)."""
    lines = [
        _(
            "Published calibration: {source}, fitted {created} (roofline-pipeline {version}); "
            "give --calibration published to use it",
            source=record["source"],
            created=record["created"],
            version=record["version"],
        )  # fmt: skip
    ]
    for g in record["groups"]:
        name = " ".join(str(p) for p in _name_parts(g))
        said = dict(where=name, rows=f"{g['rows']:,}", form=g["form"])
        if g["used"]:
            errors = {k: math.nan if v is None else v for k, v in g.items()}
            line = _("{where}: {form}, {rows} rows, error {heldout} held out (the floor's "
                     "{floor}), median / p90", heldout=errors_text(errors),
                     floor=errors_text(errors, "floor_"), **said)  # fmt: skip
        else:
            line = _("{where}: not used ({rows} rows)", **said) + (
                f": {g['reason']}" if g["reason"] else ""
            )
        lines.append("  " + line + (f"; {g['source']}" if g["source"] else ""))
    return lines


def _name_parts(g: dict) -> list:
    """A group's name without its chip's: 'matmul bf16', 'all_reduce nvlink 8 chips'."""
    parts = [g["hardware"], g["kind"]]
    if g["dtype"]:
        parts.append(g["dtype"])
    if g["link"]:
        parts.append(g["link"])
    if g["chips"]:
        parts.append(_("{n} chips", n=g["chips"]))
    return parts


def chip_line(chip: str) -> str:
    """`pipeline hardware CHIP`'s line of the chip's used published groups ('' for none, or
    when no published calibration ships)."""
    try:
        cal, _files = calibration_from(PUBLISHED)
    except InvalidCalibrationFile:
        return ""
    groups = [g for g in published_record(cal)["groups"] if g["hardware"] == chip and g["used"]]
    if not groups:
        return ""
    kinds: dict[str, list[str]] = {}  # a kind's dtypes, or a collective's links and counts
    for g in groups:
        if g["kind"] in ("matmul", "custom"):
            said = [g["dtype"] or _("every dtype")]
        else:
            said = [g["link"], g["chips"]]
        kinds.setdefault(g["kind"], []).extend(str(x) for x in said if x)
    names = "; ".join(_kind_text(kind, said) for kind, said in kinds.items())
    return _("Published calibration: {groups} (pipeline calibrations)", groups=names)


def _kind_text(kind: str, said: list[str]) -> str:
    """'matmul bf16, fp8', 'all_reduce nvlink, 2, 4, 8 chips': a kind's groups in one part."""
    words = [w for w in dict.fromkeys(said) if not w.isdigit()]
    counts = [w for w in dict.fromkeys(said) if w.isdigit()]
    if counts:
        words.append(_("{n} chips", n=", ".join(counts)))
    return " ".join([kind, ", ".join(words)]).strip()
