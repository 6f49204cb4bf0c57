"""The Jinja2 environment: autoescape, strict, the templates found through their package (as
installed, editable or from a wheel), the filters."""

from __future__ import annotations

import importlib.resources
from pathlib import Path

import jinja2
import pytest

from pipeline.errors import PipelineError
from pipeline.render import templates
from pipeline.render.templates import FILTERS, INDEX_TEMPLATE, REPORT_TEMPLATE, environment

ROOT = Path(__file__).resolve().parents[2]


def test_a_page_shows_control_characters_as_the_terminal_does():
    """A bidi override anywhere on a page (a value, a translated text) is written as the
    terminal writes it (errors.printable); line breaks and tabs stay."""
    out = (
        environment()
        .from_string("<p title='{{ x }}'>{{ x }}</p>\n\t{{ _(y) }}")
        .render(x="h100\u202etxt.exe", y="a\u2066b\x00")
    )
    assert out == "<p title='h100\\u202etxt.exe'>h100\\u202etxt.exe</p>\n\ta\\u2066b\\x00"


def test_values_are_escaped():
    out = environment().from_string("{{ x }} {{ y|bytes }}").render(x="<b>&", y=1e9)
    assert out == "&lt;b&gt;&amp; 1.00 GB"


def test_a_missing_variable_or_attribute_raises():
    env = environment()
    with pytest.raises(jinja2.UndefinedError, match="'missing' is undefined"):
        env.from_string("{{ missing }}").render()
    with pytest.raises(jinja2.UndefinedError):
        env.from_string("{{ row.nope }}").render(row={})
    with pytest.raises(jinja2.UndefinedError):  # a test of a missing value is an error too
        env.from_string("{% if missing %}x{% endif %}").render()


@pytest.mark.parametrize("name", [REPORT_TEMPLATE, INDEX_TEMPLATE])
def test_templates_come_from_the_package(name):
    template = environment().get_template(name)
    package = importlib.resources.files(templates.TEMPLATE_PACKAGE)
    assert Path(template.filename).resolve() == Path(str(package / name)).resolve()


def test_a_missing_template_package_is_a_pipeline_error():
    with pytest.raises(PipelineError, match=r"report templates not found .*--no-report"):
        templates.package_loader("pipeline.no_such_templates")


def test_every_filter_is_the_format_function():
    env = environment()
    for name, function in FILTERS.items():
        assert env.filters[name] is function
    out = env.from_string("{{ t|seconds }} | {{ p|flop_rate }} | {{ n|count }}").render(
        t=1.011e-3, p=1.97e14, n=1035
    )
    assert out == "1.01 ms | 197 TFLOP/s | 1,035"
