"""`pipeline models [NAME]`: the model catalog, or one model's every field and source."""

from __future__ import annotations

import sys
from pathlib import Path

import click

import pipeline
from pipeline.cli.options import LANG_OPTION, MODELS_OPTION, echo_problems, fatal
from pipeline.render.text.llms import model_lines, model_list_lines


@click.command()
@click.argument("name", required=False)
@MODELS_OPTION
@LANG_OPTION
def models(name: str | None, models_files: tuple[Path, ...]) -> None:
    """List the model catalog (decoder-only transformers: their dims, experts, parameters),
    or every field of model NAME with what its dims give and its source.

    \b
    Examples:
      pipeline models                     the catalog, one model a line
      pipeline models llama3-8b           every field, params counted, KV cache per token
      pipeline models --models mine.toml  with your models added (or fields overridden)

    Exit status: 0 shown; 1 an unknown NAME, an unreadable file, or rows of a --models file
    left out (each said on stderr; the other models are listed).
    """
    with fatal():
        catalog = pipeline.load_models(list(models_files), strict=False)
    echo_problems(catalog.problems, ())  # rows left out of a --models file, on stderr
    if name is None:
        lines = model_list_lines(catalog)
    else:
        with fatal():  # an unknown NAME
            lines = model_lines(catalog, name)
    click.echo("\n".join(lines))
    sys.exit(1 if catalog.problems else 0)
