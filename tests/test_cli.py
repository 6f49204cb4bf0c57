"""The command line: exit codes, messages, summary lines, what is (not) written."""

from __future__ import annotations

import json
import re

import openpyxl
import pandas as pd
from click.testing import CliRunner

from pipeline import __version__
from pipeline.cli import cli
from tests.helpers import (
    BOOK_SCENARIOS,
    FAST,
    HEAD,
    ROOT,
    invoke,
    sheet_images,
    write_scenarios,
    write_sheet,
)


def test_version():
    result = invoke("--version")
    assert result.exit_code == 0 and __version__ in result.output


def test_run_book_scenarios(tmp_path):
    out = tmp_path / "out"
    result = invoke("run", str(BOOK_SCENARIOS), "-o", str(out), *FAST)
    assert result.exit_code == 0, result.output
    run_dir = out / "q1-q5"
    assert (run_dir / "results.csv").exists() and (run_dir / "manifest.json").exists()
    assert not (run_dir / "errors.csv").exists()
    assert result.stdout == (
        f"{BOOK_SCENARIOS}: 1,035 scenarios (compute-bound 669, memory-bound 365, "
        f"network-bound 1), 0 rejected rows -> {run_dir}/ "
        "[results.csv, results.parquet, summary.json, manifest.json]\n"
    )
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["rows"]["scenarios"] == 1035 and manifest["rows"]["source_rows"] == 13
    assert {f["path"] for f in manifest["files"]} == {"results.csv", "results.parquet",
                                                      "summary.json"}  # fmt: skip
    assert len(manifest["input_sha256"]) == 64
    assert set(manifest["timings_seconds"]) >= {"load", "compute", "results", "total"}


def test_full_run_writes_every_output(tmp_path):
    out = tmp_path / "out"
    result = invoke("run", str(BOOK_SCENARIOS), "-o", str(out), "--verbose")
    assert result.exit_code == 0, result.output
    run_dir = out / "q1-q5"
    names = {p.name for p in run_dir.iterdir()}
    assert names == {
        "results.csv",
        "results.parquet",
        "summary.json",
        "workbook.xlsx",
        "report.html",
        "manifest.json",
        "plots",
    }
    manifest = json.loads((run_dir / "manifest.json").read_text())
    files = {f["path"] for f in manifest["files"]}
    assert "plots/roofline-tpu-v5e.png" in files and "workbook.xlsx" in files
    assert set(manifest["timings_seconds"]) >= {
        "load",
        "compute",
        "results",
        "plots",
        "workbook",
        "report",
    }
    assert "  seconds: load " in result.stdout
    assert "note: The tpu-v5e table shows the first 500 of 1,032 scenarios" in result.stdout
    assert not (out / "index.html").exists()  # one input: no batch index
    book = openpyxl.load_workbook(run_dir / "workbook.xlsx")
    # the sheets' names and order are tests/render/workbook/test_book.py's
    assert {"Results", "Hardware", "Inputs", "Charts"} <= set(book.sheetnames)
    # rendered while the data sheets were written
    assert len(sheet_images(run_dir / "workbook.xlsx", "Charts")) == 6


def test_batch_of_files_gets_an_index(tmp_path):
    write_scenarios(tmp_path, f"{HEAD}\nok,matmul,1,2,3,v5e\n", name="good.csv")
    write_scenarios(
        tmp_path, f"{HEAD}\nok,matmul,1,2,3,v5e\nbad,matmul,1,2,3,h10\n", name="half.csv"
    )
    empty = write_scenarios(tmp_path, "", name="empty.csv")
    out = tmp_path / "out"
    result = invoke("run", str(tmp_path / "*.csv"), "-o", str(out), "--no-plots", "--no-workbook")
    assert result.exit_code == 1  # the worst of the three
    index = (out / "index.html").read_text()
    assert 'href="good/report.html"' in index and 'href="half/report.html"' in index
    assert "failed" in index and str(empty) in index
    assert 'href="empty' not in index and 'href=""' not in index  # nothing to link to
    assert f"index of 3 runs -> {out / 'index.html'}" in result.stdout


