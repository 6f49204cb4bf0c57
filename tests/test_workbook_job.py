"""The workbook stage in its own process: the rows it writes from the file's first lines."""

from __future__ import annotations

import multiprocessing
import threading

import openpyxl
import pandas as pd
import pytest

from pipeline import workbook_job, workbook_process
from pipeline.batch import RunOptions, errors_frame, run_file
from pipeline.errors import OutputError
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


ODD_TEXT = (  # quoted commas and quotes; a form feed and U+2028 in notes; a comment line
    f'{HEAD}\n{rows(3)}q1,matmul,1,64,64,v5e,"a, ""b"""\nff,matmul,2,64,64,v5e,x\x0cy\n'
    f"ls,matmul,3,64,64,v5e,a\u2028b\n{rows(3, 3)}# late comment\n{rows(4, 6)}"
)
HEAD_CASES = {  # text, --max-rows
    "mixed": (MIXED, 1_000_000),
    "crlf": (MIXED.replace("\n", "\r\n"), 1_000_000),
    "bom": ("\ufeff" + MIXED, 1_000_000),
    "max-rows": (MIXED, 8),  # the sweep takes the file past it: later rows are rejected
    "odd-text": (ODD_TEXT, 1_000_000),
}


@pytest.mark.parametrize("case", HEAD_CASES)
@pytest.mark.parametrize("lines", [2, 4, 7, 8, 9, 12, 40])
def test_a_head_gives_the_rows_at_the_top_of_the_whole_file(tmp_path, catalog, lines, case):
    text, max_rows = HEAD_CASES[case]
    path = write_scenarios(tmp_path, text)
    whole = load_scenarios(path, catalog, max_rows=max_rows)
    loaded, more = load_head(path, catalog, lines, max_rows=max_rows)
    assert more == (lines + 1 < text.count("\n"))
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
    """The parent's check found other rows at the top of the run: the rows sent are written."""
    path = write_scenarios(tmp_path, f"{HEAD}\n{rows(30)}")
    loaded, results, meta = whole_run(path, catalog, 30)
    worker, inbox, outbox = child_in_a_thread(job_for(path, tmp_path, catalog))
    kind, digest = inbox.recv()
    mine = (results.iloc[:10], range(2, 12), loaded.inputs.iloc[:5])
    assert kind == "head" and digest == workbook_job._rows_digest(*mine)
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
    assert sorted(c.name for c in tmp_path.iterdir()) == ["s.csv", "workbook.xlsx"]  # no temp


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


def both_ways(tmp_path, catalog, monkeypatch, text: str, options, switch=None):
    """The workbook of `text` written here and by its own process: the sheets' rows of each
    (the Started time left out), and the process. `switch` (module, name) is the threshold
    that decides: PROCESS_MIN_BYTES unless given."""
    module, name = switch or (workbook_process, "PROCESS_MIN_BYTES")
    path = write_scenarios(tmp_path, text)
    started = []

    class Spy(workbook_job.Process):
        def __init__(self, job):
            super().__init__(job)
            started.append(self)

    monkeypatch.setattr(workbook_job, "Process", Spy)
    sheets = {}
    for way, threshold in (("one", 1 << 40), ("two", 0)):
        monkeypatch.setattr(module, name, threshold)
        run_file(path, tmp_path / way, catalog, options)
        book = openpyxl.load_workbook(tmp_path / way / "s" / "workbook.xlsx")
        sheets[way] = {
            name: [row for row in book[name].iter_rows(values_only=True) if row[0] != "Started"]
            for name in book.sheetnames
        }
    (process,) = started
    return sheets["one"], sheets["two"], process


