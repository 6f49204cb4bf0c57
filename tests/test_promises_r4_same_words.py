"""Issue 40, "Done means": with sweeps and fleet lists larger than the Dask engine's sample,
every text the report, the workbook's Answer, Models, Fleet and Summary sheets, the notebook
repr and summary.json show is the local engine's, word for word. What may differ is said
here, and only that: the run's start time, where the scenarios are (results.csv against
results/part-*.parquet), the Dask engine's notice that tables show a sample, and the report's
per-scenario tables, which are that sample."""

from __future__ import annotations

import difflib
import functools
import html
import json
import re

import openpyxl
import pytest

import pipeline
from pipeline.engines.dask import views
from pipeline.engines.dask.sample import sample_plan
from pipeline.render.report.notebook import render_analysis_html
from pipeline.run.write import Options
from tests.helpers import write_scenarios

pytest.importorskip("distributed")

HEAD = "name,op,B,D,F,hardware,dtype,chips,shard,flops,bytes,model,T,S"
MIXED = [
    "fl,matmul,1..4096*2,8192,28672,h100|b200|mi300x,bf16|fp8,,,,,,,",  # a fleet list
    "tp,matmul,4096,8192,28672,h100,bf16,1|2|4|8|16,D,,,,,",  # a chip-count list
    "c,custom,,,,h100,,,,1e12,1e6,,,",
    "step,transformer,1..64,,,h100|b200,bf16,,,,,llama-3-8b,1,4096",  # steps over two chips
]
SHEETS = ("Answer", "Models", "Fleet", "Summary")
# where the scenarios are, in each engine's words
WHERE = re.compile(
    r"every scenario is on the Results sheet \(filter its series column\)|"
    r"summary\.json lists every series, results/part-\*\.parquet holds every scenario|"
    r"results/part-\*\.parquet|results\.csv"
)
STAMP = re.compile(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\+00:00| UTC)")


def _said(text) -> str | None:
    if not isinstance(text, str):
        return text
    return STAMP.sub("<time>", WHERE.sub("<where>", text))


TABLE_CAP = re.compile(r"The \S+ table shows ")  # of the per-scenario tables: the sample's


def _dask_notice(text) -> bool:
    return isinstance(text, str) and (
        text.startswith("Computed by the Dask engine")
        or TABLE_CAP.match(text) is not None
        or text.startswith("Results: ")  # every scenario, or a sample of them
        or text.startswith("See the Summary sheet: ")  # how many notices: one more on Dask
    )


def _sheet(folder, name: str, book=None) -> list[tuple]:
    """A sheet's cells row by row, the Dask engine's notices left out (with their heading
    and the blank row before it when they are the only notices)."""
    book = book or openpyxl.load_workbook(folder / "workbook.xlsx", read_only=True)
    rows = [tuple(_said(v) for v in r) for r in book[name].iter_rows(values_only=True)]
    if ("Notices",) == rows[-2][:1] and _dask_notice(rows[-1][0]) if len(rows) > 2 else False:
        rows = rows[:-3]
    for at, row in enumerate(rows[:-2]):
        if row[0] == "Notices" and _dask_notice(rows[at + 1][0]) and not any(rows[at + 2]):
            rows = rows[: at - 1] + rows[at + 2 :]
            break
    return [r for r in rows if not _dask_notice(r[0])]


def _report(folder) -> list[str]:
    """The report's words, a line per element text, up to its per-scenario tables."""
    page = (folder / "report.html").read_text(encoding="utf-8")
    page = re.sub(r"<style.*?</style>|<script.*?</script>", "", page, flags=re.S)
    lines = [html.unescape(t).strip() for t in re.sub(r"<[^>]+>", "\n", page).splitlines()]
    lines = [_said(t) for t in lines if t and not _dask_notice(t)]
    return lines[: lines.index("Scenarios")] if "Scenarios" in lines else lines


def _runs(tmp_path, cluster, text: str, partition_rows: int = 5_000):
    from pipeline.engines.dask.run import run_dask

    path = write_scenarios(tmp_path, text, name="fleet.csv")
    local = pipeline.analyze(path)
    folder = local.write(tmp_path / "local" / "fleet", plots=False).folder
    got = run_dask(path, tmp_path / "dask", scheduler=cluster.scheduler_address,
                   partition_rows=partition_rows, options=Options(plots=False))  # fmt: skip
    assert got.record.sampled and len(got.record.results) < got.scenarios  # a sample indeed
    return local, folder, got


def _same_words(local, folder, got):
    mine, theirs = (
        openpyxl.load_workbook(f / "workbook.xlsx", read_only=True) for f in (folder, got.folder)
    )
    for name in SHEETS:
        if name in mine.sheetnames:
            assert _sheet(None, name, theirs) == _sheet(None, name, mine), name
    assert json.loads((got.folder / "summary.json").read_text(encoding="utf-8")) == json.loads(
        (folder / "summary.json").read_text(encoding="utf-8")
    )
    assert render_analysis_html(got.record) == render_analysis_html(local)
    mine, theirs = _report(folder), _report(got.folder)
    assert len(mine) > 500 and theirs == mine, _debug(mine, theirs)


def test_a_fleet_file_past_the_sample_says_the_same_on_both_engines(tmp_path, cluster, monkeypatch):
    monkeypatch.setattr(views, "sample_plan", functools.partial(sample_plan, budget=400))
    rows = [f"s{n},matmul,512|1|4096,{64 + n},4096,h100,,,,,,,," for n in range(1_200)]
    local, folder, got = _runs(tmp_path, cluster, "\n".join([HEAD, *MIXED, *rows]) + "\n")
    assert len(_sheet(folder, "Fleet")) > 10 and len(_sheet(folder, "Models")) > 50
    _same_words(local, folder, got)


def test_the_issues_60000_scenarios_say_the_same_on_both_engines(tmp_path, cluster):
    """The issue's case at the real sample budget: rows of `512|1|4096`, 60,000 scenarios
    (past the 50,000 the sample holds); B=1..4096 on every series, never 512..4096."""
    rows = [f"s{n},matmul,512|1|4096,{64 + n},4096,h100,,,,,,,," for n in range(20_000)]
    local, folder, got = _runs(tmp_path, cluster, "\n".join([HEAD, *rows]) + "\n", 30_000)
    answer = _sheet(folder, "Answer")
    assert ("s0", "h100") == answer[next(i for i, r in enumerate(answer) if "shape" in r) + 1][:2]
    assert any("B=1..4096 D=64 F=4096" in r for r in answer)
    _same_words(local, folder, got)


def _debug(a, b):
    return "\n".join(difflib.unified_diff(a, b, lineterm="", n=1))
