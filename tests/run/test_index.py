"""OUTPUT_DIR/index.html of a batch: each run's line (its counts, a link to its report), a
failed input's line, and the file written atomically, never over one that is not ours."""

from __future__ import annotations

import pytest

from pipeline.errors import OutputError
from pipeline.run.index import failed_entry, index_entry, write_index
from tests.helpers import FAST_WRITE, INDEX_RUNS, analyze_rows

ROWS = [
    {"name": "mm", "op": "matmul", "B": "1|512", "D": 4096, "F": 4096, "hardware": "v5e"},
    {"name": "typo", "op": "matmul", "B": 1, "D": 2, "F": 3, "hardware": "h10"},
]


def test_a_runs_line_has_its_counts_and_links_its_report(tmp_path):
    analysis = analyze_rows(ROWS, name="batch")
    written = analysis.write(tmp_path / "batch", plots=False, workbook=False)
    assert index_entry(analysis, written) == {
        "run_name": "batch",
        "input_path": "batch",
        "report_href": "batch/report.html",
        "scenarios": 2,
        "compute": 1,
        "memory": 1,
        "network": 0,
        "not_fitting": 0,
        "rejected": 1,
        "status": "rows rejected",
    }
    tables = analyze_rows(ROWS[:1]).write(tmp_path / "tables", **FAST_WRITE)
    entry = index_entry(analyze_rows(ROWS[:1]), tables)
    assert entry["report_href"] == "tables/" and entry["status"] == "ok"  # no report: the folder


def test_a_failed_input_has_a_line_of_zeros_and_no_link():
    entry = failed_entry("bad.csv", "bad", "the file is empty")
    assert entry["report_href"] == "" and entry["status"] == "failed: the file is empty"
    assert entry["scenarios"] == entry["rejected"] == 0 and set(entry) == set(INDEX_RUNS[0])


def test_the_index_is_written_and_rewritten_but_never_over_a_file_not_ours(tmp_path):
    path = write_index(tmp_path / "out", INDEX_RUNS)
    assert path == tmp_path / "out" / "index.html"
    first = path.read_text(encoding="utf-8")
    assert "q1-q5/report.html" in first
    write_index(tmp_path / "out", INDEX_RUNS[:1])  # ours: replaced
    assert path.read_text(encoding="utf-8") != first
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["index.html"]  # no temp

    mine = tmp_path / "mine" / "index.html"
    mine.parent.mkdir()
    mine.write_text("<html>my own page</html>")
    with pytest.raises(OutputError, match="was not written by this tool; it is left as it is"):
        write_index(mine.parent, INDEX_RUNS)
    assert mine.read_text() == "<html>my own page</html>"


def test_an_index_that_is_an_input_is_never_replaced(tmp_path):
    path = write_index(tmp_path, INDEX_RUNS)
    with pytest.raises(OutputError, match="is an input of the run"):
        write_index(tmp_path, INDEX_RUNS, protect=[path])
    link = tmp_path / "sub" / "index.html"
    link.parent.mkdir()
    link.symlink_to(path)  # a link at the index's place is never ours
    with pytest.raises(OutputError, match="was not written by this tool"):
        write_index(link.parent, INDEX_RUNS)


def test_the_index_links_what_earlier_commands_left_in_the_folder(tmp_path):
    """make run writes measured/ and calibration.html with earlier commands: the index of the
    last command links them below its own runs, and nothing that is not ours."""
    out = tmp_path / "out"
    analyze_rows(ROWS[:1], name="measured").write(out / "measured", **FAST_WRITE)
    (out / "calibration.toml").write_text("# a calibration\n")
    (out / "calibration.html").write_text(
        '<!DOCTYPE html><meta name="generator" content="roofline-pipeline"><title>x</title>'
    )
    (out / "mine.html").write_text("<html>my own page</html>")  # not ours: not linked
    (out / "notes").mkdir()  # no manifest: not a run
    (out / "notes" / "manifest.json").write_text('{"tool": "something else"}')
    path = write_index(out, INDEX_RUNS)
    html = path.read_text(encoding="utf-8")
    also = html.split("Also in this folder", 1)[1]
    assert 'href="measured/"' in also and "run of measured" in also
    assert 'href="calibration.html"' in also and "calibration page (calibration.toml)" in also
    assert "mine.html" not in html and "notes" not in also
    # the runs of this command are not listed twice
    write_index(out, [{**INDEX_RUNS[0], "run_name": "measured"}])
    assert "Also in this folder" in path.read_text(encoding="utf-8")
    assert "measured/" not in path.read_text(encoding="utf-8").split("Also in this folder")[1]
