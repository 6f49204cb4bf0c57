"""Issue 27, round three of the hostile-user probe: the commands around a run (`hardware
--chart`, `template`), the workbook's cell limit, fleet lists and ranges, and hardware files
of thousands of chips. One test per finding (P2, P19, P22, P31, P32, P34, P35, P37), each
failing on the code before its fix."""

from __future__ import annotations

import pandas as pd
import pytest
from openpyxl import load_workbook

import pipeline
from pipeline.errors import OutputError
from tests.helpers import assert_png, invoke

LIMIT = 32_767  # Excel's characters per cell
LONG = "n" * 40_000  # a name past it
HEADER = "h" * 40_000  # a column header past it


def _texts(sheet) -> list[str]:
    return [c for row in sheet.iter_rows(values_only=True) for c in row if isinstance(c, str)]


# P2: `hardware --chart FILE.png` over an existing file (a scenario CSV named .png)


def test_p02_hardware_chart_refuses_an_existing_file_without_force(tmp_path):
    target = tmp_path / "plan.png"
    target.write_text("name,op,B,D,F,hardware\nmm,matmul,8,8,8,h100\n")
    before = target.read_bytes()
    result = invoke("hardware", "--compare", "h100", "b200", "--chart", target)
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == (
        f"Error: {target} already exists; give another name, or pass --force to replace it"
    )
    assert target.read_bytes() == before
    usage = invoke("hardware", "--compare", "h100", "b200", "--force")
    assert usage.exit_code == 2
    assert "--force replaces the chart: give --chart PATH.png too" in usage.stderr
    forced = invoke("hardware", "--compare", "h100", "b200", "--chart", target, "--force")
    assert forced.exit_code == 0, forced.output
    assert_png(target.read_bytes())


# P19: a name or column header past 32,767 characters: cut in the workbook only, and said


def _long_file(tmp_path):
    path = tmp_path / "long.csv"
    path.write_text(
        f"name,op,B,D,F,hardware,{HEADER}\n{LONG},matmul,8|16,128,128,h100,x\n"
        "short,matmul,8,128,128,v5e,y\n"
    )
    return path


def _check_cut(book, whole: str) -> None:
    results = book["Results"]
    header = next(results.iter_rows(max_row=1, values_only=True))
    assert HEADER not in header
    cut_header = next(h for h in header if h.startswith("hhh"))
    assert len(cut_header) == LIMIT and cut_header.endswith("…")
    for sheet in book.worksheets:
        assert all(len(t) <= LIMIT for t in _texts(sheet)), sheet.title
    summary = " ".join(_texts(book["Summary"]))
    assert (
        "the header of column " in summary
        and "on the Results sheet held more than Excel's 32,767 characters and is cut there; "
        f"{whole} has it whole."
        in summary
    )
    assert (
        "cell(s) of column name on the Results sheet held more than Excel's 32,767 characters "
        f"and are cut there; {whole} has them whole." in summary
    )
    assert "on the Answer sheet held more than Excel's 32,767 characters" in summary


def test_p19_long_name_and_header_are_cut_in_the_workbook_only(tmp_path):
    written = pipeline.analyze(_long_file(tmp_path)).write(
        tmp_path / "out", plots=False, report=False
    )
    _check_cut(load_workbook(written.folder / "workbook.xlsx", read_only=True), "results.csv")
    whole = pd.read_csv(written.folder / "results.csv", dtype=str, keep_default_na=False)
    assert HEADER in whole.columns
    assert (whole["name"].str.len() >= len(LONG)).sum() == 2  # both points of the sweep


def test_p19_the_dask_engine_cuts_them_too(tmp_path):
    distributed = pytest.importorskip("distributed")
    from pipeline.engines.dask.run import run_dask
    from pipeline.run.write import Options

    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, protocol="tcp://",
        host="127.0.0.1", dashboard_address=None,
        silence_logs=40,
    ) as cluster:  # fmt: skip
        got = run_dask(
            _long_file(tmp_path), tmp_path / "out", scheduler=cluster.scheduler_address,
            options=Options(plots=False, report=False),
        )  # fmt: skip
    book = load_workbook(got.folder / "workbook.xlsx", read_only=True)
    _check_cut(book, "results/part-*.parquet")


# P22: the template's Hardware sheet is for reference, and says so


def test_p22_template_hardware_sheet_says_it_is_read_only_and_is_locked(tmp_path):
    path = pipeline.write_template(tmp_path / "plan.xlsx")
    book = load_workbook(path)
    sheet = book["Hardware"]
    note = sheet["A1"].value
    assert "never reads this sheet" in note and "--hardware mine.csv" in note
    assert sheet.protection.sheet  # Excel refuses an edit instead of ignoring it later
    assert not sheet.protection.autoFilter  # filtering still allowed
    assert sheet["A3"].value == "name" and sheet["A4"].value  # the catalog below the note
    assert sheet.auto_filter.ref.startswith("A3:")


# P31: chips ranges, empty list items, `hardware=|`


def _problems(tmp_path, rows: str, header="name,op,B,D,F,hardware,chips,shard,dtype"):
    path = tmp_path / "plan.csv"
    path.write_text(f"{header}\n{rows}\n")
    analysis = pipeline.analyze(path)
    return analysis, [(p.line, p.column, p.reason) for p in analysis.problem_list]


RANGE_ADVICE = "a range goes up from 1 or more, by one (1..64) or times 2 or more (1..64*2)"


