"""The package's shape: small modules, each with its test file in the mirrored place, click
only in the command line (pipeline/cli/), matplotlib only in the charts, no pyplot anywhere (the import
direction itself is `lint-imports`' contract)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "pipeline"
TESTS = Path(__file__).resolve().parent
MODULES = sorted(PACKAGE.rglob("*.py"))
MIRRORED_OVER = 40  # lines: a module longer than this has a test file of its own
# a package's __init__ is tested where its job is named
PACKAGE_TESTS = {
    "__init__.py": "api/test_analyze.py",
    "scenarios/__init__.py": "scenarios/test_load.py",
    "cli/__init__.py": "test_cli.py",
}
# the command line is tested through its commands, a file per command family
COMMAND_TESTS = {
    "cli/options.py": "test_cli.py",
    "cli/running.py": "test_cli.py",
    "cli/catalog.py": "test_cli_hardware.py",
    "cli/changes.py": "api/test_compare.py",  # `pipeline compare`, with pipeline.compare
    "cli/models.py": "test_cli_models.py",
    "cli/calibrate.py": "api/test_calibrate.py",  # `pipeline calibrate`, with pipeline.calibrate
    "cli/localized.py": "test_cli_localized.py",
}


def mirror(path: Path) -> Path:
    """The test file of a module: pipeline/run/lock.py -> tests/run/test_lock.py."""
    relative = path.relative_to(PACKAGE)
    if relative.as_posix() in COMMAND_TESTS:
        return TESTS / COMMAND_TESTS[relative.as_posix()]
    if relative.name == "__init__.py":
        return TESTS / PACKAGE_TESTS.get(relative.as_posix(), relative.parent / "test_init.py")
    return TESTS / relative.parent / f"test_{relative.name}"


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
        if path.relative_to(PACKAGE).parts[0] != "cli":  # the pipeline/cli/ package
            assert not any(m.split(".")[0] == "click" for m in imports), path
        assert "matplotlib.pyplot" not in imports, path
        if any(m.startswith("matplotlib") for m in imports):
            assert path.parent.name == "charts" or path.name == "charts.py", path


def test_every_module_over_forty_lines_has_its_mirrored_test_file():
    long = [p for p in MODULES if len(p.read_text(encoding="utf-8").splitlines()) > MIRRORED_OVER]
    missing = [str(mirror(p).relative_to(TESTS.parent)) for p in long if not mirror(p).is_file()]
    assert missing == [], "tests mirror the modules (docs/development.md)"


def test_tests_share_code_only_through_helpers_and_conftest():
    shared = {"tests.helpers", "tests.conftest"}
    for path in sorted(TESTS.rglob("*.py")):
        for module in _imports(path):
            if module.split(".")[0] in ("tests", "benchmarks"):
                assert module in shared, f"{path.relative_to(TESTS)} imports {module}"


def test_the_names_only_contract_lets_render_read_types_and_constants_but_no_function():
    """lint/names_only.py (lint-imports' third contract): a class or an UPPER_CASE value may
    cross from the statistics and the model into render/; a function or a module may not."""
    from lint.names_only import _allowed

    assert _allowed("pipeline.model.roofline", "BOUNDS")
    assert _allowed("pipeline.summary.finish", "Summary")
    assert not _allowed("pipeline.model.ops", "parse_op")
    assert not _allowed("pipeline.model", "ops")
