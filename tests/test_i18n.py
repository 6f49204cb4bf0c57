"""The message catalog (pipeline/i18n.py, issue 33): every text the code and the templates
pass through `_()` has its Korean text, with the same {fields}; no Korean text is left over
from a text no longer used; the language comes from use_lang, else PIPELINE_LANG."""

from __future__ import annotations

import ast
import re
import string
from pathlib import Path

import jinja2
import pytest
from jinja2 import nodes

from pipeline.cli import cli
from pipeline.cli.localized import help_texts
from pipeline.i18n import _, catalog, check_lang, current_lang, use_lang
from pipeline.render.templates import environment

PACKAGE = Path(__file__).resolve().parent.parent / "pipeline"


def python_texts() -> dict[str, str]:
    """Every literal text given to `_()` in the package's modules: text -> where."""
    found: dict[str, str] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "_":
                arg = node.args[0] if node.args else None
                where = f"{path.relative_to(PACKAGE.parent)}:{node.lineno}"
                assert isinstance(arg, ast.Constant) and isinstance(arg.value, str), (
                    f"{where}: _() takes a literal text (values as fields: _('{{n}} rows', n=n))"
                )
                found.setdefault(arg.value, where)
    return found


def template_texts() -> dict[str, str]:
    """Every literal text given to `_()` in the templates: text -> where."""
    env = environment()
    found: dict[str, str] = {}
    for path in sorted((PACKAGE / "templates").glob("*.j2")):
        tree = env.parse(path.read_text(encoding="utf-8"))
        for call in tree.find_all(nodes.Call):
            if isinstance(call.node, nodes.Name) and call.node.name == "_":
                arg = call.args[0] if call.args else None
                assert isinstance(arg, nodes.Const) and isinstance(arg.value, str), path.name
                found.setdefault(arg.value, f"{path.name}:{call.lineno}")
    return found


def fields(text: str) -> set[str]:
    return {f for _, f, _, _ in string.Formatter().parse(text) if f is not None}


def test_every_text_has_its_korean_text_with_the_same_fields():
    texts = {**python_texts(), **template_texts(), **help_texts(cli)}
    korean = catalog("ko")
    missing = [f"{where}: {text!r}" for text, where in texts.items() if not korean.get(text)]
    assert not missing, "no Korean text for:\n" + "\n".join(missing)
    unlike = [t for t in texts if fields(t) != fields(korean[t])]
    assert not unlike, f"Korean texts whose {{fields}} differ: {unlike}"
    left_over = sorted(set(korean) - set(texts))
    assert not left_over, f"Korean texts of no text in use: {left_over}"


def test_a_text_is_in_one_file_only():
    import tomllib

    seen: dict[str, str] = {}
    for path in sorted((PACKAGE / "data" / "i18n" / "ko").glob("*.toml")):
        for text in tomllib.loads(path.read_text(encoding="utf-8")):
            assert text not in seen, f"{text!r} in {seen.get(text)} and {path.name}"
            seen[text] = path.name


def test_the_language_is_use_langs_else_the_environments(monkeypatch):
    monkeypatch.delenv("PIPELINE_LANG", raising=False)
    assert current_lang() == "en"
    monkeypatch.setenv("PIPELINE_LANG", "ko")
    assert current_lang() == "ko"
    with use_lang("en"):
        assert current_lang() == "en"
    monkeypatch.setenv("PIPELINE_LANG", "fr")
    with pytest.raises(ValueError, match="PIPELINE_LANG is 'fr', not a language of this tool"):
        current_lang()
    assert check_lang(" KO ") == "ko"


def test_a_text_is_english_unless_korean_is_asked_for():
    text = next(iter(catalog("ko")))
    with use_lang("en"):
        assert _(text) == text
    with use_lang("ko"):
        assert _(text) == catalog("ko")[text] != text
    assert re.fullmatch(r"[\w-]+", "ko") and isinstance(jinja2.__version__, str)


def test_the_terminal_speaks_korean_with_lang_ko_or_pipeline_lang(tmp_path, monkeypatch):
    from tests.helpers import ROOT, invoke

    q = ROOT / "scenarios" / "q1-q5.csv"
    said = invoke("validate", q, "--lang", "ko")
    assert said.stdout == f"{q}: 행 13개 읽음, 유효한 시나리오 1,035개, 거부된 행 0개\n"
    monkeypatch.setenv("PIPELINE_LANG", "ko")
    bad = tmp_path / "bad.csv"
    bad.write_text("name,op,hardware,B,D,F\nx,matmul,h10,8,8,8\n")
    said = invoke("validate", bad)
    assert f"{bad}:2: 열 hardware: unknown hardware 'h10' (did you mean 'h100'?)" in said.stderr
    assert invoke("validate", q, "--lang", "en").stdout.endswith(
        "13 rows read, 1,035 valid scenarios, 0 rejected rows\n"
    )
    wrong = invoke("validate", q, "--lang", "fr")
    assert wrong.exit_code == 2 and "'fr' is not one of 'en', 'ko'" in wrong.stderr