def test_rejected_rows_exit_1_and_still_write(tmp_path):
    path = write_scenarios(tmp_path, f"{HEAD}\nok,matmul,1,2,3,v5e\nbad,matmul,1,2,3,h10\n")
    result = invoke("run", str(path), "-o", str(tmp_path / "out"), *FAST)
    assert result.exit_code == 1
    assert (
        f"{path}:3: column hardware: unknown hardware 'h10' (did you mean 'h100'?)" in result.stderr
    )
    run_dir = tmp_path / "out" / "s"
    assert (run_dir / "errors.csv").read_text().startswith('line,name,column,reason\n3,"bad",')
    assert f"{path}: 1 scenario (compute-bound 0, memory-bound 1, network-bound 0), " in (
        result.stdout
    )
    assert ", 1 rejected row -> " in result.stdout


# two rows computed with a warning each (an idle chip, a link past its reach), one rejected
WARNED = """name,op,B,D,F,bytes,hardware,chips,shard
split,matmul,4,64,64,,h100,8,B
wide,all_reduce,,,,1e9,h100,64,
bad,matmul,8,64,64,,h10,,
"""


def test_quiet_prints_the_errors_and_one_line_for_the_warnings(tmp_path):
    path, out = write_scenarios(tmp_path, WARNED), tmp_path / "out"
    loud = invoke("run", str(path), "-o", str(out), "--no-plots", "--no-workbook")
    warnings = [line for line in loud.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warnings) == 2 and loud.stdout  # without -q: every warning, the summary line
    quiet = invoke("run", str(path), "-o", str(out), "--no-plots", "--no-workbook", "-q")
    assert quiet.exit_code == 1 and quiet.stdout == ""
    error, line = quiet.stderr.splitlines()
    assert error == f"{path}:4: column hardware: unknown hardware 'h10' (did you mean 'h100'?)"
    assert line.startswith(f"{path}: 2 warnings (column chips: ")  # what they say, first words
    assert line.endswith(f"), in {out / 's'}/manifest.json and report.html")
    manifest = json.loads((out / "s" / "manifest.json").read_text())
    assert manifest["warnings"] == [w.removeprefix("warning: ") for w in warnings]
    assert "Warnings about the input" in (out / "s" / "report.html").read_text()


def test_quiet_says_nothing_of_an_input_without_warnings(tmp_path):
    path = write_scenarios(tmp_path, WARNED, name="w.csv")
    out = tmp_path / "out"
    result = invoke("run", str(BOOK_SCENARIOS), str(path), "-o", str(out), *FAST, "-q")
    assert result.stdout == ""  # q1-q5.csv: no line; w.csv: its error and its warnings' line
    lines = result.stderr.splitlines()[1:]
    assert len(lines) == 1 and lines[0].startswith(f"{path}: 2 warnings (")
    assert lines[0].endswith(f"), in {out / 'w'}/manifest.json")


def test_strict_writes_nothing(tmp_path):
    path = write_scenarios(tmp_path, f"{HEAD}\nbad,matmul,1,2,3,h10\n")
    result = invoke("run", str(path), "-o", str(tmp_path / "out"), "--strict", *FAST)
    assert result.exit_code == 1
    assert (
        f"Error: {path}: 1 row rejected and strict mode (--strict) is on; nothing written"
        in result.stderr
    )
    assert not (tmp_path / "out" / "s").exists()


def test_header_only_file_is_an_error(tmp_path):
    path = write_scenarios(tmp_path, f"{HEAD}\n")
    result = invoke("run", str(path), "-o", str(tmp_path / "out"), *FAST)
    assert result.exit_code == 1
    assert result.stderr == f"Error: {path}: a header but no scenario rows: nothing to compute\n"


def test_one_bad_file_does_not_stop_the_others(tmp_path):
    bad = write_scenarios(tmp_path, "", name="bad.csv")
    good = write_scenarios(tmp_path, f"{HEAD}\nok,matmul,1,2,3,v5e\n", name="good.csv")
    result = invoke("run", str(bad), str(good), "-o", str(tmp_path / "out"), *FAST)
    assert result.exit_code == 1
    assert (tmp_path / "out" / "good" / "results.csv").exists()


def test_usage_errors_exit_2(tmp_path):
    assert CliRunner().invoke(cli, ["run"]).exit_code == 2
    assert CliRunner().invoke(cli, ["run", "x.csv", "--max-rows", "0"]).exit_code == 2
    assert CliRunner().invoke(cli, ["frobnicate"]).exit_code == 2


def test_missing_file(tmp_path):
    result = invoke("run", str(tmp_path / "nope.csv"), "-o", str(tmp_path / "o"), *FAST)
    assert result.exit_code == 1
    assert result.stderr == f"Error: {tmp_path / 'nope.csv'}: no such file\n"


