"""The command line: parse the options, call the library (`pipeline.analyze`, `Analysis.write`,
`pipeline.catalog`), print what happened. Every error becomes a message in one place
(`options.errors`; click's own, a usage error or a ClickException a command raises, are worded
the same by `CommandLine`: `Error: ...` in the chosen language); exit status 0 all good, 1
rejected rows or an error, 2 a usage error. One
module per command family: running (run, validate), catalog (hardware, template), changes
(compare); options holds what they share; localized puts their help in the chosen language.
Only this package imports click."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager

import click

import pipeline
from pipeline.cli.calibrate import calibrate
from pipeline.cli.calibrations import calibrations
from pipeline.cli.catalog import hardware, template
from pipeline.cli.changes import compare
from pipeline.cli.localized import LocalizedGroup, localize
from pipeline.cli.models import models
from pipeline.cli.running import run, validate
from pipeline.cli.traces import import_trace
from pipeline.i18n import _, current_lang, use_lang

__all__ = ["cli"]


def show_error(error: click.ClickException, file=None) -> None:
    """What click shows for its own errors (ClickException.show, UsageError.show: the usage
    line and the hint to --help first), its words in the chosen language: `오류:` as every
    other error says it. English when PIPELINE_LANG names no language (that is the error)."""
    try:
        lang = current_lang()
    except ValueError:
        lang = "en"
    err = file is None
    with use_lang(lang):
        ctx = getattr(error, "ctx", None)
        color = ctx.color if ctx is not None else None
        if isinstance(error, click.UsageError) and ctx is not None:
            hint = ""
            if ctx.command.get_help_option(ctx) is not None:
                option = max(ctx.command.get_help_option_names(ctx), key=len)
                hint = _("Try '{command} {option}' for help.", command=ctx.command_path,
                         option=option) + "\n"  # fmt: skip
            click.echo(f"{ctx.get_usage()}\n{hint}", file=file, err=err, color=color)
        click.echo(_("Error: {text}", text=error.format_message()), file=file, err=err,
                   color=color)  # fmt: skip


@contextmanager
def _worded() -> Iterator[None]:
    """A ClickException raised inside shown by show_error (one that shows itself otherwise,
    such as a bare `pipeline`'s help, is left as it is)."""
    try:
        yield
    except click.ClickException as error:
        if type(error).show in (click.ClickException.show, click.UsageError.show):
            error.show = functools.partial(show_error, error)
        raise


class CommandLine(LocalizedGroup):
    """The `pipeline` group: the help in the chosen language (LocalizedGroup), and click's
    errors worded there (show_error), from parsing the command line to the command's end."""

    def make_context(self, *args, **kwargs) -> click.Context:
        with _worded():
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx: click.Context):
        with _worded():
            return super().invoke(ctx)


@click.group(cls=CommandLine, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(pipeline.__version__, prog_name="pipeline")
def cli() -> None:
    """Roofline estimates for op scenarios: compute-, memory- or network-bound, and how long.

    The model is the one of "How to Scale Your Model", chapter "All About Rooflines".
    """


for command in (run, validate, hardware, template, compare, models, calibrate, calibrations,
                import_trace):  # fmt: skip
    cli.add_command(command)
localize(cli)  # --help in the language of --lang or PIPELINE_LANG (pipeline/cli/localized.py)
