"""`pipeline run --engine dask`: options and messages (the engine itself is
tested in tests/engine)."""

from __future__ import annotations

import json
import socket
import sys

import pytest

from pipeline.cli.running import dask_checked
from pipeline.engines.dask import cluster
from tests.helpers import invoke, write_scenarios

TEXT = "name,op,hardware,B,D,F\nq,matmul,h100,1..64,64,64\n"


def test_help_says_what_the_engine_options_do():
    out = invoke("run", "--help").output
    for text in ("--engine [local|dask]", "--scheduler ADDRESS", "--partition-rows", "--csv"):
        assert text in out


def test_an_unreachable_scheduler_exits_1_with_its_address(tmp_path, monkeypatch):
    from pipeline.engines.dask import run as dask_run

    monkeypatch.setitem(dask_run.run_dask.__kwdefaults__, "timeout", 1)  # not the 10 s default
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    path = write_scenarios(tmp_path, TEXT)
    got = invoke("run", str(path), "--engine", "dask", "--scheduler", f"tcp://127.0.0.1:{port}",
                 "-o", str(tmp_path / "out"))  # fmt: skip
    assert got.exit_code == 1
    assert f"cannot reach the Dask scheduler at tcp://127.0.0.1:{port}" in got.output


def test_without_dask_installed_the_error_says_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import fails as if not installed
    with pytest.raises(cluster.EngineError, match=r"pip install 'roofline-pipeline\[dask\]'"):
        cluster.dask_module()
    path = write_scenarios(tmp_path, TEXT)
    got = invoke("run", str(path), "--engine", "dask", "-o", str(tmp_path / "out"))
    assert got.exit_code == 1 and "needs Dask" in got.output


def test_strict_refuses_a_file_with_a_bad_row_before_any_worker_starts(tmp_path):
    path = write_scenarios(tmp_path, TEXT + "bad,matmul,h10,8,8,8\n")
    got = invoke("run", str(path), "--engine", "dask", "--strict", "-o", str(tmp_path / "out"))
    assert got.exit_code == 1
    assert "unknown hardware 'h10'" in got.output and "strict mode (--strict) is on" in got.output
    assert not (tmp_path / "out" / "s").exists()


def test_baseline_is_refused_with_the_dask_engine_before_anything_runs(tmp_path):
    path = write_scenarios(tmp_path, TEXT)
    (tmp_path / "old" / "s").mkdir(parents=True)
    got = invoke("run", str(path), "--engine", "dask", "--baseline", str(tmp_path / "old"),
                 "-o", str(tmp_path / "out"))  # fmt: skip
    assert got.exit_code == 2 and "--baseline" in got.output and "--engine dask" in got.output
    assert not (tmp_path / "out").exists()


def test_the_output_options_choose_what_a_dask_run_draws(tmp_path):
    pytest.importorskip("distributed")
    path = write_scenarios(tmp_path, TEXT)
    got = invoke("run", str(path), "--engine", "dask", "--no-workbook", "--max-charts", "1",
                 "-o", str(tmp_path / "out"))  # fmt: skip
    assert got.exit_code == 0, got.output
    folder = tmp_path / "out" / "s"
    assert (folder / "report.html").exists() and not (folder / "workbook.xlsx").exists()
    assert [p.name for p in (folder / "plots").iterdir()] == ["summary.png"]
    assert "[results/part-*.parquet, summary.json, plots/*.png, report.html, manifest.json]" in (
        got.output
    )
    assert "Drew 1 of" in (folder / "report.html").read_text(encoding="utf-8")


def test_several_inputs_get_the_index_page_as_in_a_local_run(tmp_path):
    pytest.importorskip("distributed")
    one = write_scenarios(tmp_path, TEXT, "one.csv")
    two = write_scenarios(tmp_path, TEXT + "bad,matmul,h10,8,8,8\n", "two.csv")
    got = invoke("run", str(one), str(two), "--engine", "dask", "--no-workbook", "--no-plots",
                 "-o", str(tmp_path / "out"))  # fmt: skip
    assert got.exit_code == 1  # a rejected row in two.csv
    assert "index of 2 runs ->" in got.output
    index = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    assert 'href="one/report.html"' in index and 'href="two/report.html"' in index
    assert "rows rejected" in index


def test_quiet_prints_a_dask_runs_warnings_as_one_line(tmp_path):
    pytest.importorskip("distributed")
    text = TEXT + "wide,all_reduce,h100,,,,64,1e9\n"
    path = write_scenarios(tmp_path, text.replace("B,D,F\n", "B,D,F,chips,bytes\n", 1))
    out = tmp_path / "out"
    got = invoke("run", str(path), "--engine", "dask", "--no-workbook", "--no-plots", "-q",
                 "-o", str(out))  # fmt: skip
    assert got.exit_code == 0, got.output
    said = (f"{path}: 1 warning (column chips: 64 chips over nvlink, which reaches 8 chips…), "
            f"in {out / 's'}/manifest.json and report.html\n")  # fmt: skip
    assert got.stdout == "" and got.stderr == said
    assert len(json.loads((out / "s" / "manifest.json").read_text())["warnings"]) == 1


def test_dask_checked_counts_the_plan_and_expands_nothing(tmp_path):
    from pipeline.catalogs.hardware import load_catalog

    path = write_scenarios(tmp_path, "name,op,hardware,B,D,F\nq,matmul,h100,1..9000000000,64,64\n")
    checked = dask_checked(path, load_catalog(), None, None)
    assert (checked.rows, checked.scenarios, checked.problems) == (1, 9_000_000_000, ())
    assert checked.lines.tolist() == [2]  # the row, unexpanded


def test_help_shows_the_worker_wait_and_its_default():
    out = invoke("run", "--help").output
    assert "--worker-wait SECONDS" in out and "60; x>0]" in " ".join(out.split())
