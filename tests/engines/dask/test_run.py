"""engines/dask/run.py: the Dask engine on a 2-worker LocalCluster gives the local engine's
numbers row for row, loses and repeats nothing at partition boundaries, survives a killed
worker, runs on a real `dask scheduler` with `dask worker`s, says plainly when a scheduler
cannot be reached, and leaves the previous output in place when it fails."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

distributed = pytest.importorskip("distributed")

import pipeline  # noqa: E402
from pipeline.catalogs.hardware import load_catalog  # noqa: E402
from pipeline.engines.dask import run as dask_run  # noqa: E402
from pipeline.engines.dask.partition import FolderUnseen  # noqa: E402
from pipeline.engines.dask.run import EngineError, run_dask  # noqa: E402
from pipeline.errors import OutputError  # noqa: E402
from tests.helpers import alive, pipeline_cmd, write_scenarios  # noqa: E402

# 100,000 scenarios: a sweep row over two chips cut by every partition, single rows between
SWEEP = """
name,op,hardware,dtype,chips,shard,B,D,F,bytes,notes
first,matmul,h100,bf16,1,,8,4096,4096,,a single row
grid,matmul,h100|mi300x,bf16,1,,1..1000,1..49,4096,,"98,000 scenarios"
bad,matmul,h10,bf16,1,,8,8,8,,unknown chip: refused as in the local engine
tp,matmul,b200,bf16|fp8,2|4|8|16,D,4096,8192,8192,,8 points
ag,all_gather,tpu-v5e,bf16,16,,,,,1000..100000000000*10,9 sizes
idle,matmul,h100,bf16,8,B,1..16,64,64,,"B < 8 on 8 chips: some idle (a warning)"
mid,matmul,gaudi3,bf16,1,,1..1966,64,64,,"the rest, to 100,000"
"""
COMPARED = ["name", "series", "hardware", "compute_dtype", "chips", "flops", "hbm_bytes",
            "network_bytes", "t_math", "t_hbm", "t_network", "t_lower", "t_upper", "bound",
            "critical_batch", "fits", "peak_fraction"]  # fmt: skip


def parts(folder: Path) -> pd.DataFrame:
    return pd.read_parquet(folder / "results")


def test_the_same_numbers_row_for_row_as_the_local_engine(tmp_path, cluster):
    path = write_scenarios(tmp_path, SWEEP)
    local = pipeline.analyze(path)
    got = run_dask(path, tmp_path / "out", hardware=load_catalog(), scheduler=cluster.scheduler_address,
                   partition_rows=7_000)  # fmt: skip
    assert got.scenarios == len(local.results) == 100_000
    assert got.partitions == 15  # 14 full partitions of 7,000 and one of 2,000
    assert [str(p) for p in got.problems] == [str(p) for p in local.problem_list]
    assert sorted(got.warnings) == sorted(local.warnings)  # idle chips and reach, as worded there
    dask_rows = parts(got.folder)
    assert list(dask_rows.columns) == list(local.results.columns)
    pd.testing.assert_frame_equal(
        dask_rows[COMPARED].astype({"hardware": str, "compute_dtype": str, "bound": str}),
        local.results[COMPARED].astype({"hardware": str, "compute_dtype": str, "bound": str}),
        check_dtype=False,
    )  # nothing lost, nothing repeated, the same order, at every boundary
    manifest = json.loads((got.folder / "manifest.json").read_text())
    assert manifest["engine"] == "dask" and manifest["scenarios"] == 100_000
    assert [p["rows"] for p in manifest["partitions"]] == [7_000] * 14 + [2_000]
    for p in manifest["partitions"]:  # the checksums name the files written
        ((name, digest),) = p["files"].items()
        entry = next(e for e in manifest["files"] if e["path"] == name)
        assert entry["sha256"] == digest
    summary = json.loads((got.folder / "summary.json").read_text())
    local_bounds = local.results["bound"].astype(str).value_counts()
    assert summary["bounds"] == {b: int(local_bounds.get(b, 0)) for b in summary["bounds"]}
    # the series lines, the unit people read: the local Summary's, every column
    pd.testing.assert_frame_equal(got.record.summary.lines, local.summary.lines,
                                  check_dtype=False)  # fmt: skip
    assert [s["series"] for s in summary["series"]] == list(local.summary.lines.index)
    pd.testing.assert_frame_equal(got.record.summary.critical_batches,
                                  local.summary.critical_batches)  # fmt: skip
    grid = next(s for s in summary["series"] if s["series"] == "grid")
    assert grid["hardware"] == "h100|mi300x" and grid["scenarios"] == 98_000
    errors = pd.read_csv(got.folder / "errors.csv")
    assert list(errors["name"]) == ["bad"]
    # the fleet answer (issue 30): the same ranking and curves, the same chart, byte for byte
    for field in ("fleet", "fleet_curves"):
        pd.testing.assert_frame_equal(getattr(got.record.summary, field),
                                      getattr(local.summary, field), check_dtype=False)  # fmt: skip
    assert set(local.summary.fleet["series"]) == {"grid", "tp"}
    for series in ("grid", "tp"):
        png = (got.folder / "plots" / f"fleet-{series}.png").read_bytes()
        assert png == pipeline.charts.fleet(local, series)._repr_png_()[0]
    assert [s["series"] for s in summary["fleet"]] == list(local.summary.fleet["series"])


def test_warnings_of_a_row_cut_by_partitions_are_those_of_the_local_engine(tmp_path, cluster):
    path = write_scenarios(tmp_path, """
