"""The Python API: analyze() on a path, a DataFrame or a list of dicts; the immutable Analysis;
write() giving what `pipeline run` gives; catalog(); determinism across processes."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pandas as pd
import pytest

import pipeline
from pipeline.api.analyze import output_names
from pipeline.render.format import when
from tests.helpers import BOOK_SCENARIOS, HEAD, ROOT, write_scenarios, write_sheet

ROWS = [
    {"name": "mm", "op": "matmul", "B": 256, "D": 4096, "F": 4096, "hardware": "v5e"},
    {"name": "bad", "op": "matmul", "B": 1, "D": 2, "F": 3, "hardware": "h10"},
    {"name": "sweep", "op": "matmul", "B": "1|2|4", "D": 128, "F": 128, "hardware": "h100"},
]


def test_a_path_a_dataframe_and_a_list_of_dicts_give_the_same_results(tmp_path):
    frame = pd.DataFrame(ROWS)
    path = tmp_path / "rows.csv"
    frame.to_csv(path, index=False)
    by_path, by_frame, by_list = (pipeline.analyze(s) for s in (path, frame, ROWS))
    pd.testing.assert_frame_equal(by_frame.results, by_list.results)
    pd.testing.assert_frame_equal(by_path.results, by_frame.results)
    assert by_frame.problems.to_dict("records") == [
        {"line": 3, "name": "bad", "column": "hardware",
         "reason": "unknown hardware 'h10' (did you mean 'h100'?)"}
    ]  # fmt: skip
    assert str(by_frame.problem_list[0]) == (
        "rows:3: column hardware: unknown hardware 'h10' (did you mean 'h100'?)"
    )
    assert pipeline.analyze(ROWS, name="sheet").problem_list[0].file == "sheet"


def test_summary_and_notices(tmp_path):
    a = pipeline.analyze(ROWS + [{"name": "split", "op": "matmul", "B": 4, "D": 2, "F": 3,
                                  "hardware": "v5e", "chips": 8, "shard": "B"}])  # fmt: skip
    s = a.summary
    assert (s.scenarios, s.source_rows, s.rejected_rows) == (5, 4, 1)
    assert sum(s.bounds.values()) == 5
    assert list(s.per_hardware.index) == ["h100", "tpu-v5e"]
    assert "4 of the chips hold nothing" in a.warnings[0]


def test_strict_raises_with_every_problem():
    with pytest.raises(pipeline.InvalidScenarios) as err:
        pipeline.analyze(ROWS, strict=True)
    assert isinstance(err.value, pipeline.PipelineError)
    assert [p.line for p in err.value.problems] == [3]


def test_an_analysis_cannot_be_changed():
    a = pipeline.analyze(ROWS)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.source = "other"
    results = a.results
    results.loc[0, "t_lower"] = 1e9
    results["mine"] = 1
    assert a.results.loc[0, "t_lower"] < 1 and "mine" not in a.results.columns
    problems = a.problems
    problems.loc[0, "reason"] = "changed"
    assert a.problems.loc[0, "reason"] != "changed"


def test_bad_sources_and_limits_are_refused(tmp_path):
    with pytest.raises(pipeline.ScenarioFileError, match="no such file"):
        pipeline.analyze(tmp_path / "missing.csv")
    with pytest.raises(pipeline.ScenarioFileError, match="a pandas DataFrame or a list of dicts"):
        pipeline.analyze(42)
    with pytest.raises(pipeline.ScenarioFileError, match="no scenario rows"):
        pipeline.analyze(pd.DataFrame(columns=["name", "op", "hardware"]))
    with pytest.raises(ValueError, match="max_rows"):
        pipeline.analyze(ROWS, max_rows=0)


STEPS = [{"name": "dec", "op": "transformer", "model": "llama3-8b", "hardware": "h100|b200",
          "B": "1..40", "T": 1, "S": 1024}]  # fmt: skip


def test_models_rows_caps_the_models_table_and_is_checked():
    """The Models table lists the run's 50 slowest steps by default, `models_rows` of them when
    asked; the Summary counts them all (docs/outputs.md)."""
    default, more = pipeline.analyze(STEPS), pipeline.analyze(STEPS, models_rows=80)
    assert (len(default.summary.steps), default.summary.steps_total) == (50, 80)
    assert (len(more.summary.steps), more.summary.steps_total) == (80, 80)
    assert len(pipeline.analyze(STEPS, models_rows=2).summary.steps) == 2
    with pytest.raises(ValueError, match="models_rows must be 1 or more, not 0"):
        pipeline.analyze(STEPS, models_rows=0)
    with pytest.raises(TypeError, match="models_rows must be a whole number"):
        pipeline.analyze(STEPS, models_rows="all")


def test_catalog_lists_chips_with_sources_and_takes_extra_chips():
    chips = pipeline.catalog()
    assert {"tpu-v5e", "h100", "b200"} <= set(chips.index)
    assert chips.loc["tpu-v5e", "hbm_bandwidth"] == 8.2e11
    assert chips["source"].str.len().min() > 0 and chips["as_of"].str.len().min() > 0
    mine = pd.DataFrame({"name": ["mychip", "h100"], "peak_bf16": [5e14, None],
                         "hbm_bandwidth": [2e12, 3.0e12]})  # fmt: skip
    extended = pipeline.catalog(mine)
    assert extended.loc["mychip", "peak_bf16"] == 5e14
    assert extended.loc["h100", "hbm_bandwidth"] == 3.0e12
    a = pipeline.analyze([{"name": "x", "op": "matmul", "B": 1, "D": 2, "F": 3,
                           "hardware": "mychip"}], hardware=mine)  # fmt: skip
    assert a.results.loc[0, "peak_flops"] == 5e14


def test_write_gives_what_the_command_line_gives(tmp_path):
    from click.testing import CliRunner

    from pipeline.cli import cli

    written = pipeline.analyze(BOOK_SCENARIOS).write(tmp_path / "api" / "q1-q5")
    result = CliRunner().invoke(cli, ["run", str(BOOK_SCENARIOS), "-o", str(tmp_path / "cli")])
    assert result.exit_code == 0, result.output
    by_api = {p.relative_to(written.folder) for p in written.files}
    by_cli = {p.relative_to(tmp_path / "cli" / "q1-q5")
              for p in (tmp_path / "cli" / "q1-q5").rglob("*") if p.is_file()}  # fmt: skip
    assert by_api == by_cli
    for name in ("results.csv", "results.parquet", "plots/summary.png"):
        assert (written.folder / name).read_bytes() == (tmp_path / "cli/q1-q5" / name).read_bytes()


def _normalized_outputs(folder: Path, started: str) -> dict[str, bytes]:
    """Every output's bytes, with what is meant to differ between runs taken out: the start
    time (report, workbook), the workbook's creation time, the manifest's timings."""
    out = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        name = path.relative_to(folder).as_posix()
        data = path.read_bytes()
        if name == "manifest.json":
            manifest = json.loads(data)
            for key in ("started", "timings_seconds"):
                manifest.pop(key)
            for entry in manifest["files"]:
                entry.pop("mtime_ns")
                if entry["path"] in ("workbook.xlsx", "report.html"):
                    entry.pop("sha256")  # they hold the start time (compressed: any size)
                    entry.pop("bytes")
            data = json.dumps(manifest, sort_keys=True).encode()
        elif name == "workbook.xlsx":
            with zipfile.ZipFile(path) as z:
                parts = {n: z.read(n).replace(started.encode(), b"T") for n in z.namelist()
                         if n != "docProps/core.xml"}  # fmt: skip
            data = hashlib.sha256(repr(sorted(parts.items())).encode()).digest()
        for text in (started, when(started)):  # ISO, and as the report shows it
            data = data.replace(text.encode(), b"T")
        out[name] = data
    return out


def test_outputs_are_the_same_from_two_processes(tmp_path):
    folders = []
    for k in range(2):
        folder = tmp_path / str(k) / "q1-q5"
        subprocess.run(
            [sys.executable, "-m", "pipeline", "run", str(BOOK_SCENARIOS), "-o",
             str(folder.parent), "-q"],
            cwd=ROOT, check=True, env={"PYTHONHASHSEED": str(k + 1), "PATH": "/usr/bin:/bin"},
        )  # fmt: skip
        folders.append(folder)
    starts = [json.loads((f / "manifest.json").read_text())["started"] for f in folders]
    first = _normalized_outputs(folders[0], starts[0])
    second = _normalized_outputs(folders[1], starts[1])
    assert list(first) == list(second)
    for name in first:
        assert first[name] == second[name], name


def test_analyze_takes_a_workbook_sheet_and_a_csv_encoding(tmp_path):
    rows = [["name", "op", "B", "D", "F", "hardware"], ["a", "matmul", 8, 128, 128, "v5e"]]
    write_sheet(tmp_path / "s.xlsx", rows, "Mine", "Scenarios")
    assert pipeline.analyze(tmp_path / "s.xlsx", sheet="Mine").summary.scenarios == 1
    (tmp_path / "w.csv").write_bytes(
        "name,op,B,D,F,hardware\ncafé,matmul,8,128,128,v5e\n".encode("cp1252")
    )
    analysis = pipeline.analyze(tmp_path / "w.csv", encoding="cp1252")
    assert analysis.results["name"].tolist() == ["café"]
    with pytest.raises(ValueError, match="unknown encoding 'nope'"):
        pipeline.analyze(tmp_path / "w.csv", encoding="nope")


def test_chips_shows_units_and_keeps_si_values():
    table = pipeline.chips(["h100", "tpu-v6e"])
    assert isinstance(table, pipeline.ChipTable) and isinstance(table, pd.DataFrame)
    assert table.at["hbm_capacity", "h100"] == 80e9  # the data stays SI
    assert table.at["hbm_bandwidth", "h100"] == 3.35e12
    assert table.to_numpy()[3].tolist() == [3.35e12, 1.6e12]
    assert table.loc["hbm_bandwidth"].tolist() == [3.35e12, 1.6e12]
    text = repr(table)
    assert "HBM bandwidth (GB/s)" in text and "3,350" in text and "3350000000000" not in text
    assert text.splitlines()[0].split() == ["chip", "h100", "tpu-v6e"]
    html = table._repr_html_()
    assert "<th>HBM capacity (GB)</th>" in html and "<td>80.0</td>" in html
    assert "80000000000" not in html
    derived = table.loc[["hbm_bandwidth"]]  # numbers derived from it are a plain DataFrame
    assert type(derived) is pd.DataFrame and "3350000000000" in repr(derived)


def test_analysis_name_of_a_runs_own_workbook_is_its_runs(tmp_path):
    path = tmp_path / "q1.csv"
    path.write_text("name,op,B,D,F,hardware\nok,matmul,1,2,3,v5e\n")
    pipeline.analyze(path).write(tmp_path / "out" / "q1", plots=False, report=False)
    book = tmp_path / "out" / "q1" / "workbook.xlsx"
    assert pipeline.analyze(book).name == "q1-rerun"
    assert pipeline.analyze(path).name == "q1"


def test_keep_columns_carries_a_near_miss(tmp_path):
    rows = [
        {"name": "a", "op": "matmul", "B": 1, "D": 2, "F": 3, "hardware": "h100", "dtpye": "fp8"}
    ]
    with pytest.raises(pipeline.ScenarioFileError, match="column dtpye: unknown column"):
        pipeline.analyze(rows)
    assert pipeline.analyze(rows, keep_columns=["dtpye"]).results["dtpye"].tolist() == ["fp8"]
    assert pipeline.analyze(rows, keep_columns="dtpye").results["dtpye"].tolist() == ["fp8"]
    with pytest.raises(TypeError, match="keep_columns"):
        pipeline.analyze(rows, keep_columns=3)


def test_analyze_takes_models_for_transformer_rows():
    """models= adds models as pipeline.models() takes them (a frame here); their rows use it."""
    import pandas as pd

    tiny = pd.DataFrame([{"name": "tiny", "D": 512, "F": 2048, "N": 8, "K": 2, "H": 64, "L": 4,
                          "V": 1000, "source": "a test"}])  # fmt: skip
    row = {"name": "t", "op": "transformer", "model": "tiny", "hardware": "h100", "B": 4,
           "T": 1, "S": 128}  # fmt: skip
    assert [p.column for p in pipeline.analyze([row]).problem_list] == ["model"]
    a = pipeline.analyze([row], models=tiny)
    assert not a.problem_list
    assert a.results.set_index("name").loc["t/q_proj", "flops"] == 4 * 2 * 4 * 512 * 8 * 64


def test_output_names_are_unique_stems():
    """Inputs whose names meet each get `-` and 6 hex digits of their path's SHA-256 (the same
    whatever the order), unless one alone is already the folder name."""
    paths = [Path("a/s.csv"), Path("b/s.xlsx"), Path("S.csv"), Path("x/My Plan.xlsx")]
    assert output_names(paths) == ["s-352b3a", "s-781cc7", "s-175e53", "my-plan"]
    assert output_names([Path("S.csv"), Path("s.csv")]) == ["s-175e53", "s"]
    assert output_names([Path("s.csv"), Path("s.csv")]) == ["s", "s-2"]  # one path, twice


def test_output_names_name_a_runs_workbook_after_its_run(tmp_path):
    path = write_scenarios(tmp_path, f"{HEAD}\nok,matmul,1,2,3,v5e\n", name="q1.csv")
    pipeline.analyze(path).write(tmp_path / "out" / "q1", plots=False, report=False)
    book = tmp_path / "out" / "q1" / "workbook.xlsx"
    plan = tmp_path / "plan.xlsx"
    plan.write_bytes(book.read_bytes())  # renamed by its user: their name wins
    assert output_names([book, plan, book]) == ["q1-rerun", "plan", "q1-rerun-2"]
