"""The package's shape: small modules, click only in the command line, matplotlib only in
the charts, no pyplot anywhere (the import direction itself is `lint-imports`' contract)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "pipeline"
MODULES = sorted(PACKAGE.rglob("*.py"))


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_modules_are_small_and_say_what_they_do(path):
    text = path.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 400, "split it: one job per module"
    if text.strip():
        assert ast.get_docstring(ast.parse(text)), "one line on what the module does"


def test_only_the_command_line_imports_click_and_nothing_uses_pyplot():
    for path in MODULES:
        imports = _imports(path)
        if path.name != "cli.py":
            assert not any(m.split(".")[0] == "click" for m in imports), path
        assert "matplotlib.pyplot" not in imports, path
        if any(m.startswith("matplotlib") for m in imports):
            assert path.parent.name == "charts" or path.name == "charts.py", path
