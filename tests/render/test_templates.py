"""The Jinja2 environment: autoescape, strict, the templates found, the filters."""

from __future__ import annotations

from pathlib import Path

import jinja2
import pytest

from pipeline.errors import PipelineError
from pipeline.render import templates
from pipeline.render.templates import environment


def test_environment_autoescapes_and_is_strict():
    env = environment()
    assert env is environment()
    assert env.undefined is jinja2.StrictUndefined
    assert env.from_string("{{ x }}").render(x="<b>") == "&lt;b&gt;"


def test_missing_templates_are_a_pipeline_error(monkeypatch, tmp_path):
    monkeypatch.setattr(templates, "template_dirs", lambda: [tmp_path / "a", tmp_path / "b"])
    with pytest.raises(PipelineError, match="report templates not found"):
        templates.find_template_dir()


def test_template_dir_is_the_top_level_templates_folder():
    root = Path(__file__).resolve().parents[2]
    assert templates.find_template_dir() == root / "templates"


def test_filters_work_in_templates():
    env = environment()
    out = env.from_string("{{ t|seconds }} | {{ p|flop_rate }} | {{ b|bytes }}").render(
        t=1.011e-3, p=1.97e14, b=1.6e10
    )
    assert out == "1.01 ms | 197 TFLOP/s | 16.0 GB"
