"""engines/dask/partition.py: one partition computed on a worker: its rows are the local engine's,
written whole (a temporary name, then renamed), with aggregates that add up to them."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pandas as pd
import pytest

import pipeline
from pipeline.catalogs.hardware import load_catalog
from pipeline.engines.dask.partition import FolderUnseen, compute_partition, send_part
from tests.helpers import load_text, write_scenarios

TEXT = """
name,op,hardware,B,D,F
s,matmul,h100|tpu-v5e,1..2048,4096,4096
"""


def test_a_partition_is_the_local_rows_of_its_range_with_their_aggregates(tmp_path):
    local = pipeline.analyze(write_scenarios(tmp_path, TEXT))
    plan = load_text(tmp_path, load_catalog(), TEXT, planned=True).planned
    part, a, b = plan.part(1500, 3500)
    (tmp_path / "out" / "results").mkdir(parents=True)  # the client makes it, never a task
    got = compute_partition(part, a, b, 0, str(tmp_path / "out"), True)
    rows = pd.read_parquet(tmp_path / "out" / "results" / "part-00000.parquet")
    want = local.results.iloc[1500:3500].reset_index(drop=True)
    assert list(rows["name"]) == list(want["name"])
    assert rows["t_lower"].tolist() == want["t_lower"].tolist()
    assert sorted(p.name for p in (tmp_path / "out" / "results").iterdir()) == [
        "part-00000.csv", "part-00000.parquet"]  # no temporary file left  # fmt: skip
    for name, digest in got["files"].items():
        assert hashlib.sha256((tmp_path / "out" / name).read_bytes()).hexdigest() == digest
    partial = got["partial"]
    assert partial.scenarios == 2000 and partial.counts["scenarios"].sum() == 2000
    series = partial.lines.loc["s"]
    assert series["scenarios"] == 2000
    assert series["t_min"] == want["t_lower"].min() and series["t_max"] == want["t_lower"].max()
    assert partial.findings["slowest"]["in_series"].tolist() == [2000]  # one series
    bins = partial.grids.bins
    assert bins["scenarios"].sum() == 2000  # every row binned once (no collective here)
    assert set(bins["chart"]) == {"roofline"} and set(bins["hardware"]) == {"h100", "tpu-v5e"}
    later = compute_partition(part, a, b, 3, str(tmp_path / "out"), False)
    assert list(later["files"]) == ["results/part-00003.parquet"]


def test_a_task_never_makes_the_runs_folder(tmp_path):
    """The client makes results/ before any task; a task that runs on after its run ended
    (the folder removed) fails instead of bringing the folder back."""
    plan = load_text(tmp_path, load_catalog(), TEXT, planned=True).planned
    part, a, b = plan.part(0, 10)
    with pytest.raises(FolderUnseen) as err:
        compute_partition(part, a, b, 0, str(tmp_path / "gone"), False)
    assert err.value.args[0] == str(tmp_path / "gone" / "results")
    assert not (tmp_path / "gone").exists()


def test_a_partition_sent_through_the_folder_is_the_same_partition(tmp_path):
    """send_part writes a partition's rows (and the calibration) beside its results, hidden,
    for the worker to read: the task graph holds only that path."""
    plan = load_text(tmp_path, load_catalog(), TEXT, planned=True).planned
    part, a, b = plan.part(1500, 3500)
    (tmp_path / "out" / "results").mkdir(parents=True)
    sent = send_part(tmp_path / "out", 4, part)
    assert sent == str(tmp_path / "out" / "results" / ".part-00004.input.pickle")
    got = compute_partition(sent, a, b, 4, str(tmp_path / "out"), False)
    direct = compute_partition(part, a, b, 5, str(tmp_path / "out"), False)
    assert got["partial"].scenarios == direct["partial"].scenarios == 2000
    assert got["partial"].lines.equals(direct["partial"].lines)
    Path(sent).unlink()
    with pytest.raises(FolderUnseen):  # its run ended, the folder (and its input) gone
        compute_partition(sent, a, b, 4, str(tmp_path / "out"), False)


STEPS = """
name,op,model,hardware,B,T,S
dec,transformer,llama3-8b,h100,1..40,1,1024
"""


def test_the_models_tables_cap_reaches_the_worker(tmp_path):
    """run_dask(models_rows=N) sends N with the rows: the worker keeps the N slowest steps
    (and each fleet point's best) as the local engine does."""
    plan = load_text(tmp_path, load_catalog(), STEPS, planned=True).planned
    part, a, b = plan.part(0, plan.total)
    (tmp_path / "out" / "results").mkdir(parents=True)
    sent = send_part(tmp_path / "out", 0, part, None, 3)
    got = compute_partition(sent, a, b, 0, str(tmp_path / "out"), False)["partial"]
    assert got.models_rows == 3
    assert got.steps["name"].tolist() == ["dec[B=38]", "dec[B=39]", "dec[B=40]"]  # file order


def test_the_prices_reach_the_worker_beside_the_calibration(tmp_path):
    """Issue 44: run_dask(prices=) sends USD per chip-hour with the rows: the worker's
    results gain usd_per_chip_hour and cost, as the local engine's do."""
    plan = load_text(tmp_path, load_catalog(), TEXT, planned=True).planned
    part, a, b = plan.part(0, 10)
    (tmp_path / "out" / "results").mkdir(parents=True)
    sent = send_part(tmp_path / "out", 0, part, None, 3, {"h100": 2.0})
    compute_partition(sent, a, b, 0, str(tmp_path / "out"), False)
    rows = pd.read_parquet(tmp_path / "out" / "results" / "part-00000.parquet")
    assert (rows["usd_per_chip_hour"] == 2.0).all() and len(rows) == 10
    assert rows["cost"].tolist() == pytest.approx((rows["t_lower"] * 2.0 / 3600).tolist())