def test_glob_inputs(tmp_path):
    for name in ("a", "b"):
        write_scenarios(tmp_path, f"{HEAD}\nok,matmul,1,2,3,v5e\n", name=f"{name}.csv")
    result = invoke("run", str(tmp_path / "*.csv"), "-o", str(tmp_path / "out"), *FAST)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out" / "a").is_dir() and (tmp_path / "out" / "b").is_dir()


def test_same_stem_gets_unique_folders(tmp_path):
    (tmp_path / "x").mkdir()
    (tmp_path / "y").mkdir()
    a = write_scenarios(tmp_path / "x", f"{HEAD}\nok,matmul,1,2,3,v5e\n", name="s.csv")
    b = write_scenarios(tmp_path / "y", f"{HEAD}\nok,matmul,1,2,3,v5e\n", name="s.csv")
    result = invoke("run", str(a), str(b), "-o", str(tmp_path / "out"), *FAST)
    assert result.exit_code == 0  # each its own folder, by its path: not by position
    folders = sorted(p.name for p in (tmp_path / "out").iterdir() if p.is_dir())
    assert len(folders) == 2 and all(re.fullmatch(r"s-[0-9a-f]{6}", f) for f in folders)


def test_validate_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = write_scenarios(tmp_path, f"{HEAD}\nok,matmul,1,2,3,v5e\nbad,matmul,1,2,3,h10\n")
    result = invoke("validate", str(path))
    assert result.exit_code == 1
    assert (
        f"{path}:3: column hardware: unknown hardware 'h10' (did you mean 'h100'?)" in result.stderr
    )
    assert result.stdout == f"{path}: 2 rows read, 1 valid scenario, 1 rejected row\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.csv"]


def test_validate_ok(tmp_path):
    result = invoke("validate", str(BOOK_SCENARIOS))
    assert result.exit_code == 0
    assert (
        result.stdout == f"{BOOK_SCENARIOS}: 13 rows read, 1,035 valid scenarios, 0 rejected rows\n"
    )


def test_validate_counts_in_plural(tmp_path):
    rows = "ok,matmul,1,2,3,v5e\nbad,matmul,1,2,3,h10\nworse,matmul,x,2,3,v5e\n"
    result = invoke("validate", write_scenarios(tmp_path, f"{HEAD}\n{rows}"))
    assert result.exit_code == 1
    assert result.stdout.endswith(": 3 rows read, 1 valid scenario, 2 rejected rows\n")


# a sweep meant for the Dask engine: 2 x 2,000,000 scenarios, past the default --max-rows
DASK_SIZE = (
    "name,op,B,D,F,hardware\nsmall,matmul,1..512,64,64,h100\nbig,matmul,1..2000000,64,64,h100|v5e\n"
)


def test_validate_checks_a_sweep_for_the_dask_engine_without_expanding_it(tmp_path):
    path = write_scenarios(tmp_path, DASK_SIZE)
    result = invoke("validate", str(path), "--engine", "dask")
    assert result.exit_code == 0 and result.stderr == ""
    assert result.stdout == (
        f"{path}: 2 rows read, 4,000,512 valid scenarios for --engine dask, 0 rejected rows\n"
    )


def test_validate_says_a_file_past_max_rows_is_one_for_the_dask_engine(tmp_path):
    path = write_scenarios(tmp_path, DASK_SIZE)
    result = invoke("validate", str(path))
    assert result.exit_code == 1  # the local engine would refuse rows
    assert result.stderr == ""  # not a message per fleet point past --max-rows
    assert result.stdout == (
        f"{path}: 2 rows read, 4,000,512 valid scenarios, 0 rejected rows: over --max-rows "
        "(1,000,000) for the local engine; valid for --engine dask\n"
    )
    typo = write_scenarios(tmp_path, DASK_SIZE + "bad,matmul,8,64,64,h10\n", "typo.csv")
    result = invoke("validate", str(typo), "--max-rows", "1000")
    assert (
        result.stderr
        == f"{typo}:4: column hardware: unknown hardware 'h10' (did you mean 'h100'?)\n"
    )
    assert result.stdout.endswith(
        ", 1 rejected row: over --max-rows (1,000) for the local engine; checked as for "
        "--engine dask\n"
    )


