"""pipeline.compare: Analyses, output folders, results files or frames; the Comparison's repr
and its atomic write."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import pipeline
from pipeline.compare import Comparison, load_results
from pipeline.errors import InvalidResults, OutputError

TWO_CHIP = dict(op="matmul", B=4096, F=16384, hardware="v5e", chips=2, shard="D")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("runs")
    old = pipeline.analyze([dict(name="tp2", D=8754, **TWO_CHIP)])
    new = pipeline.analyze([dict(name="tp2", D=8756, **TWO_CHIP)])
    old.write(base / "old", plots=False, workbook=False, report=False)
    new.write(base / "new", plots=False, workbook=False, report=False)
    return base, old, new


def test_every_kind_of_run_gives_the_same_changes(runs):
    base, old, new = runs
    expected = pipeline.compare(old, new).table
    assert expected["change"].tolist() == ["bound", "critical_batch"]
    for a, b in [(base / "old", base / "new"), (base / "old/results.csv", new.results),
                 (old.results, str(base / "new/results.parquet"))]:  # fmt: skip
        pd.testing.assert_frame_equal(pipeline.compare(a, b).table, expected)


def test_a_dask_runs_folder_compares_and_serves_as_a_baseline(tmp_path):
    """A Dask run keeps its rows in results/part-NNNNN.parquet: compare and --baseline read
    them there, every part in order, as a local run's results.parquet."""
    rows = [
        dict(name=f"s{b}", B=b, D=8192, F=8192, op="matmul", hardware="v5e")
        for b in (64, 512, 4096)
    ]
    local = pipeline.analyze(rows)
    dask = tmp_path / "dask"
    (dask / "results").mkdir(parents=True)
    whole = local.results
    whole.iloc[:2].to_parquet(dask / "results/part-00000.parquet", index=False)
    whole.iloc[2:].to_parquet(dask / "results/part-00001.parquet", index=False)
    assert pipeline.compare(dask, local).summary() == "3 compared: no changes"
    moved = pipeline.analyze([{**r, "D": 2 * r["D"]} if r["B"] == 4096 else r for r in rows])
    assert pipeline.compare(dask, moved).table["name"].unique().tolist() == ["s4096"]
    from pipeline.run.baseline import read_baseline

    assert read_baseline(dask)["name"].tolist() == ["s64", "s512", "s4096"]


def test_repr_is_one_line(runs):
    base, old, new = runs
    c = pipeline.compare(base / "old", new)
    assert isinstance(c, Comparison)
    assert "\n" not in repr(c) and repr(c).startswith(f"<Comparison of {base / 'old'} → ")
    assert repr(c).endswith("1 compared: 2 changes (bound 1, critical_batch 1)>")
    assert pipeline.compare(old, old).summary() == "1 compared: no changes"


def test_two_analyses_in_memory_are_told_apart_by_name_or_role(runs):
    _, old, new = runs  # both of rows given in memory, without name=
    assert repr(pipeline.compare(old, new)).startswith(
        "<Comparison of rows (baseline) → rows (new): "
    )
    named = pipeline.analyze([dict(name="tp2", D=8754, **TWO_CHIP)], name="monday")
    c = pipeline.compare(named, new)
    assert c.labels == ("monday", "rows") and repr(c).startswith("<Comparison of monday → rows: ")


def test_a_notebook_shows_the_counts_the_groups_and_the_flips(runs):
    from IPython.core.formatters import DisplayFormatter

    _, old, new = runs
    c = pipeline.compare(old, new)
    data, _ = DisplayFormatter().format(c)
    assert data["text/plain"] == repr(c)
    html = data["text/html"]
    assert "<code>rows (baseline)</code> &rarr; <code>rows (new)</code>" in html
    assert "<strong>1</strong> bound flip, <strong>1</strong> critical-batch change" in html
    assert "network → compute; critical batch — → 259" in html  # its group, as changes.html
    assert '<td style="text-align:left">network &rarr; compute</td>' in html  # the flip


def test_csv_only_folder_and_missing_or_malformed_baselines(runs, tmp_path):
    base, old, new = runs
    only_csv = tmp_path / "csv"
    only_csv.mkdir()
    (only_csv / "results.csv").write_bytes((base / "old/results.csv").read_bytes())
    assert pipeline.compare(only_csv, new).changes.counts["bound"] == 1
    with pytest.raises(
        InvalidResults,
        match="baseline folder .* has no results.parquet, results.csv or a Dask run.s results/",
    ):
        pipeline.compare(tmp_path, new)
    with pytest.raises(InvalidResults, match="baseline .*nope does not exist"):
        pipeline.compare(tmp_path / "nope", new)
    bad = tmp_path / "results.parquet"
    bad.write_text("not parquet")
    with pytest.raises(InvalidResults, match="cannot read the baseline"):
        pipeline.compare(bad, new)
    headless = tmp_path / "results.csv"
    headless.write_text("a,b\n1,2\n")
    with pytest.raises(InvalidResults, match="has none of the columns a comparison reads"):
        load_results(headless)


def test_write_is_atomic_and_never_over_foreign_files(runs, tmp_path):
    base, old, new = runs
    c = pipeline.compare(old, new)
    csv_path, html_path = c.write(tmp_path / "changes")
    assert csv_path.read_text(encoding="utf-8").count("\n") == 3
    assert "Bound flips (1)" in html_path.read_text(encoding="utf-8")
    manifest = json.loads((tmp_path / "changes/manifest.json").read_text())
    assert manifest["counts"]["bound"] == 1
    pipeline.compare(old, old).write(tmp_path / "changes")  # ours: replaced
    assert (tmp_path / "changes/changes.csv").read_text().count("\n") == 1
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep")
    with pytest.raises(OutputError, match="not written by this tool"):
        c.write(foreign)
    assert (foreign / "notes.txt").read_text() == "keep"
