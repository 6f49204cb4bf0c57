"""The README's Python example runs, and prints what the README says it prints."""

from __future__ import annotations

import doctest
import re
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def python_api_section() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Python API\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```pycon\n(.*?)```", section, flags=re.S)
    assert blocks, "the README's Python API section has no pycon example"
    return "\n".join(blocks)


def test_readme_python_example(tmp_path, monkeypatch):
    shutil.copytree(ROOT / "scenarios", tmp_path / "scenarios")
    monkeypatch.chdir(tmp_path)
    parser = doctest.DocTestParser()
    test = parser.get_doctest(python_api_section(), {}, "README.md", "README.md", 0)
    assert len(test.examples) >= 10
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.failures == 0, f"{runner.failures} README example(s) failed (output above)"
    assert (tmp_path / "q3.png").read_bytes().startswith(b"\x89PNG")
    assert (tmp_path / "output" / "q1-q5" / "manifest.json").is_file()
