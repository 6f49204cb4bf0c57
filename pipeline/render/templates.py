"""The one Jinja2 environment (autoescape, StrictUndefined) of the report and the batch index,
its templates in the `templates/` folder, and its filters: the `render.format` functions."""

from __future__ import annotations

import functools
from pathlib import Path

import jinja2

from pipeline.errors import PipelineError
from pipeline.render import format as fmt

REPORT_TEMPLATE = "report.html.j2"
INDEX_TEMPLATE = "index.html.j2"


def sort_key(value) -> str:
    """A number as a compact `data-v` attribute for the table sorter; empty when missing."""
    if fmt.missing(value):
        return ""
    return f"{float(value):.5g}"


FILTERS = {
    "seconds": fmt.seconds,
    "flop_rate": fmt.flop_rate,
    "flops": fmt.flops,
    "bytes": fmt.size,
    "bandwidth": fmt.bandwidth,
    "percent": fmt.percent,
    "num": fmt.number,
    "count": fmt.count,
    "ratio": fmt.ratio,
    "when": fmt.when,
    "sortkey": sort_key,
}


def template_dirs() -> list[Path]:
    """Where templates are looked for, in order: `templates/` beside the package (the
    repository and an editable install), then inside it (an installed wheel)."""
    package = Path(__file__).resolve().parents[1]
    return [package.parent / "templates", package / "templates"]


def find_template_dir() -> Path:
    """The first template folder holding both templates; PipelineError when there is none."""
    for folder in template_dirs():
        if (folder / REPORT_TEMPLATE).is_file() and (folder / INDEX_TEMPLATE).is_file():
            return folder
    looked = ", ".join(str(d) for d in template_dirs())
    raise PipelineError(
        f"report templates not found (looked for {REPORT_TEMPLATE} and {INDEX_TEMPLATE} in "
        f"{looked}); reinstall roofline-pipeline, or run with --no-report"
    )


@functools.cache
def environment() -> jinja2.Environment:
    """The one Jinja2 environment: autoescape on, StrictUndefined, the formatting filters."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(find_template_dir()),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(FILTERS)
    return env
