"""The one Jinja2 environment (autoescape, StrictUndefined) of the report and the batch index,
its templates the package `pipeline.templates` (pipeline/templates/), and its filters: the
`render.format` functions; and the one global, CRITICAL_BATCH, the term's definition."""

from __future__ import annotations

import functools

import jinja2
from markupsafe import Markup

from pipeline import i18n
from pipeline.errors import PipelineError
from pipeline.i18n import current_lang
from pipeline.model.roofline import CRITICAL_BATCH
from pipeline.render import format as fmt

TEMPLATE_PACKAGE = "pipeline.templates"
REPORT_TEMPLATE = "report.html.j2"
INDEX_TEMPLATE = "index.html.j2"

FILTERS = {
    "seconds": fmt.seconds,
    "flop_rate": fmt.flop_rate,
    "flops": fmt.flops,
    "bytes": fmt.size,
    "bandwidth": fmt.bandwidth,
    "percent": fmt.percent,
    "num": fmt.number,
    "count": fmt.count,
    "plural": fmt.plural,
    "ratio": fmt.ratio,
    "when": fmt.when,
    "sortkey": fmt.sort_key,
}


def translate(text: str, /, **values) -> Markup:
    """A template's text in the current language (pipeline.i18n._). The catalog's text is
    markup like the template around it (entities, the odd tag), as with Jinja's i18n
    extension; its values are escaped unless marked safe."""
    out = Markup(i18n._(text))  # i18n._, not _(): the test of the catalog reads literal _() calls
    return out.format(**values) if values else out


def package_loader(package: str = TEMPLATE_PACKAGE) -> jinja2.PackageLoader:
    """The templates of `package`, wherever it is installed (the source tree's `templates/`
    in an editable install, `pipeline/templates/` from a wheel); PipelineError when missing."""
    try:
        return jinja2.PackageLoader(package, ".")
    except (ImportError, ValueError) as exc:  # no such package, or one Jinja cannot read
        raise PipelineError(
            f"report templates not found (package {package}); reinstall roofline-pipeline, "
            "or run with --no-report"
        ) from exc


@functools.cache
def environment() -> jinja2.Environment:
    """The one Jinja2 environment: autoescape on, StrictUndefined, the formatting filters."""
    env = jinja2.Environment(
        loader=package_loader(),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(FILTERS)
    env.globals["CRITICAL_BATCH"] = CRITICAL_BATCH  # its one definition (model.roofline)
    env.globals["_"] = translate  # every text through the message catalog (pipeline.i18n)
    env.globals["lang"] = current_lang  # the page's <html lang>
    return env
