"""The one Jinja2 environment (autoescape, StrictUndefined) of the report and the batch index,
its templates the package `pipeline.templates` (pipeline/templates/), and its filters: the
`render.format` functions; and the one global, CRITICAL_BATCH, the term's definition."""

from __future__ import annotations

import functools

import jinja2
from markupsafe import Markup

from pipeline import i18n
from pipeline.errors import PipelineError, printable
from pipeline.i18n import current_lang
from pipeline.model.roofline import CRITICAL_BATCH
from pipeline.render import format as fmt
from pipeline.render.text import korean

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
    "times": fmt.times,
    "when": fmt.when,
    "sortkey": fmt.sort_key,
}


def translate(text: str, /, **values) -> Markup:
    """A template's text in the current language (pipeline.i18n._). The catalog's text is
    markup like the template around it (entities, the odd tag), as with Jinja's i18n
    extension; its values are escaped unless marked safe."""
    out = Markup(i18n._(text))  # i18n._, not _(): the test of the catalog reads literal _() calls
    if not values:
        return out
    out = out.format(**values)
    # a Korean particle after a value, written 은(는): the form the value takes
    return Markup(korean.resolve(out)) if current_lang() == "ko" else out


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


class PageTemplate(jinja2.Template):
    """A template whose page shows every control character of the text in it as the terminal
    does (errors.printable: `\\u202e`, `\\x00`), its line breaks and tabs kept: a name or a
    note with a bidi control can never reorder what a reader sees ('h100\\u202etxt.exe'),
    wherever on the page it lands (a cell, a title attribute, a translated sentence)."""

    def render(self, *args, **kwargs) -> str:
        return printable(super().render(*args, **kwargs), keep="\n\r\t")


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
    env.template_class = PageTemplate  # every page's text visible (bidi controls escaped)
    env.filters.update(FILTERS)
    env.globals["CRITICAL_BATCH"] = CRITICAL_BATCH  # its one definition (model.roofline)
    env.globals["_"] = translate  # every text through the message catalog (pipeline.i18n)
    env.globals["lang"] = current_lang  # the page's <html lang>
    return env
