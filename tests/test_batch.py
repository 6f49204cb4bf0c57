"""One run end to end: atomic output folders, sanitized names."""

from __future__ import annotations

import pytest

from pipeline import batch
from pipeline.batch import RunOptions, run_file, sanitize_name
from pipeline.errors import OutputError
from tests.helpers import write_scenarios

FAST = RunOptions(plots=False, workbook=False, report=False)
HEAD = "name,op,B,D,F,hardware"


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("q1-q5", "q1-q5"),
        ("../../etc/passwd", "etc-passwd"),
        ("A b/C", "a-b-c"),
        ("..", "run"),
        ("", "run"),
    ],
)
def test_sanitize_name(text, name):
    assert sanitize_name(text) == name


def test_failed_run_leaves_previous_outputs_untouched(tmp_path, catalog, monkeypatch):
    path = write_scenarios(tmp_path, f"{HEAD}\nok,matmul,1,2,3,v5e\n")
    out = tmp_path / "out"
    run_file(path, out, catalog, FAST)
    before = (out / "s" / "results.csv").read_bytes()

    def broken(frame, target):
        target.write_bytes(b"half a fi")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(batch, "write_csv", broken)
    write_scenarios(tmp_path, f"{HEAD}\nother,matmul,4,5,6,v5e\n")
    with pytest.raises(OutputError, match="No space left on device"):
        run_file(path, out, catalog, FAST)
    assert (out / "s" / "results.csv").read_bytes() == before
    assert sorted(p.name for p in out.iterdir()) == ["s"]  # no temporary folder left behind


def test_rerun_replaces_outputs(tmp_path, catalog):
    path = write_scenarios(tmp_path, f"{HEAD}\nbad,matmul,1,2,3,h10\nok,matmul,1,2,3,v5e\n")
    out = tmp_path / "out"
    run_file(path, out, catalog, FAST)
    assert (out / "s" / "errors.csv").exists()
    write_scenarios(tmp_path, f"{HEAD}\nok,matmul,1,2,3,v5e\n")
    summary = run_file(path, out, catalog, FAST)
    assert not (out / "s" / "errors.csv").exists()  # stale files do not survive a re-run
    assert summary.rejected == 0 and summary.scenarios == 1
