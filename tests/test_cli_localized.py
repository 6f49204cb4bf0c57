"""`--help` in Korean (pipeline/cli/localized.py, pipeline/data/i18n/ko/help.toml): every help
text has its Korean text and every Korean text a help; --lang ko before or after --help and
PIPELINE_LANG=ko give Korean; English is click's own help, byte for byte."""

from __future__ import annotations

import copy
import re
import string
import tomllib
from importlib import resources

import click
import pytest

from pipeline.cli import cli
from pipeline.cli.localized import help_texts
from tests.helpers import invoke

HELP = tomllib.loads(
    (resources.files("pipeline") / "data" / "i18n" / "ko" / "help.toml").read_text("utf-8")
)
TEXTS = help_texts(cli)
HANGUL = re.compile("[\uac00-\ud7a3]")
COMMANDS = sorted(cli.commands)


def _fields(text: str) -> set[str]:
    return {field for _lit, field, _spec, _conv in string.Formatter().parse(text) if field}


def test_every_help_text_has_its_korean_text():
    missing = {where: text for text, where in TEXTS.items() if text not in HELP}
    assert missing == {}


def test_every_korean_help_text_is_a_help_text():
    assert sorted(set(HELP) - set(TEXTS)) == []


@pytest.mark.parametrize("english", sorted(HELP))
def test_a_korean_help_text_is_korean_with_the_same_fields_and_lines(english):
    korean = HELP[english]
    assert HANGUL.search(korean), "a copy of the English, not its Korean"
    assert _fields(korean) == _fields(english)
    assert korean.count("\n") == english.count("\n"), "a kept block keeps its lines"


def test_help_texts_name_where_each_text_is():
    assert TEXTS["Skip report.html."] == "pipeline run --no-report"
    assert TEXTS["Usage:"] == "click's help layout"
    examples = [t for t, where in TEXTS.items() if where == "pipeline compare: docstring"]
    assert any(t.startswith("Examples:\n  pipeline compare ") for t in examples)


@pytest.mark.parametrize(
    "args", [("run", "--lang", "ko", "--help"), ("run", "--help", "--lang", "ko")]
)
def test_lang_ko_gives_korean_help_before_or_after_help(args):
    result = invoke(*args)
    assert result.exit_code == 0
    assert result.output.startswith("사용법: cli run [OPTIONS] SCENARIOS...\n")
    assert (
        "  SCENARIOS(CSV 또는 .xlsx 파일, 또는 따옴표로 감싼 glob)의 모든 시나리오를"
        in result.output
    )
    assert "\n옵션:\n" in result.output
    assert "루프라인 PNG를 건너뜁니다." in result.output
    assert "[기본값: output]" in result.output


def test_pipeline_lang_ko_gives_korean_help_for_every_command(monkeypatch):
    monkeypatch.setenv("PIPELINE_LANG", "ko")
    top = invoke("--help")
    assert "\n명령:\n" in top.output
    assert "  validate      SCENARIOS를 검사만 합니다" in top.output
    for name in COMMANDS:
        result = invoke(name, "--help")
        assert result.exit_code == 0
        assert result.output.startswith(f"사용법: cli {name} ")
        assert "이 도움말을 보여 주고 끝냅니다." in result.output


def test_english_help_is_unchanged():
    result = invoke("run", "--help")
    assert result.exit_code == 0
    assert result.output.startswith("Usage: cli run [OPTIONS] SCENARIOS...\n")
    assert "  Compute every scenario of SCENARIOS (CSV or .xlsx files, or quoted globs).\n" in (
        result.output
    )
    assert "  --no-report                     Skip report.html.\n" in result.output


@pytest.mark.parametrize("name", [None, *COMMANDS])
def test_english_help_is_clicks_own_byte_for_byte(name):
    command = cli if name is None else cli.commands[name]
    plain = copy.copy(command)  # the same command, formatted by click's classes
    plain.__class__ = click.Group if isinstance(command, click.Group) else click.Command
    ours = command.get_help(click.Context(command, info_name=name or "pipeline"))
    clicks = plain.get_help(click.Context(plain, info_name=name or "pipeline"))
    assert ours == clicks


def test_an_unknown_pipeline_lang_leaves_the_help_english(monkeypatch):
    monkeypatch.setenv("PIPELINE_LANG", "fr")
    result = invoke("models", "--help")
    assert result.exit_code == 0
    assert result.output.startswith("Usage: cli models [OPTIONS] [NAME]\n")
