"""What the tool promises (docs/promises.md): one test per finding of the
hostile-user probe (issue 10, F1-F22), each named for it, through the command line."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import tracemalloc

import openpyxl
import pytest

import pipeline
from pipeline.errors import ScenarioFileError
from pipeline.scenarios import load_scenarios
from tests.helpers import (
    BOOK_SCENARIOS,
    FAST,
    FAST_WRITE,
    HEAD,
    ROOT,
    alive,
    dead_pid,
    descendants,
    invoke,
    pipeline_cmd,
    tree,
    write_scenarios,
)

LINUX = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc and signals")


# ---------------------------------------------------------------- data loss, wrong answers


def test_f01_output_swap_never_deletes_user_files(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "data.csv").write_bytes(BOOK_SCENARIOS.read_bytes())
    (data / "notes.txt").write_text("x\n")
    before = tree(data)
    result = invoke("run", data / "data.csv", "-o", tmp_path, *FAST)
    assert result.exit_code == 1
    assert "holds the input" in result.stderr and "give another -o" in result.stderr
    assert tree(data) == before  # the input and the user's file are untouched

    out = tmp_path / "out"
    out.mkdir()
    (out / "data").write_text("a plain file\n")
    result = invoke("run", data / "data.csv", "-o", out, *FAST)
    assert result.exit_code == 1 and "is a file, not an output folder" in result.stderr
    assert (out / "data").read_text() == "a plain file\n"

    (out / "data").unlink()
    (out / "data").mkdir()
    (out / "data" / "mine.txt").write_text("mine\n")
    result = invoke("run", data / "data.csv", "-o", out, *FAST)
    assert result.exit_code == 1 and "was not written by this tool" in result.stderr
    assert tree(out / "data") == {"mine.txt": b"mine\n"}
    result = invoke("run", data / "data.csv", "-o", out, "--force", *FAST)
    assert result.exit_code == 1, "--force never replaces a folder without our manifest"

    (out / "data" / "mine.txt").unlink()
    assert invoke("run", data / "data.csv", "-o", out, *FAST).exit_code == 0  # empty: fine
    (out / "data" / "extra.txt").write_text("added later\n")
    result = invoke("run", data / "data.csv", "-o", out, *FAST)
    assert (
        result.exit_code == 1
        and "holds files this tool did not write, or changed since (extra.txt)" in (result.stderr)
    )
    assert "--force" in result.stderr and (out / "data" / "extra.txt").exists()
    assert invoke("run", data / "data.csv", "-o", out, "--force", *FAST).exit_code == 0
    assert not (out / "data" / "extra.txt").exists()
    assert invoke("run", data / "data.csv", "-o", out, *FAST).exit_code == 0  # ours, clean


def test_f02_unterminated_quote_is_an_error_where_it_opens(tmp_path):
    text = (
        f'{HEAD},notes\na,matmul,1,2,3,v5e,"oops\nb,matmul,1,2,3,v5e,fine\nc,matmul,1,2,3,v5e,x\n'
    )
    path = write_scenarios(tmp_path, text)
    result = invoke("validate", path)
    assert result.exit_code == 1
    assert f"Error: {path}:2: a quoted value opens on this line and runs on over line 3, which " \
        "looks like a row of its own" in result.stderr  # fmt: skip
    # a later quote closing it (`say "hi"`) no longer hides the rows in between
    rows = "".join(f"r{i},matmul,1,2,3,v5e,fine\n" for i in range(30))
    closes = f'{HEAD},notes\na,matmul,1,2,3,v5e,"oops\n{rows}z,matmul,1,2,3,v5e,say "hi"\n'
    result = invoke("validate", write_scenarios(tmp_path, closes))
    assert result.exit_code == 1 and ":2: a quoted value opens on this line" in result.stderr
    at_end = f'{HEAD},notes\na,matmul,1,2,3,v5e,"oops\nand some words\n'
    result = invoke("validate", write_scenarios(tmp_path, at_end))
    assert ":2: a quoted value opens on this line and is still open at the end" in result.stderr
    long = f'{HEAD},notes\na,matmul,1,2,3,v5e,"oops\n' + "a line of text\n" * 150 + 'end"\n'
    result = invoke("validate", write_scenarios(tmp_path, long))
    assert ":2: a quoted value opens on this line and runs over 100 lines" in result.stderr
    # a quote in a comment opens nothing
    commented = f'{HEAD},notes\n# todo,"check\nr1,matmul,1,2,3,v5e,x\nr2,matmul,1,2,3,v5e,"12 in"\n'
    result = invoke("validate", write_scenarios(tmp_path, commented))
    assert result.exit_code == 0 and "2 valid scenarios" in result.stdout
    fine = f'{HEAD},notes\na,matmul,1,2,3,v5e,"two\nlines"\nb,matmul,1,2,3,v5e,x\n'
    result = invoke("validate", write_scenarios(tmp_path, fine))
    assert result.exit_code == 0 and "2 valid scenarios" in result.stdout


@pytest.mark.parametrize(
    "cell", ["1..1000000000", "4611686018427387904..9223372036854775808", "1..20000000"]
)
def test_f03_huge_sweeps_are_refused_before_they_are_built(tmp_path, catalog, cell):
    path = write_scenarios(tmp_path, f"{HEAD}\na,matmul,{cell},2,3,v5e\n")
    tracemalloc.start()
    try:
        loaded = load_scenarios(path, catalog)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [p.column for p in loaded.problems] == ["B"] and len(loaded.frame) == 0
    assert "past its limit" in loaded.problems[0].reason or "2^53" in loaded.problems[0].reason
    assert peak < 20e6  # bytes: nothing the size of the sweep was built


@pytest.mark.parametrize("cell", ["1|1" + "0" * 400, "1..1" + "0" * 400 + "*2"])
def test_f04_giant_numbers_give_a_message_not_a_traceback(tmp_path, cell):
    result = invoke("validate", write_scenarios(tmp_path, f"{HEAD}\na,matmul,{cell},2,3,v5e\n"))
    assert result.exit_code == 1 and "is above 2^53" in result.stderr


@pytest.mark.parametrize(
    ("column", "cell"),
    [
        ("B", "1e300"),
        ("B", "9223372036854775808"),
        ("B", "9007199254740993"),
        ("B", "1.." + "1" * 301 + "*2"),
        ("B", "1|9007199254740993"),
        ("chips", str(2**63)),
    ],
)
def test_f05_values_above_2_53_are_rejected_not_wrapped(tmp_path, column, cell):
    text = f"{HEAD},chips,shard\na,matmul,{cell if column == 'B' else 4},2,3,v5e,"
    text += f"{cell if column == 'chips' else 1},{'B' if column == 'chips' else ''}\n"
    result = invoke("run", write_scenarios(tmp_path, text), "-o", tmp_path / "out", *FAST)
    assert result.exit_code == 1
    assert f"column {column}:" in result.stderr and "2^53 = 9,007,199,254,740,992" in result.stderr
    assert "-9223372036854775808" not in (tmp_path / "out" / "s" / "results.csv").read_text()


def test_f05_two_to_the_53_itself_is_exact(tmp_path):
    path = write_scenarios(tmp_path, f"{HEAD}\na,matmul,9007199254740992,1,1,v5e\n")
    assert invoke("run", path, "-o", tmp_path / "out", *FAST).exit_code == 0
    row = (tmp_path / "out" / "s" / "results.csv").read_text().splitlines()[1]
    assert ",9007199254740992," in row


def test_f19_text_over_excels_cell_limit_is_said(tmp_path):
    note = "n" * 40_000
    path = write_scenarios(tmp_path, f"{HEAD},notes\na,matmul,1,2,3,v5e,{note}\n")
    result = invoke("run", path, "-o", tmp_path / "out", "--no-plots", "--no-report")
    assert result.exit_code == 0
    message = "1 cell(s) of column notes on the Results sheet held more than Excel's 32,767"
    assert message in result.stdout
    book = openpyxl.load_workbook(tmp_path / "out" / "s" / "workbook.xlsx")
    summary = [c.value for row in book["Summary"].iter_rows() for c in row if c.value]
    assert any(str(v).startswith(message) for v in summary)
    notes = [c.value for c in book["Results"][1]].index("notes")
    assert len(book["Results"].cell(2, notes + 1).value) == 32_767
    assert note in (tmp_path / "out" / "s" / "results.csv").read_text()  # whole there


# ---------------------------------------------------------------- crashes, runaway resources


def test_f10_ten_thousand_columns_validate_in_linear_time(tmp_path):
    extra = [f"extra{i}" for i in range(10_000)]
    head = ",".join([*HEAD.split(","), *extra])
    row = ",".join(["a", "matmul", "1", "2", "3", "v5e", *["x"] * len(extra)])
    path = write_scenarios(tmp_path, f"{head}\n{row}\n")
    # a hang guard, not a benchmark: linear takes ~2 s here, the quadratic code took 229 s
    result = pipeline_cmd("validate", path, timeout=120)
    assert result.returncode == 0 and "1 valid scenario," in result.stdout


def test_f12_empty_hardware_file_is_a_message(tmp_path):
    hw = tmp_path / "mine.csv"
    hw.write_text("")
    result = invoke("validate", "--hardware", hw, BOOK_SCENARIOS)
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: {hw}: the hardware file is empty")


@LINUX
def test_f13_devices_pipes_and_folders_are_refused(tmp_path):
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    result = pipeline_cmd("validate", "/dev/zero", fifo, tmp_path, timeout=60)
    assert result.returncode == 1
    assert "Error: /dev/zero: not a regular file" in result.stderr
    assert f"Error: {fifo}: not a regular file" in result.stderr
    assert f"Error: {tmp_path}: is a folder, not a scenario file" in result.stderr
    result = pipeline_cmd("validate", "--hardware", "/dev/zero", BOOK_SCENARIOS, timeout=60)
    assert result.returncode == 1 and "/dev/zero: not a regular file" in result.stderr


# ---------------------------------------------------------------- the output folder


def test_f06_stale_temp_folders_are_removed(tmp_path):
    from pipeline.run import folder as outdir

    out = tmp_path / "out"
    out.mkdir()
    dead = dead_pid()
    stale = out / outdir.temp_name("s", dead)
    stale.mkdir()
    (stale / "results.csv").write_text("half")
    other_stale = out / outdir.temp_name("other", dead)
    other_stale.mkdir()
    busy = out / outdir.temp_name("busy", os.getpid())  # a live process: kept
    busy.mkdir()
    path = write_scenarios(tmp_path, f"{HEAD}\na,matmul,1,2,3,v5e\n")
    assert invoke("run", path, "-o", out, *FAST).exit_code == 0
    assert not stale.exists() and not other_stale.exists() and busy.exists()
    assert sorted(p.name for p in out.iterdir()) == [busy.name, "s"]


@LINUX
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_f07_stopping_a_run_stops_its_children(tmp_path, sig):
    """The run's chart workers are patched to hold their jobs: each marks that it began, then
    never ends. Stopped there, the run takes them with it; a worker that outlived its run
    would hold on, so the test fails instead of passing once their work is done."""
    out, marks = tmp_path / "out", tmp_path / "marks"
    marks.mkdir()
    hold = (
        "import os, pathlib, time, pipeline.run.stages as s\n"
        f"marks = pathlib.Path({str(marks)!r})\n"
        "def held(ctx, chart):\n"
        "    (marks / str(os.getpid())).touch()\n"
        "    while True:\n"
        "        time.sleep(0.05)\n"
        "s.STAGES['plots'] = held\n"
        "from pipeline.__main__ import main\n"
        "main()\n"
    )
    proc = subprocess.Popen(  # no pipes: waiting on them would wait for orphans too
        [sys.executable, "-c", hold, "run", str(BOOK_SCENARIOS), "-o", str(out), "-q"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    workers: set[int] = set()
    try:
        deadline = time.monotonic() + 120  # a failure guard: the marks come in a second
        while not workers:
            assert proc.poll() is None, f"the run ended ({proc.returncode}) before a chart"
            assert time.monotonic() < deadline, "no worker began a chart"
            workers = {int(p.name) for p in marks.iterdir()}
            time.sleep(0.02)
        assert proc.pid not in workers and workers <= descendants(proc.pid), "not its workers"
        proc.send_signal(sig)
        proc.wait(timeout=60)
        # stopped while still running: not finished (exit 0), its outputs never swapped in
        assert proc.returncode == (1 if sig == signal.SIGTERM else -signal.SIGKILL)
        assert not (out / BOOK_SCENARIOS.stem).exists()
        deadline = time.monotonic() + 60  # a failure guard: their jobs never end by themselves
        while alive(workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(workers), "a worker outlived its run"
        if sig == signal.SIGTERM:  # its temp folder, lock and the OUT it made removed on the way
            assert not out.exists()
    finally:
        for pid in alive(workers | {proc.pid}):
            os.kill(pid, signal.SIGKILL)


def test_f08_the_output_folder_never_disappears(tmp_path, monkeypatch):
    """Every step a write takes on the file system (each rename, exchange and removal) is
    intercepted, and OUT/<stem> looked at right before and right after it: it is always there
    (one atomic exchange, never two renames with a gap between them)."""
    from pipeline.run import folder as outdir

    if not sys.platform.startswith("linux"):
        pytest.skip("no atomic exchange here: the two renames are tested in run/test_folder.py")
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    assert outdir.exchange(a, b), "renameat2(RENAME_EXCHANGE) is available on Linux"

    row = {"name": "first", "op": "matmul", "B": 1, "D": 2, "F": 3, "hardware": "v5e"}
    target = tmp_path / "out" / "s"
    pipeline.analyze([row]).write(target, **FAST_WRITE)
    steps: list[tuple[str, bool, bool]] = []

    def watched(name, step):
        def call(*args, **kwargs):
            before = target.is_dir()
            try:
                return step(*args, **kwargs)
            finally:
                steps.append((name, before, target.is_dir()))

        return call

    monkeypatch.setattr(outdir, "exchange", watched("exchange", outdir.exchange))
    for module, name in ((os, "rename"), (os, "replace"), (os, "rmdir"), (shutil, "rmtree")):
        monkeypatch.setattr(module, name, watched(name, getattr(module, name)))
    pipeline.analyze([{**row, "name": "second"}]).write(target, **FAST_WRITE)
    monkeypatch.undo()
    assert "second" in (target / "results.csv").read_text()
    assert "exchange" in [name for name, *_ in steps]
    assert [s for s in steps if not all(s[1:])] == [], "OUT/<stem> was missing"


def test_f09_one_run_at_a_time_per_output_folder(tmp_path):
    from pipeline.run import folder as outdir

    out = tmp_path / "out"
    out.mkdir()
    path = write_scenarios(tmp_path, f"{HEAD}\na,matmul,1,2,3,v5e\n")
    lock = outdir.FolderLock(out / f".{outdir.folder_key('s')}.roofline-lock")
    assert lock.acquire() is None
    try:
        result = invoke("run", path, "-o", out, *FAST)
    finally:
        lock.release()
    assert result.exit_code == 1
    assert f"Error: another run is writing {out / 's'} (process {os.getpid()})" in result.stderr
    # two real runs at once, a few times: each either writes or says the folder is busy
    for _ in range(4):
        procs = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "pipeline",
                    "run",
                    str(BOOK_SCENARIOS),
                    "-o",
                    str(out),
                    "-q",
                    *FAST,
                ],
                cwd=ROOT,
                stderr=subprocess.PIPE,
                text=True,
            )  # fmt: skip
            for _ in range(2)
        ]
        for proc in procs:
            _, err = proc.communicate(timeout=120)
            assert proc.returncode == 0 or "another run is writing" in err, err
            assert "Errno" not in err
        assert (out / "q1-q5" / "manifest.json").exists()


def test_f22_long_input_file_names_work(tmp_path):
    path = tmp_path / ("a" * 246 + ".csv")
    path.write_bytes(BOOK_SCENARIOS.read_bytes())
    result = invoke("run", path, "-o", tmp_path / "out", *FAST)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out" / ("a" * 246) / "results.csv").exists()


# ---------------------------------------------------------------- messages


def test_f11_strict_prints_every_rejected_row(tmp_path):
    path = write_scenarios(
        tmp_path, f"{HEAD}\nok,matmul,1,2,3,v5e\nbad,matmul,1,2,3,h10\nworse,matmul,x,2,3,v5e\n"
    )
    result = invoke("run", path, "--strict", "-o", tmp_path / "out", *FAST)
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        f"{path}:3: column hardware: unknown hardware 'h10' (did you mean 'h100'?)",
        f"{path}:4: column B: 'x' is not a positive integer or a sweep "
        "(128|256, 1..512, 1..4096*2)",
        f"Error: {path}: 2 rows rejected and strict mode (--strict) is on; nothing written",
    ]


def test_f14_a_value_cannot_forge_a_message_line(tmp_path):
    text = f'{HEAD}\na,matmul,1,2,3,"h10\nb.csv:99: column X: fake"\n'
    result = invoke("validate", write_scenarios(tmp_path, text))
    assert result.exit_code == 1
    assert not any(line.startswith("b.csv:99") for line in result.stderr.splitlines())
    assert "unknown hardware 'h10\\nb.csv:99: column X: fake'" in result.stderr


def test_f15_nul_bytes_are_rejected_with_their_position(tmp_path):
    path = tmp_path / "s.csv"
    path.write_bytes(f"{HEAD},notes\na\0b,matmul,1,2,3,v5e,x\nc,matmul,1,2,3,v5e,y\n".encode())
    result = invoke("run", path, "-o", tmp_path / "out", "--no-plots", "--no-workbook")
    assert result.exit_code == 1
    assert f"{path}:2: column name: NUL byte at character 2 of 'a\\x00b'" in result.stderr
    for name in ("results.csv", "errors.csv", "report.html"):
        assert b"\0" not in (tmp_path / "out" / "s" / name).read_bytes()
    path.write_bytes(b"name,op,B,D\0,F,hardware\na,matmul,1,2,3,v5e\n")
    result = invoke("validate", path)
    assert result.exit_code == 1 and (
        f"Error: {path}:1: column 4: the header 'D\\x00' holds a NUL byte at character 2"
        in result.stderr
    )


def test_f16_alias_clash_names_the_users_file_and_line(tmp_path):
    hw = tmp_path / "mine.csv"
    hw.write_text("name,aliases,hbm_bandwidth,peak_bf16\nmine,v5e,1e12,1e14\n")
    result = invoke("validate", "--hardware", hw, BOOK_SCENARIOS)
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: {hw}:2: column aliases: alias 'v5e' of chip 'mine'")
    toml = tmp_path / "mine.toml"
    toml.write_text('[mine]\naliases = ["h100"]\nhbm_bandwidth = 1e12\npeak_bf16 = 1e14\n')
    result = invoke("validate", "--hardware", toml, BOOK_SCENARIOS)
    assert result.stderr.startswith(f"Error: {toml} [mine]: column aliases: alias 'h100'")


def test_f17_latin1_files_name_the_encoding_and_line(tmp_path):
    hw = tmp_path / "mine.csv"
    hw.write_bytes(b"name,aliases,hbm_bandwidth,peak_bf16\nmin\xe9,x,1e12,1e14\n")
    result = invoke("validate", "--hardware", hw, BOOK_SCENARIOS)
    assert result.exit_code == 1
    assert result.stderr.startswith(
        f"Error: {hw}:2: not UTF-8 (looks like Latin-1 / Windows-1252: byte 0xe9 at "
        "character 4 of the line): save it as UTF-8"
    )
    scenarios = tmp_path / "s.csv"
    scenarios.write_bytes(f"{HEAD}\nb\xe9,matmul,1,2,3,v5e\n".encode("latin-1"))
    result = invoke("validate", scenarios)
    assert f"Error: {scenarios}:2: not UTF-8 (looks like Latin-1" in result.stderr


def test_f18_utf16_files_are_recognized(tmp_path):
    hw = tmp_path / "mine.csv"
    hw.write_bytes("name,aliases,hbm_bandwidth,peak_bf16\nmine,x,1e12,1e14\n".encode("utf-16-le"))
    result = invoke("validate", "--hardware", hw, BOOK_SCENARIOS)
    assert result.stderr.startswith(f"Error: {hw}: not UTF-8 (looks like UTF-16): save it as UTF-8")
    scenarios = tmp_path / "s.csv"
    scenarios.write_bytes(f"{HEAD}\na,matmul,1,2,3,v5e\n".encode("utf-16"))  # with a BOM
    result = invoke("validate", scenarios)
    assert f"Error: {scenarios}: not UTF-8 (looks like UTF-16)" in result.stderr


def test_f20_chip_names_are_quote_prefixed_in_the_charts_sheet(tmp_path):
    toml = tmp_path / "mine.toml"
    toml.write_text('["=evil()"]\nhbm_bandwidth = 1e12\npeak_bf16 = 1e14\n')
    path = write_scenarios(tmp_path, f'{HEAD}\na,matmul,1,2,3,"=evil()"\n')
    result = invoke("run", path, "--hardware", toml, "-o", tmp_path / "out", "--no-report")
    assert result.exit_code == 0, result.output
    book = openpyxl.load_workbook(tmp_path / "out" / "s" / "workbook.xlsx")
    titles = [c for c in book["Charts"]["A"] if c.value and str(c.value).startswith("=evil()")]
    assert titles and all(c.data_type == "s" and c.quotePrefix for c in titles)


def test_f21_more_chips_than_the_split_dim_warns(tmp_path):
    path = write_scenarios(tmp_path, f"{HEAD},chips,shard\na,matmul,4,2,3,v5e,8,B\n")
    result = invoke("run", path, "-o", tmp_path / "out", "--no-plots", "--no-workbook")
    assert result.exit_code == 0  # computed: the busy chips' times are right
    warning = f"warning: {path}:2: column chips: 8 chips split B = 4: 4 of the chips hold nothing"
    assert warning in result.stderr
    manifest = json.loads((tmp_path / "out" / "s" / "manifest.json").read_text())
    assert manifest["warnings"] and "4 of the chips hold nothing" in manifest["warnings"][0]
    assert "4 of the chips hold nothing" in (tmp_path / "out" / "s" / "report.html").read_text()


def test_excel_delimiter_hints_and_semicolons_are_named(tmp_path):
    result = invoke("validate", write_scenarios(tmp_path, f"sep=,\n{HEAD}\na,matmul,1,2,3,v5e\n"))
    assert result.exit_code == 0 and "skipped Excel's delimiter hint 'sep=,'" in result.stderr
    result = invoke("validate", write_scenarios(tmp_path, "sep=;\nname;op\n"))
    assert result.exit_code == 1 and "declares ';' as its delimiter" in result.stderr
    text = HEAD.replace(",", ";") + "\na;matmul;1;2;3;v5e\n"
    result = invoke("validate", write_scenarios(tmp_path, text))
    assert "the header is separated by semicolons, not commas" in result.stderr


def test_empty_output_dir_is_a_usage_error():
    result = invoke("run", BOOK_SCENARIOS, "-o", "")
    assert result.exit_code == 2 and "is empty; give a folder" in result.stderr


def test_emoji_in_names_draw_without_glyph_warnings(tmp_path):
    path = write_scenarios(tmp_path, f"{HEAD}\nrocket 🚀,matmul,1,2,3,v5e\n")
    result = pipeline_cmd("run", path, "-o", tmp_path / "out", "--no-workbook", "--no-report")
    assert result.returncode == 0 and "Glyph" not in result.stderr, result.stderr


def test_unreadable_scenario_file_is_invalid(tmp_path, catalog):
    with pytest.raises(ScenarioFileError, match="no such file"):
        load_scenarios(tmp_path / "missing.csv", catalog)