@pytest.mark.parametrize(
    ("notes", "lines", "sent"), [("", [2, 3, 4], False), ('"two\nlines"', [2, 4, 5], True)]
)
def test_the_process_writes_what_one_process_writes(
    tmp_path, catalog, monkeypatch, notes, lines, sent
):
    """Its own first rows, or the rows sent (a quoted newline in the first lines): the same
    book as when it is written here."""
    text = f"{HEAD}\nfirst,matmul,1,64,64,v5e,{notes}\n{rows(1100)}bad,matmul,1,2,3,h10,\n"
    options = RunOptions(plots=False, report=False, workbook_rows=25, workbook_input_rows=7)
    one, two, process = both_ways(tmp_path, catalog, monkeypatch, text, options)
    assert process.rows_sent == sent
    assert one == two
    assert len(two["Results"]) == 26 and len(two["Inputs"]) == 8
    assert [r[0] for r in two["Inputs"][1:4]] == lines  # line numbers


def test_rows_that_differ_only_in_a_value_are_sent(tmp_path, catalog, monkeypatch):
    """A stray quote makes the line at the cut open a quoted note that goes on past it: the
    process's row has the right line number but half the note. The digest covers values."""
    bad = "".join(f"bad{i},matmul,1,2,3,h10,\n" for i in range(1001))
    text = f'{HEAD}\n{bad}{rows(29)}q"x,matmul,1,64,64,v5e,"note\nmore"\n{rows(200, 9000)}'
    options = RunOptions(plots=False, report=False, workbook_rows=30, workbook_input_rows=5)
    one, two, process = both_ways(tmp_path, catalog, monkeypatch, text, options)
    assert (
        process.rows_sent
    )  # the process read 30 * 1.05 + 1000 = 1031 lines: the cut is at the note
    assert one == two
    assert two["Results"][-1][0] == 'q"x' and "note\nmore" in two["Results"][-1]


def test_a_process_that_dies_is_an_output_error(tmp_path, catalog):
    path = write_scenarios(tmp_path, f"{HEAD}\n{rows(30)}")
    loaded, results, meta = whole_run(path, catalog, 30)
    process = workbook_job.Process(job_for(path, tmp_path, catalog))
    process.process.kill()
    process.process.join()
    with pytest.raises(OutputError, match="ended without writing workbook.xlsx"):
        process.submit(meta, results, loaded.inputs, errors_frame([]), [], loaded.frame["line"])
    process.stop()


def _raise_value_error():
    raise ValueError("cannot rebuild this")


class Unpicklable:
    def __reduce__(self):
        return (_raise_value_error, ())


def test_a_message_that_cannot_be_read_is_reported_not_waited_for(tmp_path, catalog):
    path = write_scenarios(tmp_path, f"{HEAD}\n{rows(30)}")
    worker, inbox, outbox = child_in_a_thread(job_for(path, tmp_path, catalog))
    assert inbox.recv()[0] == "head"
    outbox.send(Unpicklable())
    kind, text = inbox.recv()
    worker.join(timeout=60)
    assert kind == "bug" and "cannot rebuild this" in text and not worker.is_alive()


def test_a_run_error_in_the_process_is_the_runs_error(tmp_path, catalog):
    path = write_scenarios(tmp_path, f"{HEAD}\n{rows(30)}")
    job = workbook_job.Job(
        path, tmp_path / "gone" / "workbook.xlsx", tmp_path, catalog, 1_000_000, 10, 5
    )
    worker, inbox, outbox = child_in_a_thread(job)
    assert inbox.recv()[0] == "head"
    kind, text = inbox.recv()
    worker.join(timeout=60)
    assert kind == "error" and text.startswith(f"writing {tmp_path / 'gone'}")


def test_a_small_file_that_sweeps_to_many_rows_gets_a_process(tmp_path, catalog, monkeypatch):
    """The size of the file decides before the load; the number of scenarios after it. Such a
    process is sent its rows rather than expanding the sweeps again."""
    text = f"{HEAD}\nsweep,matmul,1..40,64,64,v5e,\n{rows(3)}"
    options = RunOptions(plots=False, report=False, workbook_rows=25)
    switch = (workbook_job, "PROCESS_MIN_ROWS")
    one, two, process = both_ways(tmp_path, catalog, monkeypatch, text, options, switch)
    assert not process.job.own_head and process.rows_sent
    assert one == two
    assert len(two["Results"]) == 26
