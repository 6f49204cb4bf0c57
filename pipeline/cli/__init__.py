"""The command line: parse the options, call the library (`pipeline.analyze`, `Analysis.write`,
`pipeline.catalog`), print what happened. Every error becomes a message in one place
(`options.errors`); exit status 0 all good, 1 rejected rows or an error, 2 a usage error. One
module per command family: running (run, validate), catalog (hardware, template), changes
(compare); options holds what they share; localized puts their help in the chosen language.
Only this package imports click."""

from __future__ import annotations

import click

import pipeline
from pipeline.cli.calibrate import calibrate
from pipeline.cli.catalog import hardware, template
from pipeline.cli.changes import compare
from pipeline.cli.localized import localize
from pipeline.cli.models import models
from pipeline.cli.running import run, validate

__all__ = ["cli"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(pipeline.__version__, prog_name="pipeline")
def cli() -> None:
    """Roofline estimates for op scenarios: compute-, memory- or network-bound, and how long.

    The model is the one of "How to Scale Your Model", chapter "All About Rooflines".
    """


for command in (run, validate, hardware, template, compare, models, calibrate):
    cli.add_command(command)
localize(cli)  # --help in the language of --lang or PIPELINE_LANG (pipeline/cli/localized.py)
