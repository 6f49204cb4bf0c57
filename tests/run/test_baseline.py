"""A run compared with a baseline folder: the baseline's results read back (parquet, else
CSV), clear errors for a missing or unreadable baseline, and the comparison reaching every
output of the write (changes.csv, manifest, report, workbook)."""

from __future__ import annotations

import json
from pathlib import Path

import openpyxl
import pandas as pd
import pytest

from pipeline.errors import InvalidResults
from pipeline.run.baseline import (
    Baseline,
    BaselineError,
    baseline_folders,
    check_baseline_dir,
    compare_with,
    read_baseline,
)
from pipeline.run.earlier import newest_run
from tests.helpers import FAST_WRITE, analyze_file, write_scenarios

TWO_CHIP = "name,op,B,D,F,hardware,chips,shard\n"
ROWS = "flip,matmul,4096,{d},16384,v5e,2,D\nsame,matmul,8,8192,8192,v5e,,\n"


def _run(tmp_path, d: int, name: str, **write):
    path = write_scenarios(tmp_path, TWO_CHIP + ROWS.format(d=d), name=f"{name}.csv")
    analysis = analyze_file(path)
    return analysis, analysis.write(tmp_path / name, **{**FAST_WRITE, **write})


def test_read_baseline_prefers_parquet_then_csv(tmp_path):
    _run(tmp_path, 8754, "old")
    frame = read_baseline(tmp_path / "old")
    assert list(frame["name"]) == ["flip", "same"]
    (tmp_path / "old" / "results.parquet").unlink()
    from_csv = read_baseline(tmp_path / "old")
    assert list(from_csv["name"]) == ["flip", "same"]
    assert from_csv["t_lower"].tolist() == pytest.approx(frame["t_lower"].tolist(), rel=1e-15)


def test_read_baseline_undoes_the_csv_injection_quote(tmp_path):
    folder = tmp_path / "old"
    folder.mkdir()
    head = "name,bound,fits,critical_batch,t_lower\n"
    rows = ['"\'=SUM(A1)"', '"plain"', "\"''=x\"", "\"'''\"", '"\'abc"']
    text = head + "".join(f'{r},"memory","True",,1.0\n' for r in rows)
    (folder / "results.csv").write_text(text)
    assert read_baseline(folder)["name"].tolist() == ["=SUM(A1)", "plain", "'=x", "''", "'abc"]


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda p: None, "does not exist"),
        (lambda p: p.write_text("x"), "is not a folder"),
        (lambda p: p.mkdir(), "has no results.parquet, results.csv or a Dask"),
        (lambda p: (p.mkdir(), (p / "results.parquet").write_bytes(b"PAR1 broken")), "cannot"),
    ],
)
def test_a_baseline_that_cannot_be_used_is_a_clear_error(tmp_path, make, says):
    make(tmp_path / "old")
    with pytest.raises(BaselineError, match=says) as info:
        read_baseline(tmp_path / "old")
    assert isinstance(info.value, InvalidResults)
    assert "old" in str(info.value)


def test_check_baseline_dir_refuses_what_is_no_path():
    with pytest.raises(TypeError, match="baseline must be a folder path"):
        check_baseline_dir(3)


def test_compare_with_counts_for_the_manifest(tmp_path):
    _run(tmp_path, 8754, "old")
    new, _ = _run(tmp_path, 8756, "new")
    baseline = compare_with(tmp_path / "old", new.results)
    assert isinstance(baseline, Baseline)
    counts = baseline.counts()
    assert counts["baseline"] == str(tmp_path / "old")
    assert counts["compared"] == 2 and counts["counts"]["bound"] == 1
    assert counts["total"] == sum(counts["counts"].values()) and counts["skipped_columns"] == []