name,op,hardware,chips,shard,B,D,F,bytes
idle,matmul,h100,8,B,1..16,64,64,
one,matmul,h100,4,B,2,64,64,
ag,all_gather,h100,16|64,,,,,1e9
""")  # fmt: skip
    local = pipeline.analyze(path)
    assert len(local.warnings) == 3  # two idle-chip lines, the all-gather past nvlink's reach
    got = run_dask(path, tmp_path / "out", hardware=load_catalog(), scheduler=cluster.scheduler_address,
                   partition_rows=3)  # fmt: skip
    assert got.partitions == 7
    assert sorted(got.warnings) == sorted(local.warnings)


def test_a_worker_killed_mid_partition_still_yields_complete_output(tmp_path, cluster,
                                                                    monkeypatch):  # fmt: skip
    """One worker process is killed while it runs a partition (its task has begun and holds
    until the kill comes): the partition runs again on a worker alive, and the output is
    whole. A kill that missed the task (the run ended first, or the task ended before the kill)
    fails the test."""
    path = write_scenarios(tmp_path, SWEEP)
    marks = tmp_path / "marks"
    marks.mkdir()
    with distributed.Client(cluster) as client:
        victim = next(iter(client.run(os.getpid).values()))
    real = dask_run.compute_partition

    def held_on_victim(*args):
        if os.getpid() == victim:
            (marks / "started").touch()  # the victim runs a partition ...
            deadline = time.monotonic() + 120  # (a failure guard, never reached when killed)
            while time.monotonic() < deadline:  # ... and holds it until it is killed
                time.sleep(0.05)
            (marks / "finished").touch()
        return real(*args)

    killed = []

    def kill_once_started():
        deadline = time.monotonic() + 120
        while not (marks / "started").exists():
            if time.monotonic() > deadline:
                return
            time.sleep(0.02)
        os.kill(victim, signal.SIGKILL)
        killed.append(victim)

    monkeypatch.setattr(dask_run, "compute_partition", held_on_victim)
    killer = threading.Thread(target=kill_once_started, daemon=True)
    killer.start()
    got = run_dask(path, tmp_path / "out", hardware=load_catalog(), scheduler=cluster.scheduler_address,
                   partition_rows=5_000)  # fmt: skip
    killer.join(timeout=120)
    assert killed == [victim], "the victim never ran a partition: no kill, not a test of it"
    assert not (marks / "finished").exists(), "the partition ended before the kill"
    assert not alive({victim})
    assert got.scenarios == 100_000
    names = parts(got.folder)["name"]
    assert len(names) == 100_000 and names.is_unique


def test_a_failed_run_leaves_the_previous_output(tmp_path, cluster, monkeypatch):
    path = write_scenarios(tmp_path, SWEEP)
    first = run_dask(path, tmp_path / "out", hardware=load_catalog(),
                     scheduler=cluster.scheduler_address, partition_rows=50_000)  # fmt: skip
    before = {p: p.read_bytes() for p in first.folder.rglob("*") if p.is_file()}

    def broken(*args):
        raise OSError("No space left on device")

    monkeypatch.setattr(dask_run, "compute_partition", broken)
    with pytest.raises(OutputError, match="failed: No space left on device"):  # retried first
        run_dask(path, tmp_path / "out", hardware=load_catalog(), scheduler=cluster.scheduler_address,
                 partition_rows=50_000)  # fmt: skip
    after = {p: p.read_bytes() for p in first.folder.rglob("*") if p.is_file()}
    assert after == before
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["s"]


def test_an_unreachable_scheduler_is_a_clear_error_within_its_timeout(tmp_path, monkeypatch):
    path = write_scenarios(tmp_path, SWEEP)
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    asked = []  # the timeouts the run gave Dask's Client: what bounds its wait, not a clock
    real_client = distributed.Client

    def client(*args, **kwargs):
        asked.append(kwargs.get("timeout"))
        return real_client(*args, **kwargs)

    monkeypatch.setattr(distributed, "Client", client)
    with pytest.raises(EngineError) as err:
        run_dask(path, tmp_path / "out", hardware=load_catalog(), scheduler=f"tcp://127.0.0.1:{port}",
                 timeout=2)  # fmt: skip
    assert asked == [2]
    assert str(err.value).startswith(f"cannot reach the Dask scheduler at tcp://127.0.0.1:{port} "
                                      "within 2 s")  # fmt: skip
    assert not (tmp_path / "out" / "s").exists()


def test_a_real_scheduler_and_two_workers_on_localhost(tmp_path):
    """`dask scheduler` and two `dask worker` processes, as the README shows, and the run
    pointed at them with --scheduler."""
    bin_dir = Path(sys.executable).parent
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    env = {**os.environ, "DASK_DISTRIBUTED__WORKER__DAEMON": "False"}
    started = [subprocess.Popen([bin_dir / "dask", "scheduler", "--host", "127.0.0.1", "--port",
                                 str(port), "--dashboard-address", ":0"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)]  # fmt: skip
    try:
        for _ in range(2):
            started.append(subprocess.Popen(
                [bin_dir / "dask", "worker", address, "--nthreads", "1", "--nworkers", "1",
                 "--no-dashboard"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=tmp_path))  # fmt: skip
        with distributed.Client(address, timeout=60) as client:
            client.wait_for_workers(2, timeout=60)
        path = write_scenarios(tmp_path, SWEEP)
        done = pipeline_cmd("run", str(path), "--engine", "dask", "--scheduler", address,
                            "--partition-rows", "25000", "-o", str(tmp_path / "out"))  # fmt: skip
        assert done.returncode == 1, done.stderr  # the one bad row, as in the local engine
        assert "unknown hardware 'h10'" in done.stderr
        assert "100,000 scenarios in 4 partitions" in done.stdout
        assert len(parts(tmp_path / "out" / "s")) == 100_000
    finally:
        for proc in reversed(started):
            proc.send_signal(signal.SIGTERM)
        for proc in started:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()


def test_the_runs_own_workers_keep_glibcs_malloc_thresholds(tmp_path):
    """Dask's nanny sets MALLOC_TRIM_THRESHOLD_ in its workers (a partition 25-55 % slower);
    the cluster a run starts does not. In a process of its own: a nanny writes the variable
    into its parent's environment, and every later cluster of that process inherits it."""
    code = (
        "import os, distributed\n"
        "from pipeline.engines.dask.cluster import connected\n"
        "if __name__ == '__main__':\n"
        "    with connected(distributed, None, 1, 10) as client:\n"
        "        print(list(client.run(lambda: os.environ.get('MALLOC_TRIM_THRESHOLD_')).values()))\n"
    )
    script = tmp_path / "env.py"
    script.write_text(code, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_TRIM_THRESHOLD_"}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                          timeout=120)  # fmt: skip
    assert done.stdout.strip().splitlines()[-1] == "[None]", done.stderr[-2000:]


def test_workers_that_do_not_see_the_folder_are_named_with_the_fix(tmp_path, cluster, monkeypatch):
    path = write_scenarios(tmp_path, SWEEP)

    def elsewhere(part, lo, hi, number, folder, csv, calibration=None):  # a worker elsewhere
        raise FolderUnseen(f"{folder}/results", "node7")

    monkeypatch.setattr(dask_run, "compute_partition", elsewhere)
    with pytest.raises(EngineError) as err:
        run_dask(path, tmp_path / "out", scheduler=cluster.scheduler_address, partition_rows=50_000)
    assert str(err.value).startswith("a Dask worker on node7 does not see the run's folder ")
    assert str(err.value).endswith(
        "every worker must see -o's folder at the same path (a shared file system)"
    )


@pytest.mark.parametrize(
    ("kwargs", "error", "said"),
    [
        ({"worker_wait": 0}, ValueError, "worker_wait must be a number of seconds above 0"),
        (
            {"worker_wait": float("nan")},
            ValueError,
            "worker_wait must be a number of seconds above 0, not nan",
        ),
        ({"timeout": True}, TypeError, "timeout must be a number of seconds, not True (bool)"),
        ({"workers": 0}, ValueError, "workers must be 1 or more, not 0"),
        ({"workers": 1.0}, TypeError, "workers must be a whole number (int) or None"),
        ({"scheduler": 8786}, TypeError, "scheduler must be a str or None, not 8786 (int)"),
        ({"scheduler": "  "}, ValueError, "--scheduler is empty"),
        ({"progress": "yes"}, TypeError, "progress must be a function or None"),
        ({"encoding": "klingon"}, ValueError, "unknown encoding 'klingon'"),
        ({"partition_rows": 0}, ValueError, "partition_rows must be 1 or more, not 0"),
        ({"out_dir": 3}, TypeError, "out_dir must be a path (str or pathlib.Path), not 3 (int)"),
    ],
)
def test_the_other_arguments_are_checked_before_anything_runs(tmp_path, kwargs, error, said):
    path = write_scenarios(tmp_path, SWEEP)
    with pytest.raises(error) as err:
        run_dask(**{"path": path, "out_dir": tmp_path / "out", **kwargs})
    assert str(err.value).startswith(said)
    assert not (tmp_path / "out").exists()


def test_models_calibration_and_lang_are_given_as_analyze_takes_them(tmp_path, cluster):
    """Issue 40: the hardware Catalog carries neither the LLMs nor a calibration; run_dask
    takes them as analyze() does (a path each, here), and `lang` as Analysis.write does."""
    from tests.helpers import measured_rows

    measured = tmp_path / "m.csv"
    measured_rows(20).to_csv(measured, index=False)
    pipeline.calibrate(measured, tmp_path / "cal.toml")
    models = tmp_path / "mine.toml"
    models.write_text("[tiny]\nD = 64\nF = 256\nN = 4\nK = 4\nH = 16\nL = 2\nV = 1000\n")
    path = write_scenarios(tmp_path, "name,op,model,hardware,B,D,F,T,S\n"
                           "d,transformer,tiny,h100,1..8,,,1,128\nm,matmul,,h100,8,64,64,,\n")  # fmt: skip
    given = dict(models=models, calibration=tmp_path / "cal.toml")
    local = pipeline.analyze(path, **given)
    got = run_dask(path, tmp_path / "out", scheduler=cluster.scheduler_address, lang="ko",
                   options=dask_run.Options(plots=False, workbook=False), **given)  # fmt: skip
    assert got.problems == () and got.scenarios == len(local.results)
    rows = parts(got.folder).sort_values(["name", "t_lower"], ignore_index=True)
    want = local.results.sort_values(["name", "t_lower"], ignore_index=True)
    pd.testing.assert_series_equal(rows["t_estimate"], want["t_estimate"])
    assert got.record.summary.calibration == local.summary.calibration
    assert '<html lang="ko">' in (got.folder / "report.html").read_text(encoding="utf-8")


def test_rows_below_the_floor_are_found_across_partitions_as_locally(tmp_path, cluster):
    """Issue 41: the measured rows under their floor, merged from partitions, with their cause."""
    path = write_scenarios(tmp_path, "name,op,hardware,B,D,F,bytes,chips,measured_seconds\n"
                           "l2,matmul,h100,32768,512,32|64|128,,,7.5e-6\n"
                           "ar,all_reduce,h100,,,,32768|65536,8,1e-6\n"
                           "math,matmul,h100,8192,8192,8192,,,2e-4\n")  # fmt: skip
    local = pipeline.analyze(path).summary.findings
    got = run_dask(path, tmp_path / "out", scheduler=cluster.scheduler_address, partition_rows=2,
                   options=dask_run.Options(plots=False, workbook=False))  # fmt: skip
    found = got.record.summary.findings
    assert found["measured_below_total"] == local["measured_below_total"] == 6
    text = dict.fromkeys(("name", "series", "hardware", "bound", "op", "cause"), str)
    pd.testing.assert_frame_equal(
        found["measured_below"].reset_index(drop=True).astype(text),
        local["measured_below"].reset_index(drop=True).astype(text),
        check_dtype=False,
    )
    assert set(found["measured_below"]["cause"]) == {"cache", "one_shot", "rates"}
    report = (got.folder / "report.html").read_text(encoding="utf-8")
    assert "Measured below the floor: 6 scenarios" in report
    assert report.index("Measured below the floor") < report.index("Measured vs predicted")


def test_the_serving_answer_is_the_local_engine_s(tmp_path, cluster):
    """Issue 43: serve rows cut across partitions (each keeps its steps) give the local
    serving answer, its curves and its summary.json lines."""
    path = write_scenarios(tmp_path, "name,op,model,hardware,dtype,chips,shard,isl,osl,B,"
                           "tpot_target\nllama,serve,llama3-70b,h100|b200,bf16|fp8,4|8,N,2048,"
                           "256,64|128|256|512,0.015\n")  # fmt: skip
    local = pipeline.analyze(path)
    got = run_dask(path, tmp_path / "out", hardware=load_catalog(),
                   scheduler=cluster.scheduler_address, partition_rows=5)  # fmt: skip
    assert got.partitions > 2
    for field in ("serving", "serving_curves"):
        pd.testing.assert_frame_equal(getattr(got.record.summary, field),
                                      getattr(local.summary, field))  # fmt: skip
    summary = json.loads((got.folder / "summary.json").read_text())
    assert summary["serving"]["llama"][0]["rank"] == 1
    assert len(summary["serving"]["llama"]) == len(local.summary.serving) == 8


def test_prices_give_the_local_costs_and_cost_ranks(tmp_path, cluster):
    """Issue 44: the prices travel to the workers with the rows, so a Dask run with prices has
    the local cost columns, serving answer (cost ranks), summary.json, warnings (a chip
    without a price) and the manifest's price file."""
    path = write_scenarios(tmp_path, "name,op,model,hardware,dtype,chips,shard,isl,osl,B,"
                           "tpot_target,D,F\nllama,serve,llama3-70b,h100|b200,bf16|fp8,8,N,2048,"
                           "256,64|256,0.015,,\nm,matmul,,mi300x,bf16,,,,,8,,64,64\n")  # fmt: skip
    prices = tmp_path / "p.csv"
    prices.write_text("hardware,usd_per_chip_hour,source,date\nh100,2.5,a quote,2026-11-01\n"
                      "b200,6,a quote,2026-11-01\n", encoding="utf-8")  # fmt: skip
    local = pipeline.analyze(path, prices=prices)
    written = local.write(tmp_path / "local", plots=False, workbook=False, report=False)
    got = run_dask(path, tmp_path / "out", scheduler=cluster.scheduler_address, partition_rows=3,
                   prices=prices, options=dask_run.Options(plots=False, workbook=False))  # fmt: skip
    assert got.partitions > 1
    rows = parts(got.folder)
    cost = ["usd_per_chip_hour", "cost", "usd_per_million_tokens", "tokens_per_joule"]
    pd.testing.assert_frame_equal(rows[["name", *cost]].astype({"name": str}),
                                  local.results[["name", *cost]].astype({"name": str}))  # fmt: skip
    assert rows["usd_per_chip_hour"].notna().sum() > 0
    serving = got.record.summary.serving
    pd.testing.assert_frame_equal(serving, local.summary.serving)
    assert serving["cost_rank"].notna().any()
    assert got.warnings == local.warnings
    assert any("no price for mi300x" in w for w in got.warnings)
    mine = json.loads((written.folder / "summary.json").read_text())
    assert json.loads((got.folder / "summary.json").read_text()) == mine
    manifest = json.loads((got.folder / "manifest.json").read_text())
    assert manifest["prices"] == json.loads((written.folder / "manifest.json").read_text())[
        "prices"] == {"path": str(prices.resolve()), "sha256": local.prices[1]}  # fmt: skip
