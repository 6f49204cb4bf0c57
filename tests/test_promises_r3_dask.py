"""Round three of the hostile probe (issue 27), the Dask engine: one test per finding
(test_p03_… to test_p35_…). Those about Dask's own processes (P3, P5, P6, P16, P17) run a
real `dask scheduler` and `dask worker`s on 127.0.0.1, each worker loading HOOK (a
--preload file) that makes its partition tasks hold, die or die mid-write on cue."""

from __future__ import annotations

import json
import os
import pty
import re
import signal
import socket
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest

distributed = pytest.importorskip("distributed")

import pipeline  # noqa: E402
from pipeline.catalogs.hardware import load_catalog  # noqa: E402
from pipeline.engines.dask import run as dask_run  # noqa: E402
from pipeline.engines.dask.run import run_dask  # noqa: E402
from pipeline.scenarios import load_scenarios  # noqa: E402
from pipeline.scenarios.plan import Planned  # noqa: E402
from tests.helpers import ROOT, invoke, tree, write_scenarios  # noqa: E402

DASK = Path(sys.executable).parent / "dask"
TEXT = "name,op,hardware,B,D,F\nq,matmul,h100,1..3000,64,64\n"  # 3,000 scenarios
HOOK = '''
"""A test hook in a `dask worker` (--preload): partition tasks do what ROOFLINE_HOOK says,
leaving marker files in ROOFLINE_HOOK_DIR."""
import os, signal, time
from pathlib import Path

import pipeline.engines.dask.partition as partition

MODE, MARKS = os.environ["ROOFLINE_HOOK"], Path(os.environ["ROOFLINE_HOOK_DIR"])
# a worker may load this file twice: the real functions are those it found the first time
real = vars(partition).setdefault("real", (partition.compute_partition, partition.write_parquet))
compute, parquet = real


def hold(part, lo, hi, number, folder, csv, calibration=None):  # runs on, once started, until released
    (MARKS / f"started-{number}").touch()
    while not (MARKS / "go").exists():
        time.sleep(0.05)
    try:
        return compute(part, lo, hi, number, folder, csv, calibration)
    finally:
        (MARKS / f"finished-{number}").touch()


def die(part, lo, hi, number, folder, csv, calibration=None):  # partition 0 kills the worker running it
    if number == 0:
        (MARKS / "died").touch()
        os.kill(os.getpid(), signal.SIGKILL)
    return compute(part, lo, hi, number, folder, csv, calibration)


def die_writing(frame, path):  # once: half a file written, then the worker killed
    if not (MARKS / "died").exists():
        (MARKS / "died").touch()
        parquet(frame, path)
        os.truncate(path, os.path.getsize(path) // 2)
        os.kill(os.getpid(), signal.SIGKILL)
    return parquet(frame, path)


if MODE == "hold":
    partition.compute_partition = hold
elif MODE == "die":
    partition.compute_partition = die
elif MODE == "die-writing":
    partition.write_parquet = die_writing
'''


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Cluster:
    address: str
    scheduler: subprocess.Popen
    marks: Path

    def wait_for(self, name: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not (self.marks / name).exists():
            assert time.monotonic() < deadline, f"no {name} within {timeout} s"
            time.sleep(0.05)


@contextmanager
def dask_cluster(tmp_path: Path, hook: str = "", workers: int = 1, nanny: bool = True,
                 scheduler_env: dict | None = None) -> Iterator[Cluster]:  # fmt: skip
    """`dask scheduler` on a free port of 127.0.0.1 and `workers` `dask worker`s (one thread
    each, HOOK loaded with mode `hook`), importing the pipeline of this checkout; every
    process group started is killed at the end."""
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    marks = tmp_path / "marks"
    marks.mkdir()
    (tmp_path / "hook.py").write_text(HOOK, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ROOFLINE_HOOK": hook,
           "ROOFLINE_HOOK_DIR": str(marks)}  # fmt: skip
    quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path,
                 start_new_session=True)  # fmt: skip
    started = []
    try:
        started.append(subprocess.Popen(
            [DASK, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
            env={**env, **(scheduler_env or {})}, **quiet))  # fmt: skip
        for _ in range(workers):
            started.append(subprocess.Popen(
                [DASK, "worker", address, "--host", "127.0.0.1", "--nthreads", "1",
                 "--no-dashboard", "--preload", str(tmp_path / "hook.py"),
                 *([] if nanny else ["--no-nanny"])], env=env, **quiet))  # fmt: skip
        with distributed.Client(address, timeout=60) as client:
            if workers:
                client.wait_for_workers(workers, timeout=60)
        yield Cluster(address, started[0], marks)
    finally:
        for proc in started:  # each in a session of its own: a nanny and its worker at once
            with suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)