def test_write_with_a_baseline_reaches_every_output(tmp_path):
    _run(tmp_path, 8754, "old")
    new, written = _run(
        tmp_path, 8756, "new", workbook=True, report=True, baseline=tmp_path / "old"
    )
    folder = tmp_path / "new"
    changes = pd.read_csv(folder / "changes.csv")
    flip = changes[changes["change"] == "bound"].iloc[0]
    assert (flip["name"], flip["old"], flip["new"]) == ("flip", "network", "compute")
    assert "D 8754 → 8756" in flip["causes"]
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["changes"] == written.changes and manifest["changes"]["counts"]["bound"] == 1
    assert "changes.csv" in [e["path"] for e in manifest["files"]]
    html = (folder / "report.html").read_text()
    assert html.index('id="since"') < html.index("Series: how long")
    assert "D 8754 → 8756" in html
    book = openpyxl.load_workbook(folder / "workbook.xlsx", read_only=True)
    assert book.sheetnames[:3] == ["Answer", "Changes", "Summary"]


def test_write_without_a_baseline_has_no_changes(tmp_path):
    _, written = _run(tmp_path, 8754, "old")
    manifest = json.loads((tmp_path / "old" / "manifest.json").read_text())
    assert "changes" not in manifest and written.changes is None
    assert not (tmp_path / "old" / "changes.csv").exists()


def test_a_missing_baseline_writes_nothing(tmp_path):
    path = write_scenarios(tmp_path, TWO_CHIP + ROWS.format(d=8756))
    with pytest.raises(BaselineError, match="does not exist"):
        analyze_file(path).write(tmp_path / "new", baseline=tmp_path / "nowhere")
    assert not (tmp_path / "new").exists()


def _finished(folder, started: str, name: str = "q1-q5") -> None:
    """A finished run of input `name` under `folder`, started at `started` (its manifest)."""
    (folder / name).mkdir(parents=True)
    manifest = {"tool": "roofline-pipeline", "started": started, "files": []}
    (folder / name / "manifest.json").write_text(json.dumps(manifest))


def test_latest_run_is_the_newest_finished_sibling(tmp_path):
    nightly = tmp_path / "nightly"
    assert newest_run(nightly / "2026-11-22") is None  # no folder yet: the first night
    _finished(nightly / "2026-11-22", "2026-11-22T02:00:00+00:00")
    _finished(nightly / "2026-11-23", "2026-11-23T02:00:00+00:00")
    (nightly / "2026-11-24" / "q1-q5").mkdir(parents=True)  # crashed: no manifest
    _finished(nightly / "misnamed", "2026-11-21T02:00:00+00:00")  # by start time, not name
    (nightly / "notes.txt").write_text("not a run")
    today = nightly / "2026-11-25"
    assert newest_run(today)[0] == nightly / "2026-11-23"
    _finished(today, "2026-11-25T02:00:00+00:00")  # a run again the same night: not itself
    assert newest_run(today)[0] == nightly / "2026-11-23"
    (nightly / "link").symlink_to(today, target_is_directory=True)
    assert newest_run(nightly / "2026-11-26")[0] == today  # the link is not a run of its own
    assert newest_run(tmp_path / "alone") is None  # siblings holding no run: none


def test_latest_run_reads_a_run_written_straight_into_the_folder(tmp_path):
    (tmp_path / "a").mkdir()
    manifest = {"tool": "roofline-pipeline", "started": "2026-01-01T00:00:00+00:00", "files": []}
    (tmp_path / "a" / "manifest.json").write_text(json.dumps(manifest))
    assert newest_run(tmp_path / "b")[0] == tmp_path / "a"


def test_baseline_folders_one_per_input_none_where_missing(tmp_path):
    paths = [Path("a.csv"), Path("b.csv")]
    assert baseline_folders(None, paths, ["a", "b"]) == [None, None]
    (tmp_path / "a").mkdir()  # no manifest: paired by its folder's name
    assert baseline_folders(tmp_path, paths, ["a", "b"]) == [tmp_path / "a", None]
    (tmp_path / "x").mkdir()  # a run of b.csv, whatever its folder's name
    manifest = {"tool": "roofline-pipeline", "input_path": "old/b.csv", "files": []}
    (tmp_path / "x" / "manifest.json").write_text(json.dumps(manifest))
    assert baseline_folders(tmp_path, paths, ["a", "b"]) == [tmp_path / "a", tmp_path / "x"]
    with pytest.raises(BaselineError, match="does not exist"):
        baseline_folders(tmp_path / "nowhere", paths[:1], ["a"])