def test_validate_counts_a_row_with_valid_and_refused_points_once(tmp_path):
    text = "name,op,B,D,F,hardware,dtype\nmlp,matmul,8,64,64,h100|tpu-v6e,bf16|fp8\n"
    path = write_scenarios(tmp_path, text + "bad,matmul,8,64,64,h10,\n")
    for engine in ("local", "dask"):
        result = invoke("validate", str(path), "--engine", engine)
        assert result.exit_code == 1
        assert "(at 'mlp[hardware=tpu-v6e,dtype=fp8]')" in result.stderr  # fp8 on a v6e
        assert result.stdout.startswith(f"{path}: 2 rows read, 3 valid scenarios")
        assert result.stdout.endswith(", 2 rejected rows (1 partly)\n")


def test_help_shows_the_lines_as_printed(tmp_path, monkeypatch):
    monkeypatch.chdir(BOOK_SCENARIOS.parent.parent)  # the help quotes scenarios/q1-q5.csv
    book = BOOK_SCENARIOS.relative_to(BOOK_SCENARIOS.parent.parent)
    run_help = " ".join(invoke("run", "--help").output.split())
    ran = invoke("run", book, "-o", tmp_path / "out", *FAST).stdout
    assert ran.split(" -> ")[0] + " -> output/q1-q5/" in run_help
    validate_help = invoke("validate", "--help").output
    assert invoke("validate", book).stdout.strip() in validate_help


def test_hardware_list_and_show():
    listing = invoke("hardware")
    assert listing.exit_code == 0
    assert "tpu-v5e" in listing.output and "h100" in listing.output
    one = invoke("hardware", "V5E")
    assert one.exit_code == 0
    assert "hbm_bandwidth" in one.output and "source" in one.output


def test_hardware_name_shows_units():
    lines = invoke("hardware", "v5e").output.splitlines()
    assert lines[0] == "name              tpu-v5e"
    assert {
        "aliases           v5e, tpuv5e, v5litepod, v5lite, tpu-v5-lite",
        "peak_bf16         197 TFLOP/s",
        "hbm_capacity      16.0 GB",
        "hbm_bandwidth     820 GB/s",
        "ici_latency       1.00 µs",
        "pcie_bandwidth    16.0 GB/s",
        "as_of             2025-02-04",
    } <= set(lines)


def test_hardware_raw_prints_numbers_as_stored():
    lines = invoke("hardware", "v5e", "--raw").output.splitlines()
    assert {
        "aliases           v5e;tpuv5e;v5litepod;v5lite;tpu-v5-lite",
        "peak_bf16         197000000000000.0",
        "hbm_capacity      16000000000.0",
        "ici_latency       1e-06",
    } <= set(lines)


def test_hardware_efficiencies_in_percent(tmp_path):
    hw = tmp_path / "mine.toml"
    hw.write_text("[v5e]\ncompute_efficiency = 0.9\nhbm_efficiency = 0.85\n", encoding="utf-8")
    lines = invoke("hardware", "v5e", "--hardware", hw).output.splitlines()
    assert {"compute_efficiency  90.0%", "hbm_efficiency      85.0%"} <= set(lines)
    assert not any(line.startswith("network_efficiency") for line in lines)  # blank: 1
    raw = invoke("hardware", "v5e", "--hardware", hw, "--raw").output.splitlines()
    assert "compute_efficiency  0.9" in raw


def test_hardware_unknown():
    result = CliRunner().invoke(cli, ["hardware", "h10"])
    assert result.exit_code == 1
    assert result.stderr == "Error: unknown hardware 'h10' (did you mean 'h100'?)\n"


def test_user_hardware_file(tmp_path):
    hw = tmp_path / "mine.toml"
    hw.write_text("[mychip]\npeak_bf16 = 1e14\nhbm_bandwidth = 1e12\n", encoding="utf-8")
    path = write_scenarios(tmp_path, f"{HEAD}\nok,matmul,1,2,3,mychip\n")
    result = invoke("run", str(path), "-o", str(tmp_path / "out"), "--hardware", str(hw), *FAST)
    assert result.exit_code == 0, result.output