@pytest.fixture(scope="module")
def plain(tmp_path_factory) -> Iterator[Cluster]:
    """A scheduler and one worker with no hook, for the tests that only need them."""
    with dask_cluster(tmp_path_factory.mktemp("plain")) as cluster:
        yield cluster


def cli(*args, **kwargs) -> subprocess.Popen:
    """`python -m pipeline ARGS` of this checkout, in a process of its own."""
    return subprocess.Popen([sys.executable, "-m", "pipeline", *map(str, args)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            **kwargs)  # fmt: skip


def temp_folders(out: Path) -> list[str]:
    return (
        sorted(p.name for p in out.iterdir() if ".roofline-tmp-" in p.name) if out.exists() else []
    )


def left_in(out: Path) -> list[str]:
    """What a failed run left in its output folder (nothing, or the folder made gone)."""
    return sorted(p.name for p in out.iterdir()) if out.exists() else []


def previous_run(tmp_path: Path) -> tuple[Path, Path, dict]:
    """A scenario file and a local run of it in tmp/out/s: the outputs a Dask run replaces."""
    path = write_scenarios(tmp_path, TEXT)
    folder = pipeline.analyze(path).write(tmp_path / "out" / "s").folder
    return path, folder, tree(folder)


def test_p03_a_run_with_no_worker_stops_after_the_wait_it_shows(tmp_path):
    path, folder, before = previous_run(tmp_path)
    with dask_cluster(tmp_path, workers=0) as cluster:
        done = cli("run", path, "--engine", "dask", "--scheduler", cluster.address,
                   "--worker-wait", "2", "-o", tmp_path / "out")  # fmt: skip
        out, err = done.communicate(timeout=60)
    assert done.returncode == 1, err  # within communicate's guard: it stopped, never hung
    assert "waiting for a Dask worker (2 s left)…" in err
    assert (
        err.strip()
        .splitlines()[-1]
        .startswith(f"Error: no Dask worker at {cluster.address} for 2 s")
    )
    assert "--worker-wait" in err.strip().splitlines()[-1] and "Traceback" not in err
    assert tree(folder) == before and temp_folders(tmp_path / "out") == []


def test_p03_a_run_whose_only_worker_dies_mid_run_stops_instead_of_hanging(tmp_path):
    path, folder, before = previous_run(tmp_path)
    with dask_cluster(tmp_path, hook="die", nanny=False) as cluster:
        done = cli("run", path, "--engine", "dask", "--scheduler", cluster.address,
                   "--worker-wait", "2", "--partition-rows", "1000", "-o", tmp_path / "out")  # fmt: skip
        try:
            out, err = done.communicate(timeout=60)
        finally:
            done.kill()
    assert done.returncode == 1, err
    cluster.wait_for("died", 0)  # the worker really died, mid-run
    assert f"Error: no Dask worker at {cluster.address} for 2 s" in err
    assert "Traceback" not in err
    assert tree(folder) == before and temp_folders(tmp_path / "out") == []


def test_p05_a_worker_killed_mid_write_leaves_nothing_in_the_output(tmp_path):
    path = write_scenarios(tmp_path, TEXT)
    with dask_cluster(tmp_path, hook="die-writing") as cluster:
        got = run_dask(path, tmp_path / "out", scheduler=cluster.address, partition_rows=1000)
        cluster.wait_for("died", 0)  # a worker did die with half a file written
    results = sorted(p.name for p in (got.folder / "results").iterdir())
    assert results == ["part-00000.parquet", "part-00001.parquet", "part-00002.parquet"]
    manifest = json.loads((got.folder / "manifest.json").read_text(encoding="utf-8"))
    listed = [e["path"] for e in manifest["files"]]
    assert not [name for name in listed if name.endswith(".tmp")]
    assert [n for n in listed if n.startswith("results/")] == [f"results/{n}" for n in results]
    assert len(pd.read_parquet(got.folder / "results")) == 3000


def _interrupted_run(tmp_path: Path, stop) -> tuple[str, Path, str]:
    """A run whose partition is held on its worker while `stop(cluster, run)` ends the run;
    then the partition is let go, and runs to its end. The run's stderr, its output folder
    and the scheduler's address."""
    path = write_scenarios(tmp_path, TEXT)
    out = tmp_path / "out"
    with dask_cluster(tmp_path, hook="hold") as cluster:
        run = cli("run", path, "--engine", "dask", "--scheduler", cluster.address, "-o", out)
        try:
            cluster.wait_for("started-0")
            stop(cluster, run)
            _, err = run.communicate(timeout=60)
        finally:
            run.kill()
        assert temp_folders(out) == []  # the run removed its temp folder ...
        (cluster.marks / "go").touch()
        # ... and its partition, let go, ran to its end: it marks "finished" once its task
        # has returned (its writes done, or refused), so nothing of it can come later
        cluster.wait_for("finished-0")
    return err, out, cluster.address


def test_p06_a_task_running_on_after_ctrl_c_never_brings_back_the_temp_folder(tmp_path):
    err, out, _ = _interrupted_run(tmp_path, lambda cluster, run: run.send_signal(signal.SIGINT))
    assert "Aborted!" in err and "Traceback" not in err
    assert left_in(out) == []  # no temp folder made again


@pytest.mark.parametrize("top", ["2000000", "9007199254740992"])  # 2^53: the old code hung
def test_p12_partitions_are_submitted_as_workers_free_up_not_all_at_once(tmp_path, plain, top,
                                                                          monkeypatch):  # fmt: skip
    """2,000,000 (or 2^53) scenarios in partitions of 1,000: when the first completes, a few
    have been built and submitted (2 per worker thread), not all of them."""
    path = write_scenarios(tmp_path, f"name,op,hardware,B,D,F\nq,matmul,h100,1..{top},64,64\n")
    built = []
    real_part = Planned.part

    def part(self, lo, hi):
        built.append(lo)
        return real_part(self, lo, hi)

    class Enough(Exception):
        pass

    def first(merged, got):
        raise Enough(len(built))

    monkeypatch.setattr(Planned, "part", part)
    monkeypatch.setattr(dask_run, "merge_partition", first)
    with pytest.raises(Enough) as stop:
        run_dask(path, tmp_path / "out", scheduler=plain.address, partition_rows=1000)
    assert 1 <= stop.value.args[0] <= 4  # one worker thread: two in flight, then one more
    assert not (tmp_path / "out" / "s").exists()  # nothing left of the stopped run


def test_p12_running_out_of_memory_on_the_client_never_advises_max_rows(tmp_path,
                                                                        monkeypatch):  # fmt: skip
    path = write_scenarios(tmp_path, TEXT)

    def exhausted(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(dask_run, "load_scenarios", exhausted)
    got = invoke("run", path, "--engine", "dask", "-o", tmp_path / "out")
    assert got.exit_code == 1
    assert "--max-rows" not in got.output
    assert "Error: out of memory in this process, the Dask client" in got.output
    assert "--partition-rows" in got.output


def test_p12_a_fleet_list_past_what_the_client_builds_is_refused_in_the_engines_words(tmp_path):
    """Fleet lists (here chips) are multiplied out on the client before it plans: past a
    million rows they are refused, never built, and the reason is the Dask engine's."""
    path = write_scenarios(tmp_path, "name,op,hardware,chips,shard,B,D,F\n"
                           "big,matmul,h100,1..1000001,B,64,64,64\nok,matmul,h100,1|2,B,64,64,64\n")  # fmt: skip
    loaded = load_scenarios(path, load_catalog(), planned=True)
    assert [str(p) for p in loaded.problems] == [
        f"{path}:2: column chips: lists 1,000,001 combinations, which takes the file past its "
        "limit of 1,000,000 rows (the Dask engine's for fleet lists, which its client builds; "
        "a dim's sweep has none)"
    ]
    assert loaded.planned.total == 2


def test_p16_a_partition_that_kills_its_workers_is_one_error_line(tmp_path):
    path = write_scenarios(tmp_path, TEXT)
    fails = {"DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "0"}  # the first death is fatal
    with dask_cluster(tmp_path, hook="die", scheduler_env=fails) as cluster:
        run = cli("run", path, "--engine", "dask", "--scheduler", cluster.address,
                  "--partition-rows", "1000", "-o", tmp_path / "out")  # fmt: skip
        try:
            _, err = run.communicate(timeout=60)
        finally:
            run.kill()
        cluster.wait_for("died", 0)
    assert run.returncode == 1, err
    assert "Traceback" not in err and "KilledWorker" not in err
    (line,) = err.strip().splitlines()  # partition 1, or 2 queued behind it on that worker
    assert re.fullmatch(
        r"Error: partition (1 of 3 \(scenarios 1 to 1,000\)|2 of 3 \(scenarios 1,001 to "
        r"2,000\)) was on the Dask worker that died running it \(out of memory, or killed\); "
        r"nothing written: a smaller --partition-rows \(now 1,000\) needs less memory per "
        r"worker",
        line,
    )
    assert temp_folders(tmp_path / "out") == []


def test_p17_a_scheduler_lost_mid_run_is_one_error_line_and_no_folder_comes_back(tmp_path):
    err, out, address = _interrupted_run(tmp_path, lambda cluster, run: cluster.scheduler.kill())
    assert "Traceback" not in err
    assert err.strip().splitlines() == [
        f"Error: lost the Dask scheduler at {address} mid-run, with 0 of 1 partition done; "
        "nothing written: check that the scheduler is running (and reachable), then run again"
    ]
    assert left_in(out) == []  # P6 holds here too


@pytest.mark.parametrize("scheme", ["tls", "ucx"])
def test_p18_a_tls_or_ucx_scheduler_is_refused_by_name(tmp_path, scheme):
    path = write_scenarios(tmp_path, TEXT)
    got = invoke("run", path, "--engine", "dask", "--scheduler", f"{scheme}://127.0.0.1:8786",
                 "-o", tmp_path / "out")  # fmt: skip
    assert got.exit_code == 2
    line = got.output.strip().splitlines()[-1]
    assert line.startswith(f"Error: --scheduler {scheme}://127.0.0.1:8786: a {scheme}:// "
                           "scheduler needs")  # fmt: skip
    assert "give the scheduler's tcp:// address (tcp://HOST:8786)" in line
    with pytest.raises(ValueError, match=f"a {scheme}:// scheduler needs"):
        run_dask(path, tmp_path / "out", scheduler=f"{scheme}://127.0.0.1:8786")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--scheduler", "tcp://127.0.0.1:1"], "--scheduler is for --engine dask only"),
        (["--partition-rows", "1000000"], "--partition-rows is for --engine dask only"),
        (["--csv"], "--csv is for --engine dask only"),
        (["--csv", "--engine", "local"], "--csv is for --engine dask only"),
        (["--sheet", "Scenarios"], "--sheet picks a workbook's sheet, and"),
        (["--engine", "dask", "--scheduler", ""], "--scheduler is empty"),
    ],
)
def test_p23_engine_options_without_the_engine_are_refused(tmp_path, args, said):
    path = write_scenarios(tmp_path, TEXT)
    got = invoke("run", path, *args, "-o", tmp_path / "out")
    assert got.exit_code == 2
    assert f"Error: {said}" in got.output
    assert not (tmp_path / "out").exists()


def test_p25_partitions_too_small_to_pay_are_refused(tmp_path):
    """Refused before any scheduler is reached (this one does not exist)."""
    path = write_scenarios(tmp_path, TEXT)
    got = invoke("run", path, "--engine", "dask", "--partition-rows", "1", "--scheduler",
                 f"tcp://127.0.0.1:{free_port()}", "-o", tmp_path / "out")  # fmt: skip
    assert got.exit_code == 1
    assert got.output.strip().splitlines()[-1] == (
        f"Error: {path}: partitions of 1 scenario are too small to pay their Dask overhead (a "
        "task, a file and its aggregates each) in a run of 3,000: give --partition-rows 1,000 "
        "or more (default 1,000,000)"
    )


def test_p25_a_dask_run_shows_its_partitions_on_a_terminal(tmp_path, plain):
    path = write_scenarios(tmp_path, TEXT)
    main, other = pty.openpty()
    try:
        run = subprocess.Popen(
            [sys.executable, "-m", "pipeline", "run", str(path), "--engine", "dask",
             "--scheduler", plain.address, "--partition-rows", "1000", "--no-plots",
             "--no-workbook", "-o", str(tmp_path / "out")],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=other, text=True,
        )  # fmt: skip
        os.close(other)
        shown = b""
        with suppress(OSError):  # EIO: the run ended, and the terminal with it
            while chunk := os.read(main, 4096):
                shown += chunk
        out, _ = run.communicate(timeout=60)
    finally:
        os.close(main)
    assert run.returncode == 0, shown
    text = shown.decode()
    assert f"{path}: partitions" in text and "3/3" in text
    assert "3,000 scenarios in 3 partitions" in out


def test_p30_a_run_with_every_row_rejected_writes_empty_results(tmp_path, plain):
    path = write_scenarios(tmp_path, "name,op,hardware,B,D,F\nbad,matmul,h10,8,8,8\n")
    got = run_dask(path, tmp_path / "out", scheduler=plain.address)
    rows = pd.read_parquet(got.folder / "results")
    local = pipeline.analyze(write_scenarios(tmp_path, TEXT, "local.csv")).results
    assert len(rows) == 0 and list(rows.columns) == list(local.columns)
    manifest = json.loads((got.folder / "manifest.json").read_text(encoding="utf-8"))
    listed = {e["path"]: e["sha256"] for e in manifest["files"]}
    on_disk = {p.relative_to(got.folder).as_posix() for p in got.folder.rglob("*") if p.is_file()}
    assert set(listed) == on_disk - {"manifest.json"}
    ((number, empty),) = [(p["number"], p["files"]) for p in manifest["partitions"]]
    assert number == 0 and empty == {"results/part-00000.parquet": listed[next(iter(empty))]}
    said = invoke("run", path, "--engine", "dask", "--scheduler", plain.address, "-o",
                  tmp_path / "cli")  # fmt: skip
    assert said.exit_code == 1
    assert (
        "-> " + str(tmp_path / "cli" / "s") + "/ [results/part-*.parquet, errors.csv, "
        in said.output
    )
    assert "plots/*.png" not in said.output  # nothing drawn: not said


def test_p33_the_runs_own_cluster_prints_no_dashboard_port_warning(tmp_path):
    path = write_scenarios(tmp_path, TEXT)
    with socket.socket() as held:
        with suppress(OSError):  # taken already (another cluster): taken all the same
            held.bind(("127.0.0.1", 8787))
            held.listen()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = run_dask(path, tmp_path / "out", workers=1)
    assert got.scenarios == 3000
    assert not [w for w in caught if "already in use" in str(w.message)]


@pytest.mark.parametrize(
    ("kwargs", "error", "said"),
    [
        ({"partition_rows": 2.5}, TypeError, "partition_rows must be a whole number (int)"),
        ({"partition_rows": "5"}, TypeError, "partition_rows must be a whole number (int)"),
        ({"partition_rows": True}, TypeError, "partition_rows must be a whole number (int)"),
        ({"options": {"plots": False}}, TypeError, "options must be a pipeline.run.write.Options"),
        ({"csv": "no"}, TypeError, "csv must be True or False, not 'no' (str)"),
    ],
)
def test_p35_run_dask_checks_its_arguments_as_analyze_does(tmp_path, kwargs, error, said):
    path = write_scenarios(tmp_path, TEXT)
    nowhere = f"tcp://127.0.0.1:{free_port()}"  # never reached: the check comes first
    with pytest.raises(error) as err:
        run_dask(path, tmp_path / "out", scheduler=nowhere, timeout=1, **kwargs)
    assert str(err.value).startswith(said)
    assert not (tmp_path / "out").exists()
