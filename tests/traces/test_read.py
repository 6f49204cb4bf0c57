"""Reading a trace a piece at a time: only the fields used, whatever the chunk boundaries."""

import gzip
import json
import tracemalloc

import pytest

from pipeline.errors import ScenarioFileError
from pipeline.traces import read
from tests.helpers import trace_gemm, write_trace


def test_events_read_across_chunk_boundaries_keep_only_what_is_used(tmp_path, monkeypatch):
    monkeypatch.setattr(read, "CHUNK", 7)  # every value cut somewhere
    events = trace_gemm("aten::mm", 12345.5, [[64, 128], [128, 256]], 987654321, 4.25)
    path = write_trace(tmp_path / "t.json", events, metadata={"env": {"TOKEN": "hf_secret"}})
    got = read.read_events(path, {"aten::mm"})
    assert got.ops["dims"] == ["[[64, 128], [128, 256]]"] and list(got.ops["ts"]) == [12345.5]
    assert list(got.launches["link"]) == [987654321] and list(got.gpu["dur"]) == [4.25]
    assert got.devices == [(0, "NVIDIA H100 80GB HBM3")] and got.record_shapes == 1
    assert "hf_secret" not in repr(got)


@pytest.mark.parametrize("text", ["", "[]", '{"traceEvents": [{"ph": "X"}', "\x00\x01"])
def test_what_is_not_a_trace_is_said(tmp_path, text):
    path = tmp_path / "t.json"
    path.write_text(text)
    with pytest.raises(ScenarioFileError, match="not a profiler trace"):
        read.read_events(path, {"aten::mm"})


def test_a_broken_gzip_is_said(tmp_path):
    path = tmp_path / "t.json.gz"
    path.write_bytes(gzip.compress(b'{"traceEvents": []}')[:-8] + b"\x00" * 3)
    with pytest.raises(ScenarioFileError, match="not a profiler trace"):
        read.read_events(path, {"aten::mm"})


def test_a_large_trace_is_read_in_a_budget(tmp_path, monkeypatch):
    monkeypatch.setattr(read, "CHUNK", 1 << 16)
    # 5,000 calls of 3 events with the Python stack events a trace carries between them
    other = {
        "ph": "X",
        "cat": "cpu_op",
        "name": "aten::add",
        "pid": 7,
        "tid": 1,
        "ts": 0,
        "dur": 1,
        "args": {"Input Dims": [[64, 256], [64, 256]], "Input type": ["float"] * 2},
    }
    noise = {"ph": "X", "cat": "python_function", "name": "x" * 200, "pid": 7, "tid": 1,
             "ts": 0, "dur": 1, "args": {"Python id": 1, "Python parent id": 0}}  # fmt: skip
    events = [e for i in range(5_000) for e in trace_gemm("aten::mm", i * 20, [[64, 128], [128, 256]],
                                                     i, 1.0)]  # fmt: skip
    events += [noise, other] * 8_000
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"traceEvents": events}))
    size = path.stat().st_size
    del events
    tracemalloc.start()
    got = read.read_events(path, {"aten::mm"})
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert len(got.ops["ts"]) == 5_000 and size > 5e6
    assert peak < size / 4  # the events' text is never held whole, nor what is not used


def test_broken_json_is_said_without_reading_the_rest(tmp_path, monkeypatch):
    monkeypatch.setattr(read, "CHUNK", 16)
    monkeypatch.setattr(read, "LARGEST_VALUE", 64)
    path = tmp_path / "t.json"
    path.write_text('{"traceEvents": [{"ph": "X", oops}, ' + '{"ph": "X"}, ' * 1000 + "]}")
    with pytest.raises(ScenarioFileError, match="no JSON value ends in 64 characters"):
        read.read_events(path, {"aten::mm"})
