"""The README's examples run, and print what the README says they print: its Python block as a
doctest, every csv block through `pipeline validate`, every `pipeline` line of a shell block
(the same for the pages in docs/), each from a temporary folder so nothing lands in the repo.
A plain `pipeline ...` line runs in this process (click's runner: no interpreter start per
line); a line with shell syntax, and a `.venv/bin/pipeline` line, in a real shell."""

from __future__ import annotations

import contextlib
import doctest
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BIN = Path(sys.executable).parent  # the venv's bin: its `pipeline` is the one under test
FENCE = re.compile(r"^( *)```(\w*)[^\n]*\n(.*?)^\1```[ \t]*$", re.M | re.S)
MARK = re.compile(r"^\s*<!--(.*?)-->\s*$")
SHELLS = ("sh", "shell", "bash")
COMMAND_WORDS = (["pipeline"], [".venv/bin/pipeline"])


@dataclass(frozen=True)
class Block:
    """A fenced block of a page, with the marks of the HTML comment on the line before it."""

    page: str
    line: int
    lang: str
    text: str
    marks: frozenset[str]
    file: str | None

    def name(self) -> str:
        """The file the block is saved as: its `file:` mark, else one named for where it is."""
        return self.file or f"{Path(self.page).stem}-line{self.line}.{self.lang or 'txt'}"


def blocks(page: Path) -> list[Block]:
    """Every fenced block of a page, in order; `<!-- invalid; file: x.csv -->` marks the next."""
    text = page.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        indent, lang, body = match.groups()
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        mark = MARK.match(before)
        items = [i.strip() for i in mark.group(1).split(";")] if mark else []
        files = [i.split(":", 1)[1].strip() for i in items if i.startswith("file:")]
        assert all(Path(f).name == f for f in files), f"{page.name}: a file: mark is a bare name"
        body = "".join(line.removeprefix(indent) for line in body.splitlines(keepends=True))
        found.append(
            Block(
                page=page.name,
                line=text.count("\n", 0, match.start()) + 1,
                lang=lang,
                text=body,
                marks=frozenset(i for i in items if not i.startswith("file:")),
                file=files[0] if files else None,
            )
        )
    return found


def commands(block: Block) -> list[str]:
    """The lines of a shell block that call `pipeline` (continuation lines joined)."""
    joined = re.sub(r"\s*\\\n\s*", " ", block.text)
    return [line.strip() for line in joined.splitlines() if line.split()[:1] in COMMAND_WORDS]


