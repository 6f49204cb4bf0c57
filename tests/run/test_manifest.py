"""manifest.json: each file's hash, size and time; what the run found; read back only when
it is one of ours."""

from __future__ import annotations

import hashlib
import json
import os

import pytest

from pipeline.run.manifest import TOOL, file_entries, file_sha256, read_manifest, write_manifest


@pytest.mark.parametrize("size", [0, 1, (1 << 20) + 3])  # empty, tiny, past one read block
def test_file_sha256_is_the_sha256_of_the_bytes(tmp_path, size):
    data = os.urandom(size)
    path = tmp_path / "f.bin"
    path.write_bytes(data)
    assert file_sha256(path) == hashlib.sha256(data).hexdigest()


def test_file_entries_give_relative_posix_path_size_hash_and_mtime(tmp_path):
    (tmp_path / "plots").mkdir()
    png = tmp_path / "plots" / "a.png"
    png.write_bytes(b"abc")
    [entry] = file_entries(tmp_path, [png])
    assert entry == {
        "path": "plots/a.png",
        "bytes": 3,
        "sha256": hashlib.sha256(b"abc").hexdigest(),
        "mtime_ns": png.stat().st_mtime_ns,
    }


def test_a_written_manifest_reads_back(tmp_path, book):
    path = write_manifest(tmp_path, book, "q1-q5", ["a", "a", "b"], [], {"total": 1.23456789})
    assert path == tmp_path / "manifest.json"
    data = read_manifest(tmp_path)
    assert data == json.loads(path.read_text(encoding="utf-8"))
    assert (data["tool"], data["run_name"], data["notices"]) == (TOOL, "q1-q5", ["a", "b"])
    assert data["timings_seconds"] == {"total": 1.234568}
    rows = data["rows"]
    assert rows["scenarios"] == book.summary.scenarios
    assert rows["compute_bound"] + rows["memory_bound"] + rows["network_bound"] == rows["scenarios"]


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        "[]",
        '{"files": {}}',
        '{"tool": "someone-else", "files": []}',
    ],
)
def test_a_manifest_not_ours_is_none(tmp_path, text):
    (tmp_path / "manifest.json").write_text(text, encoding="utf-8")
    assert read_manifest(tmp_path) is None


def test_missing_or_symlinked_manifest_is_none(tmp_path):
    assert read_manifest(tmp_path) is None
    real = tmp_path / "elsewhere.json"
    real.write_text(json.dumps({"tool": TOOL, "files": []}), encoding="utf-8")
    (tmp_path / "manifest.json").symlink_to(real)
    assert read_manifest(tmp_path) is None


def test_a_manifest_from_before_the_tool_field_is_ours(tmp_path):
    old = {"tool_version": "0.1.0", "input_sha256": "ab", "files": []}
    (tmp_path / "manifest.json").write_text(json.dumps(old), encoding="utf-8")
    assert read_manifest(tmp_path) == old


def test_a_run_with_prices_records_the_price_file_and_its_hash(tmp_path):
    import pandas as pd

    import pipeline
    from tests.helpers import FAST_WRITE

    prices = tmp_path / "prices.csv"
    prices.write_text("hardware,usd_per_chip_hour,source,date\nh100,2,q,2026-11-01\n",
                      encoding="utf-8")  # fmt: skip
    rows = [{"name": "m", "op": "matmul", "B": 8, "D": 8, "F": 8, "hardware": "h100"}]
    pipeline.analyze(rows, prices=prices).write(tmp_path / "out", **FAST_WRITE)
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["prices"] == {
        "path": str(prices.resolve()),
        "sha256": hashlib.sha256(prices.read_bytes()).hexdigest(),
    }
    pipeline.analyze(rows).write(tmp_path / "bare", **FAST_WRITE)
    bare = json.loads((tmp_path / "bare" / "manifest.json").read_text(encoding="utf-8"))
    assert "prices" not in bare
    frame = pd.read_csv(prices)
    pipeline.analyze(rows, prices=frame).write(tmp_path / "frame", **FAST_WRITE)
    given = json.loads((tmp_path / "frame" / "manifest.json").read_text(encoding="utf-8"))
    assert given["prices"]["path"] == "<prices>"
