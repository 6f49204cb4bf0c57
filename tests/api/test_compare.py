"""comparing.py: pipeline.compare of Analyses, output folders, results files or frames (the
Comparison's repr and its atomic write); pipeline.compare_runs of two whole runs (folders
`run -o` wrote for several inputs) compared input by input, paired by the input's name; an
input only one run has is added or removed as a whole; one changes.csv, one changes.html, one
exit status (a flip in any input fails)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

import pipeline
from pipeline.api.compare import Comparison, compare_runs, input_names, inputs_of, load_results
from pipeline.errors import InvalidResults, OutputError
from tests.helpers import FAST_WRITE, invoke, write_scenarios

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


FIRST = "name,op,B,D,F,hardware\na,matmul,8,8192,8192,v5e\n"
SECOND = "name,op,B,D,F,hardware\nflip,matmul,{b},8192,8192,v5e\nsame,matmul,8,64,64,h100\n"


def night(tmp_path, folder: str, b: int, extra: str | None = None):
    """A run of two inputs (first.csv, second.csv: its `flip` row at batch `b`), and a
    third when `extra` is given, into tmp_path/folder."""
    texts = {"first": FIRST, "second": SECOND.format(b=b), **({"third": extra} if extra else {})}
    (tmp_path / f"in-{folder}").mkdir()
    for stem, text in texts.items():
        path = write_scenarios(tmp_path / f"in-{folder}", text, name=f"{stem}.csv")
        pipeline.analyze(path).write(tmp_path / folder / stem, **FAST_WRITE)
    return tmp_path / folder


def test_a_flip_only_in_a_later_input_fails_the_whole_comparison(tmp_path):
    old, new = night(tmp_path, "a", 8), night(tmp_path, "b", 4096)  # flip: memory -> compute
    result = invoke("compare", old, new, "-o", tmp_path / "changes", "--fail-on", "bound")
    assert result.exit_code == 1, result.output
    assert result.stdout.startswith("2 inputs, 3 scenarios compared: ")
    assert "changed: second.csv ->" in result.stdout
    table = pd.read_csv(tmp_path / "changes" / "changes.csv")
    assert table[["input", "name", "change"]].values.tolist()[0] == ["second.csv", "flip", "bound"]
    html = (tmp_path / "changes" / "changes.html").read_text(encoding="utf-8")
    assert "second.csv" in html and "flip" in html
    manifest = json.loads((tmp_path / "changes" / "manifest.json").read_text())
    assert manifest["inputs"]["first.csv"]["counts"]["bound"] == 0
    assert manifest["inputs"]["second.csv"]["counts"]["bound"] == 1
    same = invoke("compare", old, night(tmp_path, "c", 8), "-o", tmp_path / "same")
    assert same.exit_code == 0 and "no changes" in same.stdout


def test_an_input_only_one_run_has_is_added_or_removed_whole(tmp_path):
    old = night(tmp_path, "a", 8)
    new = night(tmp_path, "b", 8, extra="name,op,B,D,F,hardware\nx,matmul,1|2,64,64,h100\n")
    got = compare_runs(old, new)
    assert got.whole == {"third.csv": "added"} and got.counts["added"] == 2
    assert [name for name, _ in got.inputs] == ["first.csv", "second.csv", "third.csv"]
    assert got.failing(["added"]) and not got.failing(["bound"])
    back = compare_runs(new, old)
    assert back.whole == {"third.csv": "removed"} and back.counts["removed"] == 2
    assert back.summary().endswith("removed: third.csv")


def test_folders_of_different_kinds_or_no_runs_are_refused(tmp_path):
    old = night(tmp_path, "a", 8)
    mixed = invoke("compare", old, old / "first", "-o", tmp_path / "x")
    assert mixed.exit_code == 2 and "holds the runs of several inputs" in mixed.stderr
    (tmp_path / "empty").mkdir()
    with pytest.raises(InvalidResults, match="holds no run of an input"):
        compare_runs(tmp_path / "empty", old)
    assert inputs_of(old / "first") == {}  # one input's run: not a whole run
    assert list(inputs_of(old)) == ["first", "second"]


def test_the_output_may_not_be_inside_a_compared_run(tmp_path):
    old, new = night(tmp_path, "a", 8), night(tmp_path, "b", 8)
    with pytest.raises(OutputError, match="is inside the new run"):
        compare_runs(old, new).write(new / "changes")
    assert sorted(p.name for p in new.iterdir()) == ["first", "second"]


def test_inputs_are_named_by_their_files():
    got = input_names([("sc/Plan.csv", "plan-3f9a1c", None), ("sc/plan.csv", "plan", "added"),
                       ("x/q.csv", "q", None), ("y/q.csv", "q-1", "added"),
                       ("old/r.csv", "r", "removed"), (None, "legacy", None)])  # fmt: skip
    assert got == ["Plan.csv", "plan.csv", "x/q.csv", "y/q.csv", "r.csv", "legacy"]
    twins = input_names([("a/p.csv", "p", "added"), ("a/p.csv", "p-1", "removed")])
    assert twins == ["a/p.csv", "a/p.csv (baseline)"]  # an input only each run has, one path
    same = input_names([("a/p.csv", "p", "added"), ("a/p.csv", "p-1", "added")])
    assert same == ["a/p.csv (p/)", "a/p.csv (p-1/)"]