def pipeline(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """Run the venv's `pipeline` in cwd."""
    return subprocess.run(
        [str(BIN / "pipeline"), *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def shell(line: str, cwd: Path) -> subprocess.CompletedProcess:
    """Run one README command line as a shell would, the venv's bin first on PATH."""
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run(
        ["bash", "-c", line], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


SHELL_SYNTAX = re.compile(r"[|;&<>$`*?\[\]~{}()\\]")  # outside quotes: a shell's to read


def command(line: str, cwd: Path) -> subprocess.CompletedProcess:
    """A README line's outcome: `pipeline ARGS` (quotes and a trailing comment as a shell
    reads them) through click's runner in cwd, an unexpected exception raised as it is; any
    other line (shell syntax, the venv's own path) through `shell`."""
    from click.testing import CliRunner

    from pipeline.cli import cli
    from pipeline.i18n import set_lang

    words = shlex.split(line, comments=True)
    unquoted = re.sub(r"'[^']*'|\"[^\"]*\"", "", line.split("#")[0])
    if words[0] != "pipeline" or SHELL_SYNTAX.search(unquoted):
        return shell(line, cwd)
    try:
        with contextlib.chdir(cwd):
            got = CliRunner().invoke(cli, words[1:], catch_exceptions=False)
    finally:
        set_lang(None)  # --lang holds for a process: not for the next line in this one
    return subprocess.CompletedProcess(words, got.exit_code, got.stdout, got.stderr)


CSV_PAGES = [p for p in PAGES if any(b.lang == "csv" or "invalid" in b.marks for b in blocks(p))]
SHELL_PAGES = [p for p in PAGES if any(b.lang in SHELLS and commands(b) for b in blocks(p))]


def outcome(result: subprocess.CompletedProcess) -> str:
    """What a command did, for an assertion's message."""
    return f"exit status {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"


def python_api_section() -> str:
    """The pycon blocks of the README's "Python API" section."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Python API\n", 1)[1].split("\n## ", 1)[0]
    found = re.findall(r"```pycon\n(.*?)```", section, flags=re.S)
    assert found, "the README's Python API section has no pycon example"
    return "\n".join(found)


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


def test_blocks_find_fences_marks_and_indented_blocks(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "text\n<!-- invalid; file: bad.csv -->\n```csv\na,b\n```\n\n- item\n\n  ```sh\n"
        "  pipeline run x.csv  # exit status 1\n  make run\n  .venv/bin/pipeline \\\n"
        "    hardware\n  ```\n",
        encoding="utf-8",
    )
    csv, sh = blocks(page)
    assert (csv.lang, csv.text, csv.marks, csv.name(), csv.line) == (
        "csv",
        "a,b\n",
        {"invalid"},
        "bad.csv",
        3,
    )
    assert (sh.marks, sh.name()) == (frozenset(), "page-line9.sh")
    assert commands(sh) == ["pipeline run x.csv  # exit status 1", ".venv/bin/pipeline hardware"]


def test_readme_has_the_examples_this_file_runs():
    assert ROOT / "README.md" in CSV_PAGES and ROOT / "README.md" in SHELL_PAGES
    assert (BIN / "pipeline").is_file(), "run the tests with the venv's python"
    readme = blocks(ROOT / "README.md")
    assert sum(b.lang == "csv" for b in readme) >= 4
    assert sum("invalid" in b.marks for b in readme) >= 1
    assert sum(len(commands(b)) for b in readme if b.lang in SHELLS) >= 6


@pytest.mark.parametrize("page", CSV_PAGES, ids=lambda p: p.name)
def test_csv_examples_pass_pipeline_validate(page, tmp_path):
    """Every ```csv block is a file a reader can paste and run; a deliberately bad one is a
    ```text block marked `<!-- invalid -->`, and must be refused."""
    examples = [b for b in blocks(page) if b.lang == "csv" or "invalid" in b.marks]
    pasted_bad = [b.name() for b in examples if b.lang == "csv" and "invalid" in b.marks]
    assert not pasted_bad, f"{page.name}: a bad file shown as ```csv: make it ```text"
    for block in examples:
        (tmp_path / block.name()).write_text(block.text, encoding="utf-8")
    valid = [b.name() for b in examples if "invalid" not in b.marks]
    if valid:
        result = pipeline(["validate", *valid], tmp_path)
        assert result.returncode == 0, outcome(result)
    for block in (b for b in examples if "invalid" in b.marks):
        result = pipeline(["validate", block.name()], tmp_path)
        assert result.returncode == 1, f"{block.name()} is marked invalid\n{outcome(result)}"
        assert "Traceback" not in result.stderr, outcome(result)


@pytest.mark.parametrize("page", SHELL_PAGES, ids=lambda p: p.name)
def test_shell_examples_run(page, tmp_path):
    """Each `pipeline` line runs from a folder holding a copy of scenarios/ and the files the
    page wrote before it (`<!-- file: NAME -->`), ending with the exit status its comment
    says (`# exit status 1`), else 0; a `<!-- stderr -->` block is what the command before it
    printed there."""
    page_blocks = blocks(page)
    shutil.copytree(ROOT / "scenarios", tmp_path / "scenarios")
    (tmp_path / ".venv").symlink_to(BIN.parent, target_is_directory=True)
    last = None
    for block in page_blocks:
        if block.file:
            (tmp_path / block.file).write_text(block.text, encoding="utf-8")
        if "stderr" in block.marks:
            assert last is not None, f"{block.name()}: no command before it"
            for line in filter(None, block.text.splitlines()):
                assert line in last.stderr.splitlines(), f"{line!r} not printed\n{outcome(last)}"
        if block.lang not in SHELLS:
            continue
        for line in commands(block):
            # relative paths only: the command cannot write outside its temporary folder
            assert not re.search(r"(^|\s|=)(/|~|\S*\.\.)", line.split("#")[0]), line
            status = re.search(r"#.*exit status (\d)", line)
            last = command(line, tmp_path)
            expected = int(status.group(1)) if status else 0
            assert last.returncode == expected, f"{page.name}: {line}\n{outcome(last)}"


def test_the_dask_config_file_of_the_readme_unsets_the_nanny_malloc_threshold(tmp_path):
    """The README's YAML block, as a worker's machine reads it (DASK_CONFIG: the folder its
    `~/.config/dask/` stands for), takes MALLOC_TRIM_THRESHOLD_ out of what the nanny sets."""
    pytest.importorskip("distributed")
    (yaml,) = [b for b in blocks(ROOT / "README.md") if b.lang == "yaml"]
    (tmp_path / "distributed.yaml").write_text(yaml.text, encoding="utf-8")
    check = tmp_path / "check.py"  # a file: the nanny's spawned worker imports its main
    check.write_text(
        "import os, distributed\n"
        "if __name__ == '__main__':\n"
        "    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,\n"
        "                                  dashboard_address=None) as cluster:\n"
        "        with distributed.Client(cluster) as client:\n"
        "            env = client.run(lambda: os.environ.get('MALLOC_TRIM_THRESHOLD_'))\n"
        "            print(*env.values())\n",
        encoding="utf-8",
    )
    env = {**os.environ, "DASK_CONFIG": str(tmp_path)}
    env.pop("MALLOC_TRIM_THRESHOLD_", None)
    got = subprocess.run([sys.executable, str(check)], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)  # fmt: skip
    assert got.stdout.split() == ["None"], outcome(got)  # the worker the nanny started: unset


def test_the_fleet_answer_the_readme_quotes_is_its_files(tmp_path):
    """The README's fleet.csv example and the sentences it quotes as its answer."""
    from pipeline import analyze
    from pipeline.render.text.fleet import first_sentences

    (block,) = [b for b in blocks(ROOT / "README.md") if b.file == "fleet.csv"]
    (tmp_path / "fleet.csv").write_text(block.text, encoding="utf-8")
    said = [s for _, s in first_sentences(analyze(tmp_path / "fleet.csv").summary.fleet)]
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    quoted = text.split("For the file above:\n\n", 1)[1].split("\n\nThe report puts", 1)[0]
    paragraphs = [" ".join(line.removeprefix("> ").removeprefix(">") for line in p.splitlines())
                  for p in quoted.split("\n>\n")]  # fmt: skip
    assert [p.strip() for p in paragraphs] == said


def test_a_line_in_this_process_ends_and_prints_as_in_a_shell(tmp_path):
    """`command` runs a plain `pipeline` line through click's runner: what it prints and its
    exit status are those of the same line in a shell; a line with shell syntax goes there."""
    for line in ("pipeline hardware h100   # a comment", "pipeline validate none.csv"):
        mine, real = command(line, tmp_path), shell(line, tmp_path)
        assert (mine.returncode, mine.stdout, mine.stderr) == (
            real.returncode,
            real.stdout,
            real.stderr,
        ), line
        assert isinstance(mine.args, list), line  # this process, not bash
    assert command("pipeline hardware h100 | head -1", tmp_path).args[0] == "bash"


def _quoted(after: str, before: str) -> list[str]:
    """The README's quoted paragraphs between two phrases, each joined into one line."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    quoted = text.split(after, 1)[1].split(before, 1)[0]
    return [" ".join(line.removeprefix("> ").removeprefix(">") for line in p.splitlines()).strip()
            for p in quoted.split("\n>\n")]  # fmt: skip


def test_the_serving_and_training_answers_the_readme_quotes_are_their_files():
    """The sentences the README quotes for scenarios/serving.csv (all of them, in order) and
    scenarios/training.csv (two of its series) are what a run of those files says."""
    from pipeline import analyze
    from pipeline.render.text.serving import serving_sentences
    from pipeline.render.text.training import training_sentences

    serving = serving_sentences(analyze(ROOT / "scenarios" / "serving.csv").summary.serving)
    assert _quoted("`make run` runs it) answers:\n\n", "\n\nThe sentence opens") == serving
    training = training_sentences(analyze(ROOT / "scenarios" / "training.csv").summary.training)
    quoted = _quoted("the fewest days first:\n\n", "\n\nAt 4 M tokens")
    assert len(quoted) == 2 and all(q in training for q in quoted), (quoted, training)


def test_the_cheapest_the_readme_quotes_is_its_price_files(tmp_path):
    """The README's price file given to scenarios/serving.csv: the first sentence ends with the
    cheapest clause the README quotes."""
    from pipeline import analyze
    from pipeline.render.text.serving import serving_sentences

    (block,) = [b for b in blocks(ROOT / "README.md") if b.file == "prices.csv"]
    (tmp_path / "prices.csv").write_text(block.text, encoding="utf-8")
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    clause = text.split('with these prices: "…', 1)[1].split('"),', 1)[0]
    a = analyze(ROOT / "scenarios" / "serving.csv", prices=tmp_path / "prices.csv")
    said = serving_sentences(a.summary.serving)[0]
    assert said.endswith(" ".join(clause.split())), (said, clause)
