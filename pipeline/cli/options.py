"""What the commands share: the options several take, the checks of options taken together
(`run_usage`, `hardware_usage`, `change_kinds`), the one place errors become messages
(`errors`), the inputs' globs, the hardware catalog of `--hardware` files."""

from __future__ import annotations

import codecs
import glob
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click

import pipeline
from pipeline.calibration.file import calibration_from
from pipeline.catalogs.chips import peak_dtype
from pipeline.cli.lines import escaped
from pipeline.engines.dask.cluster import DEFAULT_WORKER_WAIT, scheduler_problem
from pipeline.engines.dask.run import DEFAULT_PARTITION_ROWS, MIN_PARTITION_ROWS
from pipeline.errors import PipelineError, printable, quoted
from pipeline.i18n import LANGS, SPELLINGS, _, lang_code, set_lang
from pipeline.limits import DEFAULT_MAX_ROWS, MAX_ROWS_LIMIT
from pipeline.render import format as fmt
from pipeline.scenarios.xlsx.package import is_workbook

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
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="A calibration file (`pipeline calibrate` writes one), or `published` (the one that "
    "ships: `pipeline calibrations`): results gain t_estimate, the floor's time with the fitted "
    "efficiencies and overhead, beside t_lower (repeatable: files of different groups merge).",
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


ENGINE_OPTIONS = (
    click.option("--engine", type=click.Choice(("local", "dask")), default="local",
                 show_default=True, help="local: this process (no server). dask: Dask workers, "
                 "partition by partition, for sweeps past one machine (needs "
                 "roofline-pipeline[dask]); writes results/part-NNNNN.parquet, summary.json, "
                 "errors.csv, the charts, workbook.xlsx and report.html (every scenario "
                 "counted, a sample of them listed) and manifest.json. Not with --baseline."),
    click.option("--scheduler", metavar="ADDRESS", help="With --engine dask: a running Dask "
                 "scheduler (tcp://HOST:8786), else a local cluster of one worker per core, "
                 "started and stopped by the run. The workers must see -o's folder (a shared "
                 "file system)."),
    click.option("--partition-rows", type=click.IntRange(min=1), default=DEFAULT_PARTITION_ROWS,
                 show_default=True, help="With --engine dask: scenarios per partition (one "
                 "task, one Parquet file); at least "
                 f"{fmt.count(MIN_PARTITION_ROWS)} in a run of more scenarios than that."),
    click.option("--worker-wait", type=click.FloatRange(min=0, min_open=True),
                 default=DEFAULT_WORKER_WAIT, show_default=True, metavar="SECONDS",
                 help="With --engine dask: how long the run waits while the scheduler has no "
                 "worker (none started yet, or all killed), the wait shown, before it stops "
                 "with an error; also the longest wait for a finished partition's result or "
                 "the scheduler's answer."),
    click.option("--csv", is_flag=True, help="With --engine dask: also results/part-NNNNN.csv."),
)  # fmt: skip
DASK_ONLY = ("scheduler", "partition_rows", "worker_wait", "csv")


def engine_options(command):
    """run's --engine, --scheduler, --partition-rows, --worker-wait and --csv."""
    for option in reversed(ENGINE_OPTIONS):
        command = option(command)
    return command


def run_usage(given: set[str], engine: dict, sheet: str | None, paths: list[Path],
              baseline: str | None, fail_on: str | None) -> str | None:  # fmt: skip
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
    elif baseline is not None:
        return _("--baseline is not taken with --engine dask: compare the finished run with an "
                 "earlier one by `pipeline compare EARLIER NEW` (it reads a Dask run's "
                 "results/part-*.parquet).")  # fmt: skip
    if engine["scheduler"] is not None and (problem := scheduler_problem(engine["scheduler"])):
        return problem
    if sheet is not None:  # a regular file's first bytes only: a pipe is never read here
        for path in paths:
            if path.is_file() and not is_workbook(path.name, _head(path)):
                return _("--sheet picks a workbook's sheet, and {path} is not a workbook "
                         "(.xlsx): leave --sheet out, or give workbooks only",
                         path=printable(path))  # fmt: skip
    if fail_on is not None and baseline is None:
        return (
            "--fail-on needs --baseline: the changes it counts are since a baseline run "
            "(--baseline DIR or latest)"
        )
    return None


def _head(path: Path) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(8)
    except OSError:  # unreadable: the run says so, with the reason
        return b""


def change_kinds(value: str | None) -> tuple[str, ...] | None:
    """--fail-on's comma-separated change kinds (None: every kind); a PipelineError saying
    what would be valid otherwise."""
    from pipeline.changes.compare import KINDS

    if value is None:
        return None
    kinds = tuple(k.strip() for k in value.split(",") if k.strip())
    unknown = [k for k in kinds if k not in KINDS]
    if unknown or not kinds:
        shown = f"unknown kind {quoted(unknown[0])}" if unknown else "no kind given"
        raise PipelineError(f"--fail-on: {shown}; give some of {','.join(KINDS)}")
    return kinds


def hardware_usage(names: tuple[str, ...], compare: bool, chart, dtype) -> str | None:
    """What is wrong with `pipeline hardware`'s arguments taken together (None: nothing)."""
    if (compare or chart) and not names:
        example = "--compare h100 tpu-v6e" + (" --chart rooflines.png" if chart else "")
        return f"{'--compare' if compare else '--chart'} needs chip names, e.g. {example}"
    if len(names) > 1 and not compare:
        return f"{fmt.plural(len(names), 'chip')} given: add --compare to see them side by side"
    if dtype is not None and chart is None:
        return "--dtype is the chart's dtype: give --chart PATH.png too"
    try:
        peak_dtype(dtype or "bf16")
    except ValueError as exc:
        return f"--dtype: {exc}"
    return None


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


@contextmanager
def fatal(error: type[click.ClickException] = click.ClickException) -> Iterator[None]:
    """A PipelineError in the block stops the command with its message, escaped: an error
    (exit 1), or with `click.UsageError` a usage error (exit 2)."""
    try:
        yield
    except PipelineError as exc:
        raise error(escaped(str(exc))) from exc


def hardware_catalog(files: tuple[Path, ...]):
    """The hardware catalog of `--hardware` files."""
    with fatal():
        return pipeline.load_hardware(list(files))


def model_inputs(models: tuple[Path, ...], calibration: tuple[Path, ...] = ()) -> dict:
    """analyze()'s `models` (the catalog of `--models` files, None without any) and
    `calibration` (--calibration's files, read here once so that an error stops the command
    before any input; each run reads them again, as inputs of its own: hashed, never
    replaced)."""
    calibration = list(calibration) or None
    with fatal():
        if calibration is not None:
            calibration_from(calibration)
        return dict(models=pipeline.load_models(list(models)) if models else None,
                    calibration=calibration)  # fmt: skip