def test_bad_hardware_file_is_an_error(tmp_path):
    hw = tmp_path / "mine.csv"
    hw.write_text("name,hbm_bandwdth\nx,1\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["validate", str(BOOK_SCENARIOS), "--hardware", str(hw)])
    assert result.exit_code == 1
    assert "unknown column 'hbm_bandwdth' (did you mean 'hbm_bandwidth'?)" in result.stderr


def test_every_row_rejected_still_writes_the_run(tmp_path):
    path = write_scenarios(tmp_path, f"{HEAD}\nbad,matmul,1,2,3,h10\n")
    result = invoke("run", str(path), "-o", str(tmp_path / "out"))
    assert result.exit_code == 1
    run_dir = tmp_path / "out" / "s"
    assert (run_dir / "results.csv").read_text().startswith("name,series,op,")
    assert (run_dir / "errors.csv").exists() and (run_dir / "report.html").exists()
    assert "0 scenarios (compute-bound 0, memory-bound 0, network-bound 0), " in result.stdout
    assert ", 1 rejected row -> " in result.stdout


def test_help_explains_every_command():
    result = invoke("--help")
    assert result.exit_code == 0
    for command in ("run", "validate", "hardware"):
        assert command in result.output
    run_help = invoke("run", "--help").output
    for option in ("--force", "--strict", "--max-rows", "--workbook-rows", "Exit status"):
        assert option in run_help


def test_a_workbook_from_a_run_runs_again_with_an_edit_and_beside_a_csv(tmp_path):
    out = tmp_path / "out"
    assert (
        invoke("run", str(BOOK_SCENARIOS), "-o", str(out), "--no-plots", "--no-report").exit_code
        == 0
    )
    book = openpyxl.load_workbook(out / "q1-q5" / "workbook.xlsx")
    sheet = book["Inputs"]
    names = [c.value for c in sheet[1]]
    row = next(r for r in sheet.iter_rows(min_row=2) if r[names.index("op")].value == "matmul")
    row[names.index("hardware")].value = "v4p"  # an edit a planner makes
    book.save(tmp_path / "edited.xlsx")
    csv = write_scenarios(tmp_path, f"{HEAD}\nsmall,matmul,8,128,128,v5e\n")
    result = invoke(
        "run", str(tmp_path / "edited.xlsx"), str(csv), "-o", str(tmp_path / "again"), *FAST
    )
    assert result.exit_code == 0, result.output
    first = (out / "q1-q5" / "results.csv").read_text()
    again = (tmp_path / "again" / "edited" / "results.csv").read_text()
    assert "tpu-v4p" in again and again != first
    assert (tmp_path / "again" / "s" / "results.csv").exists()


def test_validate_a_workbook_sheet_with_its_location(tmp_path):
    rows = [["name", "op", "B", "D", "F", "hardware"], ["typo", "matmul", 8, 8192, 8192, "h10"]]
    write_sheet(tmp_path / "plan.xlsx", rows, "Plan", "Other")
    result = invoke("validate", str(tmp_path / "plan.xlsx"), "--sheet", "Plan")
    assert result.exit_code == 1
    assert result.stderr == (
        f"{tmp_path / 'plan.xlsx'}[Plan]:2: column hardware: unknown hardware 'h10' (did you mean 'h100'?)\n"
    )
    result = invoke("validate", str(tmp_path / "plan.xlsx"), "--sheet", "Nope")
    assert (
        result.stderr
        == f"Error: {tmp_path / 'plan.xlsx'}: no sheet 'Nope'; the workbook has 'Plan', 'Other'\n"
    )


def test_encoding_reads_a_windows_csv_and_the_utf8_error_names_it(tmp_path):
    path = tmp_path / "win.csv"
    path.write_bytes(f"{HEAD}\ncafé,matmul,8,128,128,v5e\n".encode("cp1252"))
    result = invoke("validate", str(path))
    assert result.stderr == (
        f"Error: {path}:2: not UTF-8 (looks like Latin-1 / Windows-1252: byte 0xe9 at character "
        "4 of the line): save it as UTF-8, or give --encoding cp1252\n"
    )
    result = invoke("validate", str(path), "--encoding", "cp1252")
    assert result.exit_code == 0 and result.stderr == ""
    result = invoke("validate", str(path), "--encoding", "klingon")
    assert result.exit_code == 2 and "unknown encoding 'klingon' (e.g. cp1252)" in result.stderr


def test_template_writes_refuses_to_overwrite_and_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = invoke("template")
    assert result.exit_code == 0 and result.stderr == ""
    assert result.stdout == "scenarios.xlsx: written; fill in its Scenarios sheet, then run it\n"
    before = (tmp_path / "scenarios.xlsx").read_bytes()
    result = invoke("template")
    assert result.exit_code == 1 and result.stderr == (
        "Error: scenarios.xlsx already exists; give another name, or pass --force to replace it\n"
    )
    assert (tmp_path / "scenarios.xlsx").read_bytes() == before
    assert invoke("template", "--force").exit_code == 0
    result = invoke("validate", "scenarios.xlsx")
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        "scenarios.xlsx[Scenarios]: 13 rows read, 1,035 valid scenarios, 0 rejected rows\n"
    )