@pytest.mark.parametrize(
    ("cell", "reason"),
    [
        ("1..64*1", f"a range that never grows (a factor of 1): '1..64*1'; {RANGE_ADVICE}: "
                    "write '1..64*2'"),
        ("8..1", f"a range that goes down: '8..1'; {RANGE_ADVICE}: write '1..8'"),
        ("0..4", f"a range that starts at 0: '0..4'; {RANGE_ADVICE}: write '1..4'"),
    ],
)  # fmt: skip
def test_p31_chips_ranges_say_what_is_wrong_and_what_is_valid(tmp_path, cell, reason):
    _, found = _problems(tmp_path, f"r,matmul,8,128,128,h100,{cell},B,bf16")
    assert found == [(2, "chips", reason)]


@pytest.mark.parametrize(
    ("column", "row", "cell", "fix"),
    [
        ("B", "r,matmul,8||16,128,128,h100,1,,bf16", "8||16", "'8|16'"),
        ("hardware", "r,matmul,8,128,128,h100||b200,1,,bf16", "h100||b200", "'h100|b200'"),
        ("chips", "r,matmul,8,128,128,h100,2||4,B,bf16", "2||4", "'2|4'"),
        ("dtype", "r,matmul,8,128,128,h100,1,,bf16||fp8", "bf16||fp8", "'bf16|fp8'"),
    ],
)
def test_p31_an_empty_list_item_rejects_the_row_in_every_column(tmp_path, column, row, cell, fix):
    analysis, found = _problems(tmp_path, row)
    reason = (
        f"an empty item in the list '{cell}' (item 2 of 3); values are separated by one '|': "
        f"write {fix}"
    )
    assert found == [(2, column, reason)]
    assert len(analysis.results) == 0  # no point computed: h100 alone, chips = 1, bf16 alone


def test_p31_a_list_of_nothing_is_one_problem(tmp_path):
    _, found = _problems(tmp_path, "r,matmul,8,128,128,|,1,,bf16")
    assert found == [
        (
            2,
            "hardware",
            "an empty item in the list '|' (items 1, 2 of 2); values are separated by one '|': "
            "give its values, e.g. h100|b200",
        )
    ]


# P32: a hardware file of thousands of chips loads in time linear in its chips


def test_p32_hardware_file_chips_are_merged_at_once_not_row_by_row(tmp_path, monkeypatch):
    """Growing the catalog a chip at a time copied the whole table per chip (4,000 chips:
    75 s). The work counted here, rows passed through pandas' concat, is a few times the
    chips, not their square."""
    import pandas.core.reshape.concat as concat_module

    chips = 300
    path = tmp_path / "many.csv"
    path.write_text(
        "name,peak_bf16,hbm_bandwidth\n"
        + "".join(f"chip{i},{1e14 + i},1e12\n" for i in range(chips))
    )
    real = concat_module.concat
    rows = []

    def counting(objs, *args, **kwargs):
        objs = list(objs.values()) if isinstance(objs, dict) else list(objs)
        rows.append(sum(len(o) for o in objs))
        return real(objs, *args, **kwargs)

    monkeypatch.setattr(concat_module, "concat", counting)
    monkeypatch.setattr(pd, "concat", counting)
    catalog = pipeline.load_hardware(path)
    total = len(catalog.chips)
    assert total == chips + len(pipeline.catalog())
    assert catalog.chips.loc["chip299", "peak_bf16"] == 1e14 + 299
    assert sum(rows) <= 3 * total, f"{sum(rows):,} rows concatenated for {total} chips"


# P34: `template --hardware FILE` warns as `run` does


def test_p34_template_prints_the_warnings_run_prints_for_a_hardware_file(tmp_path):
    hw = tmp_path / "mine.csv"
    hw.write_text("name,peak_fp8\nv5e,2e14\n")  # no fp8 units on a v5e: a trap
    plan = tmp_path / "plan.csv"
    plan.write_text("name,op,B,D,F,hardware\nmm,matmul,8,8,8,h100\n")
    run = invoke("validate", plan, "--hardware", hw)
    said = [line for line in run.stderr.splitlines() if line.startswith("warning:")]
    assert said and "no fp8 units" in said[0]
    result = invoke("template", tmp_path / "t.xlsx", "--hardware", hw)
    assert result.exit_code == 0, result.output
    assert [line for line in result.stderr.splitlines() if line.startswith("warning:")] == said


# P35: write_template checks its arguments as analyze() does


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"force": "yes"}, "force must be True or False, not 'yes' (str)"),
        ({"force": 1}, "force must be True or False, not 1 (int)"),
    ],
)
def test_p35_write_template_refuses_a_force_that_is_not_a_bool(tmp_path, kwargs, message):
    path = tmp_path / "plan.xlsx"
    path.write_bytes(b"mine")
    with pytest.raises(TypeError) as caught:
        pipeline.write_template(path, **kwargs)
    assert str(caught.value) == message
    assert path.read_bytes() == b"mine"


# P37: an empty PATH is named as such


def test_p37_template_names_an_empty_path_as_empty(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = invoke("template", "")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == (
        "Error: Invalid value for '[PATH]': '' is empty; name the workbook, e.g. scenarios.xlsx"
    )
    with pytest.raises(OutputError) as caught:
        pipeline.write_template("")
    assert str(caught.value) == "'' is an empty path; name the workbook, e.g. scenarios.xlsx"
    assert list(tmp_path.iterdir()) == []
