"""What the tool promises, round two (issue 16): the findings about writing outputs (R1, R2,
R3, R14, R15, R18, R21, R24), one test each, named for it."""

from __future__ import annotations

import errno
import os
import pathlib
import resource
import subprocess
import sys

import pytest
from click.testing import CliRunner

import pipeline
from pipeline.cli import cli
from pipeline.errors import OutputError
from pipeline.run import folder as folder_module
from pipeline.run.folder import FolderLock
from tests.helpers import BOOK_SCENARIOS, ROOT, tree

LINUX = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux fork and rlimits")
ROWS = [{"name": "q1", "op": "matmul", "B": 128, "D": 4096, "F": 4096, "hardware": "tpu-v5e"}]


def run_cli(args, *, code: str = "", timeout: float = 120, **kwargs):
    """`pipeline ARGS` in a fresh process, after `code` (a patch) ran in it."""
    script = f"{code}\nfrom pipeline.__main__ import main\nmain()"
    return subprocess.run(
        [sys.executable, "-c", script, *map(str, args)],
        capture_output=True, text=True, cwd=ROOT, timeout=timeout, **kwargs,
    )  # fmt: skip


@pytest.fixture
def previous(tmp_path):
    """An output folder from an earlier run, and its files as they are."""
    out = tmp_path / "out"
    done = run_cli(["run", BOOK_SCENARIOS, "-o", out])
    assert done.returncode == 0, done.stderr
    return out, tree(out / BOOK_SCENARIOS.stem)


def assert_left_as_it_was(out: pathlib.Path, before: dict) -> None:
    assert tree(out / BOOK_SCENARIOS.stem) == before
    assert sorted(p.name for p in out.iterdir()) == [BOOK_SCENARIOS.stem]  # no temp, no lock


# ---------------------------------------------------------------- R1: no hang, ever


@LINUX
def test_r01_dead_worker_ends_the_run_with_a_message(previous):
    out, before = previous
    kill = (
        "import os, signal, pipeline.run.stages as s\n"
        "s.STAGES['workbook'] = lambda ctx: os.kill(os.getpid(), signal.SIGKILL)"
    )
    done = run_cli(["run", BOOK_SCENARIOS, "-o", out], code=kill, timeout=60)
    assert done.returncode == 1
    assert "Error: writing the outputs failed: a worker process died" in done.stderr
    assert "Traceback" not in done.stderr
    assert_left_as_it_was(out, before)


def _file_size_limit(limit: int):
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


@LINUX
@pytest.mark.parametrize("mode", [[], ["--no-plots"]], ids=["workers", "in-process"])
def test_r01_failed_write_is_an_error_not_a_hang(previous, mode):
    """A write the system refuses (here a 100 kB file-size limit; a full disk is the same
    errno path) ends the run at once: the writer's panic and an OSError become one message."""
    out, before = previous
    done = run_cli(
        ["run", BOOK_SCENARIOS, "-o", out, *mode], timeout=60, preexec_fn=_file_size_limit(100_000)
    )
    assert done.returncode == 1
    assert "Error: writing " in done.stderr and " failed: " in done.stderr
    assert "File too large" in done.stderr
    assert "PanicException" not in done.stderr and "Traceback" not in done.stderr
    assert_left_as_it_was(out, before)


def test_r01_workbook_spools_inside_the_run_folder(tmp_path):
    """TMPDIR unusable: the workbook writer's spool is in the run's own temp folder, so the
    run neither needs TMPDIR nor leaves anything there."""
    env = {**os.environ, "TMPDIR": str(tmp_path / "missing")}
    done = run_cli(["run", BOOK_SCENARIOS, "-o", tmp_path / "out", "--no-plots"], env=env)
    assert done.returncode == 0, done.stderr
    written = tmp_path / "out" / BOOK_SCENARIOS.stem
    assert (written / "workbook.xlsx").stat().st_size > 0
    assert not any(p.name.startswith(".workbook-spool") for p in written.rglob("*"))


# ---------------------------------------------------------------- R2, R3: files read are kept

CHIPS_TOML = """[chips-r2]
peak_bf16 = 1e15
hbm_bandwidth = 1e12
hbm_capacity = 1e10
"""


def _replaced_run(tmp_path) -> pathlib.Path:
    """An output folder of ours, as write() left it."""
    out = tmp_path / "out" / "run"
    pipeline.analyze(ROWS).write(out)
    return out


def test_r02_hardware_file_inside_the_output_folder_is_kept(tmp_path):
    out = _replaced_run(tmp_path)
    chips = out / "chips.toml"
    chips.write_text(CHIPS_TOML)
    analysis = pipeline.analyze([{**ROWS[0], "hardware": "chips-r2"}], hardware=chips)
    with pytest.raises(OutputError, match="holds the input .*chips.toml"):
        analysis.write(out, force=True)
    assert chips.read_text() == CHIPS_TOML
    shared = pipeline.load_hardware(str(chips))  # a catalog shared between analyses
    with pytest.raises(OutputError, match="holds the input"):
        pipeline.analyze([{**ROWS[0], "hardware": "chips-r2"}], hardware=shared).write(
            out, force=True
        )
    assert chips.read_text() == CHIPS_TOML