def _two_runs(tmp_path, d_new=8756, hbm=None):
    """Two output folders of the chapter's two-chip example, D = 8754 and `d_new`."""
    import pandas as pd

    import pipeline

    rows = [
        dict(name="tp2", op="matmul", B=4096, F=16384, hardware="v5e", chips=2, shard="D"),
        dict(name="slow", op="matmul", B=8, D=8192, F=8192, hardware="h100"),
    ]
    off = dict(plots=False, workbook=False, report=False)
    pipeline.analyze([{**rows[0], "D": 8754}, rows[1]]).write(tmp_path / "old", **off)
    hw = None if hbm is None else pd.DataFrame([{"name": "h100", "hbm_bandwidth": hbm}])
    new = pipeline.analyze([{**rows[0], "D": d_new}, rows[1]], hardware=hw)
    new.write(tmp_path / "new", **off)
    return tmp_path / "old", tmp_path / "new"


def test_compare_identical_runs_exit_0_and_an_empty_changes_csv(tmp_path):
    old, _ = _two_runs(tmp_path)
    out = tmp_path / "changes"
    result = invoke("compare", str(old), str(old / "results.csv"), "-o", str(out))
    assert result.exit_code == 0, result.output
    assert result.output == f"2 compared: no changes -> {out}/\n"
    assert (out / "changes.csv").read_text() == "name,hardware,change,old,new,ratio,causes,series\n"
    assert "No changes since the baseline" in (out / "changes.html").read_text()


def test_compare_a_flip_and_a_hardware_override_exit_1(tmp_path):
    old, new = _two_runs(tmp_path, hbm=1.0e12)
    out = tmp_path / "changes"
    result = invoke("compare", str(old), str(new), "-o", str(out))
    assert result.exit_code == 1, result.output
    assert result.output.startswith("2 compared: 4 changes (bound 1, critical_batch 2, t_lower 1)")
    text = (out / "changes.csv").read_text()
    assert '"tp2","tpu-v5e","bound","network","compute",,"D 8754 → 8756"' in text
    assert '"slow","h100","t_lower",' in text and '"hbm_bandwidth 3.35e12 → 1e12"' in text


def test_compare_fail_on_counts_only_those_kinds(tmp_path):
    old, new = _two_runs(tmp_path, d_new=8754, hbm=3.0e12)  # a 12 % time drift, no flip
    out = str(tmp_path / "c")
    assert (
        invoke("compare", str(old), str(new), "-o", out, "--fail-on", "bound,fits").exit_code == 0
    )
    assert invoke("compare", str(old), str(new), "-o", out, "--fail-on", "t_lower").exit_code == 1
    assert (
        invoke(
            "compare", str(old), str(new), "-o", out, "--threshold", "0.2", "--fail-on", "t_lower"
        ).exit_code
        == 0
    )
    bad = invoke("compare", str(old), str(new), "-o", out, "--fail-on", "bond")
    assert bad.exit_code == 2
    assert "Error: --fail-on: unknown kind 'bond'; give some of added,removed," in bad.output


def test_compare_errors_exit_2(tmp_path):
    old, new = _two_runs(tmp_path)
    missing = invoke("compare", str(tmp_path / "nope"), str(new), "-o", str(tmp_path / "c"))
    assert missing.exit_code == 2
    assert f"Error: the baseline {tmp_path / 'nope'} does not exist" in missing.output
    dup = tmp_path / "dup.csv"
    dup.write_text("name,bound,fits,critical_batch,t_lower\na,memory,True,,1\na,memory,True,,2\n")
    result = invoke("compare", str(dup), str(new), "-o", str(tmp_path / "c"))
    assert result.exit_code == 2
    assert f"Error: the baseline {dup} names 1 scenario(s) more than once ('a')" in result.output
    older = tmp_path / "older.csv"
    older.write_text("name,bound,t_lower\ntp2,network,0.00298\n")
    result = invoke("compare", str(older), str(new), "-o", str(tmp_path / "c"))
    assert result.exit_code == 2  # a result one run lacks cannot be compared (P9)
    assert f"Error: the baseline {older} has no 'fits' and 'critical_batch' columns" in (
        result.output
    )
    fewer = tmp_path / "fewer.csv"
    fewer.write_text("name,bound,fits,critical_batch,t_lower\ntp2,network,True,,0.00298\n")
    result = invoke("compare", str(fewer), str(new), "-o", str(tmp_path / "c"))
    assert result.exit_code == 1
    assert "skipped columns only one run has: B, D, F, chips, compute_dtype" in result.output
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "keep.txt").write_text("x")
    result = invoke("compare", str(old), str(new), "-o", str(foreign))
    assert result.exit_code == 2 and "not written by this tool" in result.output


