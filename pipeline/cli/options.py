"""What the commands share: the options several take, the one place errors become messages
(`errors`), the inputs' globs, the hardware catalog of `--hardware` files."""

from __future__ import annotations

import codecs
import glob
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import click

import pipeline
from pipeline.analysis import with_calibration
from pipeline.cli_engine import ENGINE_OPTIONS
from pipeline.cli_support import escaped
from pipeline.errors import PipelineError, printable, quoted
from pipeline.i18n import LANGS, SPELLINGS, _, lang_code, set_lang
from pipeline.limits import DEFAULT_MAX_ROWS, MAX_ROWS_LIMIT

HARDWARE_OPTION = click.option(
    "--hardware",
    "hardware_files",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="CSV or TOML file adding chips or overriding catalog fields (repeatable).",
)
MODELS_OPTION = click.option(
    "--models",
    "models_files",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="CSV or TOML file adding models or overriding catalog fields, for transformer rows "
    "(repeatable; `pipeline models` lists the catalog).",
)
CALIBRATION_OPTION = click.option(
    "--calibration",
    "calibration_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="A calibration file (`pipeline calibrate` writes one): results gain t_estimate, the "
    "floor's time with the fitted efficiencies and overhead, beside t_lower.",
)


class LangChoice(click.Choice):
    """--lang's values: a language of LANGS, spelt as PIPELINE_LANG may spell it (i18n.lang_code:
    `KO`, `ko_KR.UTF-8`); shown as click shows a choice."""

    def convert(self, value, param, ctx) -> str:
        code = lang_code(value) if isinstance(value, str) else None
        if code is None:
            choices = ", ".join(quoted(c) for c in LANGS)
            self.fail(f"{quoted(value)} is not one of {choices} ({SPELLINGS})", param, ctx)
        return code


class Fraction(click.FloatRange):
    """A fraction in [0, 1) (compare's --threshold): anything else, NaN and infinities too, is
    a usage error quoting the value as given and naming what is valid."""

    def __init__(self, example: float):
        super().__init__(0, 1, max_open=True)
        self.example = example

    def convert(self, value, param, ctx) -> float:
        try:
            number = float(value)
        except (TypeError, ValueError):
            number = float("nan")
        if not 0 <= number < 1:  # False for NaN
            self.fail(
                f"{quoted(value)} is not a fraction in [0, 1); give one, e.g. {self.example}",
                param,
                ctx,
            )
        return number


LANG_OPTION = click.option(
    "--lang",
    type=LangChoice(LANGS),
    default=None,
    expose_value=False,
    is_eager=True,
    callback=lambda ctx, param, value: set_lang(value),
    help="The language of the report, the workbook's words, the charts and these lines "
    "(default: PIPELINE_LANG, else en). results.csv, sheet names and column names stay "
    "English.",
)
MAX_ROWS_OPTION = click.option(
    "--max-rows", type=click.IntRange(min=1, max=MAX_ROWS_LIMIT), default=DEFAULT_MAX_ROWS,
    show_default=True, help="Most scenarios a file may expand to (sweeps); rows past it are "
    "rejected (the local engine).")  # fmt: skip


def engine_options(command):
    """run's --engine, --scheduler, --partition-rows, --worker-wait and --csv
    (cli_engine.ENGINE_OPTIONS)."""
    for name, spec in reversed(ENGINE_OPTIONS):
        kind = None
        if "choices" in spec:
            kind = click.Choice(spec["choices"])
        elif "min" in spec:
            kind = click.IntRange(min=spec["min"])
        elif "above" in spec:  # seconds: any number past it
            kind = click.FloatRange(min=spec["above"], min_open=True)
        spec = {k: v for k, v in spec.items() if k not in ("choices", "min", "above")}
        command = click.option(name, type=kind, show_default=True, **spec)(command)
    return command


KEEP_COLUMN_OPTION = click.option(
    "--keep-column", "keep_columns", multiple=True, metavar="NAME", help="A column of your "
    "own whose name is close to a known one's (e.g. dtpye), carried through instead of "
    "refusing the file (repeatable; or prefix the column user_).")  # fmt: skip
SHEET_OPTION = click.option(
    "--sheet", help="A workbook's sheet to read (default: Scenarios, else Inputs, else the first)."
)


def _encoding(ctx, param, value: str | None) -> str | None:
    try:
        return value if value is None else codecs.lookup(value).name
    except LookupError:
        raise click.BadParameter(f"unknown encoding {quoted(value)} (e.g. cp1252)") from None


ENCODING_OPTION = click.option(
    "--encoding", callback=_encoding, help="A CSV's encoding when not UTF-8 (e.g. cp1252)."
)


def echo_problems(problems, warnings) -> None:
    for w in warnings:
        click.echo(_("warning: {text}", text=printable(w)), err=True)
    for p in problems:
        click.echo(str(p), err=True)  # one line each, control characters escaped


@contextmanager
def errors(
    memory: str = "a smaller --max-rows (or fewer sweep values) needs less",
) -> Iterator[list[str]]:
    """The one place errors become messages: a PipelineError prints the rows it is about
    (strict mode), then `Error: ...`; running out of memory says how to avoid it. The list
    yielded gets the message, for the caller to record the failure."""
    failed: list[str] = []
    try:
        yield failed
    except PipelineError as exc:
        echo_problems(getattr(exc, "problems", ()), getattr(exc, "warnings", ()))
        click.echo(escaped(_("Error: {text}", text=exc)), err=True)
        failed.append(str(exc))
    except MemoryError:
        message = f"out of memory; {memory}"  # what helps the command that ran out
        click.echo(_("Error: {text}", text=message), err=True)
        failed.append(message)


def output_folder(ctx, param, value: str) -> Path:
    if value == "":
        raise click.BadParameter("is empty; give a folder, e.g. -o output")
    return Path(value)


def expand_inputs(patterns: tuple[str, ...]) -> list[Path]:
    """Each argument as a path, or as a shell-style glob when it names no file. A glob skips
    Excel's lock files (`~$plan.xlsx`, there while plan.xlsx is open) unless it asks for them;
    one named outright is read, and its error says what it is."""
    paths: list[Path] = []
    for pattern in patterns:
        if Path(pattern).exists() or not glob.has_magic(pattern):
            paths.append(Path(pattern))
            continue
        found = sorted(glob.glob(pattern))
        skip = not Path(pattern).name.startswith("~$")
        matches = [m for m in found if not (skip and Path(m).name.startswith("~$"))]
        if not matches:
            why = f"no file matches {quoted(pattern)}"
            why += " but Excel's lock files (~$*, skipped)" if found else ""
            raise click.BadParameter(why, param_hint="SCENARIOS")
        paths.extend(Path(m) for m in matches)
    return paths


def hardware_catalog(
    files: tuple[Path, ...], models: tuple[Path, ...] = (), calibration: Path | None = None
):
    """The hardware catalog of `--hardware` files, with the model catalog of `--models`
    files when given (transformer rows read it) and `--calibration`'s file."""
    try:
        catalog = pipeline.load_hardware(list(files))
        if models:
            catalog = replace(catalog, models=pipeline.load_models(list(models)))
        if calibration is not None:
            catalog = with_calibration(catalog, calibration)
        return catalog
    except PipelineError as exc:
        raise click.ClickException(escaped(str(exc))) from exc