def test_r03_relative_input_kept_after_chdir(tmp_path, monkeypatch):
    out = _replaced_run(tmp_path)
    scenarios = out / "s.csv"
    scenarios.write_bytes(BOOK_SCENARIOS.read_bytes())
    monkeypatch.chdir(tmp_path)
    analysis = pipeline.analyze("out/run/s.csv")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")  # the relative path now names nothing
    with pytest.raises(OutputError, match="holds the input"):
        analysis.write(tmp_path / "out" / "run", force=True)
    assert scenarios.read_bytes() == BOOK_SCENARIOS.read_bytes()


# ---------------------------------------------------------------- R14, R15, R18, R21


def test_r14_lock_given_back_when_writing_its_pid_fails(tmp_path, monkeypatch):
    lock = FolderLock(tmp_path / ".x.roofline-lock")
    real_write = os.write

    def full_disk(fd, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full_disk)
    with pytest.raises(OSError):
        lock.acquire()
    monkeypatch.setattr(os, "write", real_write)
    assert not lock.held()
    assert lock.acquire() is None  # the next try takes it, not "another run is writing"
    lock.release()
    analysis = pipeline.analyze(ROWS)
    assert analysis.write(tmp_path / "x").folder == tmp_path / "x"


def test_r15_read_only_output_dir_is_an_error_not_a_traceback(tmp_path, monkeypatch):
    """A read-only OUTPUT_DIR refuses the index's temp file, and even its removal."""
    out = tmp_path / "out"
    real_write, real_unlink = pathlib.Path.write_text, pathlib.Path.unlink

    def read_only(real):
        def call(self, *args, **kwargs):
            if self.name.startswith(".index.html.roofline-tmp"):
                raise OSError(errno.EROFS, "Read-only file system", str(self))
            return real(self, *args, **kwargs)

        return call

    monkeypatch.setattr(pathlib.Path, "write_text", read_only(real_write))
    monkeypatch.setattr(pathlib.Path, "unlink", read_only(real_unlink))
    collectives = ROOT / "scenarios" / "collectives.csv"
    result = CliRunner().invoke(
        cli, ["run", str(BOOK_SCENARIOS), str(collectives), "-o", str(out), "--no-plots"]
    )
    assert result.exit_code == 1
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert f"Error: cannot write {out / 'index.html'}: Read-only file system" in result.stderr


def test_r18_folder_not_ours_is_refused_before_any_walk(tmp_path, monkeypatch):
    target = tmp_path / "big"
    (target / "deep" / "er").mkdir(parents=True)
    (target / "deep" / "er" / "file.txt").write_text("the user's\n")

    def no_walk(*args, **kwargs):
        raise AssertionError("walked a folder that has no manifest of ours")

    monkeypatch.setattr(folder_module.os, "walk", no_walk)
    with pytest.raises(OutputError, match="was not written by this tool"):
        pipeline.analyze(ROWS).write(target)
    assert (target / "deep" / "er" / "file.txt").read_text() == "the user's\n"


def test_r21_write_dot_inside_an_output_folder(tmp_path, monkeypatch):
    analysis = pipeline.analyze(ROWS)
    out = tmp_path / "run"
    analysis.write(out)
    before = tree(out)
    monkeypatch.chdir(out)
    with pytest.raises(OutputError) as caught:
        analysis.write(".")
    message = str(caught.value)
    assert "roofline-lock" not in message
    assert message.startswith(". is the current folder;") and "another folder" in message
    monkeypatch.chdir(out / "plots")
    with pytest.raises(OutputError, match=r"^\.\. is a folder holding the current one"):
        analysis.write("..")
    assert tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]  # no lock or temp left


# ---------------------------------------------------------------- R24: write()'s arguments


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (
            {"max_charts": "3"},
            TypeError,
            "max_charts must be a whole number, 0 or more, not '3' (str)",
        ),
        ({"max_charts": True}, TypeError, "max_charts must be a whole number"),
        ({"report_rows": -1}, ValueError, "report_rows must be a whole number, 0 or more"),
        ({"workers": 0}, ValueError, "workers must be a whole number, 1 or more"),
        ({"plots": "no"}, TypeError, "plots must be True or False, not 'no' (str)"),
        ({"protect": [3]}, TypeError, "protect must list file paths"),
    ],
)
def test_r24_write_arguments_are_checked(tmp_path, call, error, message):
    analysis = pipeline.analyze(ROWS)
    with pytest.raises(error) as caught:
        analysis.write(tmp_path / "out", **call)
    assert str(caught.value).startswith(message)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("out_dir", ["nul\x00x", "", b"out", 3, None])
def test_r24_write_out_dir_is_checked(tmp_path, monkeypatch, out_dir):
    monkeypatch.chdir(tmp_path)
    with pytest.raises((TypeError, ValueError), match="^out_dir must be"):
        pipeline.analyze(ROWS).write(out_dir)
    assert list(tmp_path.iterdir()) == []


@LINUX
def test_r01_stop_while_the_workers_start_is_an_abort(previous):
    """SIGTERM landing while the pool forks its workers (found by F07 under load) was lost in
    an at-fork handler: the run went on and exited 0. Now the stop signals are held while the
    workers start, then delivered: the run stops as any stopped run does."""
    out, before = previous
    # the signal lands right after each fork, in the parent, among the at-fork handlers
    stop_mid_start = (
        "import os, signal\n"
        "os.register_at_fork(after_in_parent=lambda: os.kill(os.getpid(), signal.SIGTERM))"
    )
    done = run_cli(["run", BOOK_SCENARIOS, "-o", out], code=stop_mid_start, timeout=60)
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip().endswith("Aborted!") and "Traceback" not in done.stderr
    assert_left_as_it_was(out, before)