def _two_chip(tmp_path, d: int, name: str = "nightly.csv"):
    text = f"name,op,B,D,F,hardware,chips,shard\nflip,matmul,4096,{d},16384,v5e,2,D\n"
    return write_scenarios(tmp_path, text + "same,matmul,8,8192,8192,v5e,,\n", name=name)


def test_run_with_a_baseline_shows_what_changed_everywhere(tmp_path):
    (tmp_path / "old").mkdir()
    (tmp_path / "new").mkdir()
    old = _two_chip(tmp_path / "old", 8754)
    assert invoke("run", str(old), "-o", str(tmp_path / "base"), "--no-plots").exit_code == 0
    new = _two_chip(tmp_path / "new", 8756)
    other = _two_chip(tmp_path / "new", 8756, name="other.csv")
    out = tmp_path / "out"
    args = ("run", str(new), str(other), "-o", str(out), "--no-plots")
    result = invoke(*args, "--baseline", str(tmp_path / "base"))
    assert result.exit_code == 0, result.output  # changes found: the status is run's
    assert f"note: {other}: no run of it in the baseline {tmp_path / 'base'}/; not compared" in (
        result.stderr
    )
    changes = (out / "nightly" / "changes.csv").read_text()
    assert '"flip","tpu-v5e","bound","network","compute",,"D 8754 → 8756"' in changes
    assert not (out / "other" / "changes.csv").exists()
    manifest = json.loads((out / "nightly" / "manifest.json").read_text())
    assert manifest["changes"]["baseline"] == str(tmp_path / "base" / "nightly")
    assert manifest["changes"]["counts"]["bound"] == 1
    report = (out / "nightly" / "report.html").read_text()
    assert report.index("Since the baseline") < report.index("Series: how long")
    book = openpyxl.load_workbook(out / "nightly" / "workbook.xlsx", read_only=True)
    assert book.sheetnames[1] == "Changes"
    index = (out / "index.html").read_text()
    assert '<th title="changes since the baseline (changes.csv)">Since the baseline' in index
    assert "1 bound flip" in index and "no baseline" in index


def test_run_with_a_missing_baseline_writes_nothing(tmp_path):
    path = _two_chip(tmp_path, 8756)
    out = tmp_path / "out"
    result = invoke("run", str(path), "-o", str(out), "--baseline", str(tmp_path / "nowhere"))
    assert result.exit_code == 1
    assert result.stderr == (
        f"Error: baseline {tmp_path / 'nowhere'} does not exist; give an earlier run's "
        "output folder\n"
    )
    assert not out.exists()


def test_a_near_miss_column_is_an_error_unless_kept(tmp_path):
    text = f"# fp8\n{HEAD},dtpye\nok,matmul,1,2,3,h100,fp8\n"
    bad = write_scenarios(tmp_path, text, name="bad.csv")
    good = write_scenarios(tmp_path, f"{HEAD}\nok,matmul,1,2,3,v5e\n", name="good.csv")
    result = invoke("run", bad, good, "-o", tmp_path / "out", *FAST)
    assert result.exit_code == 1
    assert f"Error: {bad}:2: column dtpye: unknown column; did you mean dtype?" in result.stderr
    assert not (tmp_path / "out" / "bad").exists()  # nothing computed for that file
    assert (tmp_path / "out" / "good" / "results.csv").exists()
    assert invoke("validate", bad).exit_code == 1
    kept = invoke("validate", bad, "--keep-column", "dtpye", "--keep-column", "other")
    assert kept.exit_code == 0 and kept.stderr == ""
    ran = invoke("run", bad, "--keep-column", "dtpye", "-o", tmp_path / "kept", *FAST)
    assert ran.exit_code == 0, ran.stderr
    assert "dtpye" in (tmp_path / "kept" / "bad" / "results.csv").read_text()


