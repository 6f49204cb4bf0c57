"""The workbook stage in its own process: the rows it writes from the file's first lines."""

from __future__ import annotations

import multiprocessing
import threading

import openpyxl
import pandas as pd
import pytest

from pipeline import workbook_job, workbook_process
from pipeline.batch import RunOptions, errors_frame, run_file
from pipeline.excel import summary_counts
from pipeline.hardware import catalog_records
from pipeline.meta import RunMeta
from pipeline.roofline import compute_roofline
from pipeline.scenarios import load_head, load_scenarios
from tests.helpers import write_scenarios
from tests.test_excel import sheet_text

HEAD = "name,op,B,D,F,hardware,notes"


def rows(n: int, start: int = 0) -> str:
    return "".join(f"r{i},matmul,{i + 1},64,64,v5e,\n" for i in range(start, start + n))


# a rejected row, a sweep, a duplicate of an earlier name, another duplicate past the cut
MIXED = (
    f"{HEAD}\n# a comment line\n{rows(5)}bad,matmul,1,2,3,h10,\nsweep,matmul,1..4,64,64,v5e,\n"
    f"r2,matmul,1,2,3,v5e,\n{rows(5, 5)}r7,matmul,1,2,3,v5e,\n"
)


def plain(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.astype({c: object for c in frame.columns if frame[c].dtype == "category"})


@pytest.mark.parametrize("lines", [2, 4, 7, 8, 9, 12, 40])
def test_a_head_gives_the_rows_at_the_top_of_the_whole_file(tmp_path, catalog, lines):
    path = write_scenarios(tmp_path, MIXED)
    whole = load_scenarios(path, catalog)
    loaded, more = load_head(path, catalog, lines)
    assert more == (lines < len(MIXED.splitlines()) - 1)
    n = len(loaded.frame)
    if more:  # rows whose sweep or duplicate check needs no later line
        assert n >= 1
    else:
        assert n == len(whole.frame)
    pd.testing.assert_frame_equal(  # the same values (categories may list more names)
        plain(compute_roofline(loaded.frame)), plain(compute_roofline(whole.frame).iloc[:n])
    )
    k = loaded.source_rows
    pd.testing.assert_frame_equal(loaded.inputs, whole.inputs.iloc[:k])
    assert [str(p) for p in loaded.problems] == [
        str(p) for p in whole.problems if p.line <= loaded.inputs["line"].max()
    ]


def test_no_head_when_a_quoted_value_may_span_the_cut(tmp_path, catalog):
    text = f'{HEAD}\n{rows(3)}q,matmul,1,64,64,v5e,"two\nlines"\n{rows(3, 3)}'
    path = write_scenarios(tmp_path, text)
    assert load_head(path, catalog, 4) is None  # the cut falls inside the quoted note
    assert load_head(path, catalog, 100)[1] is False  # the whole file: nothing is cut


def job_for(path, tmp_path, catalog, rows_cap=10, input_rows_cap=5) -> workbook_job.Job:
    return workbook_job.Job(
        path, tmp_path / "workbook.xlsx", tmp_path, catalog, 1_000_000, rows_cap, input_rows_cap
    )


def test_no_head_rows_when_the_first_lines_are_mostly_rejected(tmp_path, catalog, monkeypatch):
    monkeypatch.setattr(workbook_job, "HEAD_EXTRA_LINES", 5)
    bad = "".join(f"b{i},matmul,1,2,3,h10,\n" for i in range(20))
    path = write_scenarios(tmp_path, f"{HEAD}\n{bad}{rows(30)}")
    assert workbook_job.head_rows(job_for(path, tmp_path, catalog)) is None
    monkeypatch.setattr(workbook_job, "HEAD_EXTRA_LINES", 40)
    results, inputs, lines = workbook_job.head_rows(job_for(path, tmp_path, catalog))
    assert results["name"].tolist() == [f"r{i}" for i in range(10)]
    assert lines.tolist() == list(range(22, 32))
    assert inputs["name"].tolist() == [f"b{i}" for i in range(5)]


def child_in_a_thread(job):
    """workbook_job.serve on a thread of this process, given `job`; the parent's pipe ends."""
    inbox, child_outbox = multiprocessing.Pipe(duplex=False)
    child_inbox, outbox = multiprocessing.Pipe(duplex=False)
    worker = threading.Thread(
        target=workbook_job.serve, args=(child_inbox, child_outbox), daemon=True
    )
    outbox.send(job)
    worker.start()
    return worker, inbox, outbox


def whole_run(path, catalog, rows: int):
    loaded = load_scenarios(path, catalog)
    meta = RunMeta(
        run_name="s", input_path=str(path), input_sha256="0", started="2026-11-21T00:00:00+00:00",
        tool_version="t", catalog_version="c", source_rows=rows, scenarios=rows, rejected_rows=0,
        notices=(),
    )  # fmt: skip
    return loaded, compute_roofline(loaded.frame), meta


def test_the_process_starts_again_when_its_rows_are_not_the_runs(tmp_path, catalog):
    """The parent's check failed (it cannot by construction): the rows sent are written."""
    path = write_scenarios(tmp_path, f"{HEAD}\n{rows(30)}")
    loaded, results, meta = whole_run(path, catalog, 30)
    worker, inbox, outbox = child_in_a_thread(job_for(path, tmp_path, catalog))
    kind, digest = inbox.recv()
    assert kind == "head" and digest == workbook_job._rows_digest(range(2, 12), range(2, 7))
    outbox.send((results.iloc[10:20], loaded.inputs.iloc[10:15]))  # "these are the top rows"
    hardware = catalog_records(catalog, ["tpu-v5e"])
    outbox.send((meta, summary_counts(results), 30, errors_frame([]), 0, hardware))
    outbox.send(([], []))
    status, notices, seconds = inbox.recv()
    worker.join()
    assert status == "ok" and seconds > 0
    book = openpyxl.load_workbook(tmp_path / "workbook.xlsx")
    assert [r[0] for r in book["Results"].iter_rows(min_row=2, values_only=True)] == [
        f"r{i}" for i in range(10, 20)
    ]
    assert [c.name for c in tmp_path.iterdir()] == ["s.csv", "workbook.xlsx"]  # no temp left


def test_the_parent_never_waits_while_rows_are_written(tmp_path, catalog, monkeypatch):
    """Messages bigger than a pipe's buffer are read while the rows are still being written."""
    path = write_scenarios(tmp_path, f"{HEAD}\n{rows(30)}")
    loaded, results, meta = whole_run(path, catalog, 30)
    sent = threading.Event()
    make_writer = workbook_job._writer

    def slow_writer(job):
        writer = make_writer(job)
        write_rows = writer.write_rows

        def wait_then_write(*args):
            assert sent.wait(timeout=60), "the parent's messages were not read meanwhile"
            write_rows(*args)

        writer.write_rows = wait_then_write
        return writer

    monkeypatch.setattr(workbook_job, "_writer", slow_writer)
    worker, inbox, outbox = child_in_a_thread(job_for(path, tmp_path, catalog))
    assert inbox.recv()[0] == "head"
    n = 200_000  # problems: many megabytes
    big = pd.DataFrame({"line": range(n), "name": "x", "column": "B", "reason": "bad " * 20})
    hardware = catalog_records(catalog, ["tpu-v5e"])
    messages = [None, (meta, summary_counts(results), 30, big, n, hardware), ([], [])]
    sender = threading.Thread(target=lambda: [outbox.send(m) for m in messages], daemon=True)
    sender.start()
    sender.join(timeout=60)
    assert not sender.is_alive(), "the parent waited for the rows to be written"
    sent.set()
    status, notices, _ = inbox.recv()
    worker.join()
    assert status == "ok", notices
    summary = sheet_text(openpyxl.load_workbook(tmp_path / "workbook.xlsx")["Summary"])
    assert (
        "Errors sheet holds the first 10 of 200,000 problems; errors.csv has them all." in summary
    )


@pytest.mark.parametrize(
    ("notes", "lines", "sent"), [("", [2, 3, 4], False), ('"two\nlines"', [2, 4, 5], True)]
)
def test_the_process_writes_what_one_process_writes(
    tmp_path, catalog, monkeypatch, notes, lines, sent
):
    """Its own first rows, or the rows sent (a quoted newline in the first lines): the same
    book as when it is written here."""
    text = f"{HEAD}\nfirst,matmul,1,64,64,v5e,{notes}\n{rows(1100)}bad,matmul,1,2,3,h10,\n"
    path = write_scenarios(tmp_path, text)  # longer than the lines the process reads
    options = RunOptions(plots=False, report=False, workbook_rows=25, workbook_input_rows=7)
    started = []

    class Spy(workbook_job.Process):
        def __init__(self, job):
            super().__init__(job)
            started.append(self)

    monkeypatch.setattr(workbook_job, "Process", Spy)
    sheets = {}
    for in_process, threshold in (("one", 1 << 40), ("two", 0)):
        monkeypatch.setattr(workbook_process, "PROCESS_MIN_BYTES", threshold)
        run_file(path, tmp_path / in_process, catalog, options)
        book = openpyxl.load_workbook(tmp_path / in_process / "s" / "workbook.xlsx")
        sheets[in_process] = {
            name: [row for row in book[name].iter_rows(values_only=True) if row[0] != "Started"]
            for name in book.sheetnames
        }
    assert [p.rows_sent for p in started] == [sent]
    assert sheets["one"] == sheets["two"]
    assert len(sheets["two"]["Results"]) == 26 and len(sheets["two"]["Inputs"]) == 8
    assert [r[0] for r in sheets["two"]["Inputs"][1:4]] == lines  # line numbers