def test_a_runs_own_workbook_reruns_under_the_runs_name(tmp_path):
    out = tmp_path / "output"
    for name in ("first", "second"):
        path = write_scenarios(tmp_path, f"{HEAD}\nok,matmul,1,2,3,v5e\n", name=f"{name}.csv")
        assert invoke("run", path, "-o", out, "--no-plots", "--no-report").exit_code == 0
    books = [out / "first" / "workbook.xlsx", out / "second" / "workbook.xlsx"]
    result = invoke("run", *books, "-o", out, "--no-plots", "--no-report")
    assert result.exit_code == 0, result.stderr
    assert (out / "first-rerun" / "results.csv").exists()
    assert (out / "second-rerun" / "results.csv").exists()
    assert not (out / "workbook").exists()


def test_new_nightly_options_refuse_what_they_cannot_do(tmp_path):
    """Walked as a user: a Dask run refuses --baseline latest (nothing written), an unknown
    --fail-on kind is a usage error, and compare of a missing folder says it is missing."""
    dask = invoke("run", BOOK_SCENARIOS, "-o", tmp_path / "d", "--engine", "dask",
                  "--baseline", "latest")  # fmt: skip
    assert dask.exit_code == 2 and "--baseline is not taken with --engine dask" in dask.stderr
    assert not (tmp_path / "d").exists()
    kind = invoke("run", BOOK_SCENARIOS, "-o", tmp_path / "k", "--baseline", "latest",
                  "--fail-on", "bogus")  # fmt: skip
    assert kind.exit_code == 2 and "unknown kind 'bogus'" in kind.stderr
    assert not (tmp_path / "k").exists()
    (tmp_path / "whole" / "q1-q5").mkdir(parents=True)
    (tmp_path / "whole" / "q1-q5" / "results.csv").write_text("name\n")
    gone = invoke("compare", tmp_path / "whole", tmp_path / "nowhere", "-o", tmp_path / "c")
    assert gone.exit_code == 2 and "holds the runs of several inputs" not in gone.stderr


def test_run_and_validate_take_models_files_for_transformer_rows(tmp_path):
    """--models adds a model (checked as `pipeline models --models` checks it) that
    transformer rows then name; without it the name is unknown."""
    (tmp_path / "mine.csv").write_text(
        "name,D,F,N,K,H,L,V,source\ntiny,512,2048,8,2,64,4,1000,a test\n", encoding="utf-8"
    )
    (tmp_path / "s.csv").write_text(
        "name,op,model,hardware,B,T,S\nt,transformer,tiny,h100,4,1,128\n", encoding="utf-8"
    )
    s, mine, out = tmp_path / "s.csv", tmp_path / "mine.csv", tmp_path / "out"
    bare = invoke("validate", s)
    assert bare.exit_code == 1 and "unknown model 'tiny'" in bare.output
    ok = invoke("validate", s, "--models", mine)
    assert ok.exit_code == 0, ok.output
    done = invoke("run", s, "--models", mine, "-o", out, "-q", "--no-plots", "--no-workbook",
                  "--no-report")  # fmt: skip
    assert done.exit_code == 0, done.output
    results = pd.read_parquet(tmp_path / "out" / "s" / "results.parquet")
    assert results["name"].tolist()[:2] == ["t", "t/q_proj"]
    assert results.set_index("name").loc["t/q_proj", "count"] == 4


def test_models_rows_sets_the_models_tables_cap(tmp_path):
    """`run --models-rows N`: the report's Models table lists N steps, saying how many there
    are; 0 is a usage error; --help says what it lists."""
    models = ROOT / "scenarios" / "models.csv"
    out = tmp_path / "out"
    result = invoke("run", models, "-o", out, "--no-plots", "--no-workbook", "--models-rows", 3)
    assert result.exit_code == 0, result.output
    html = (out / "models" / "report.html").read_text(encoding="utf-8")
    assert "The 3 slowest of 20 steps, with each fleet point's best" in html
    assert invoke("run", models, "-o", out, *FAST, "--models-rows", 0).exit_code == 2
    help_text = " ".join(invoke("run", "--help").stdout.split())
    assert "--models-rows INTEGER RANGE Steps of the Models table" in help_text
