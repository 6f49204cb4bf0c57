"""Issue 40, item 1 (render reads, never derives): on the Dask engine the report and the
workbook draw their rows from a sample, yet every series line's shape (its dims' range, a
custom op's FLOPs and bytes) is a whole-run fact, worded as the local engine words it. The
sample budget is lowered so a file of a few thousand scenarios is sampled."""

from __future__ import annotations

import functools
import html
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

ROWS = 1_200  # the rows, `512|1|4096` a list whose lowest value is not its first
BUDGET = 400  # scenarios in the Dask run's sample: a third of the rows kept
HEAD = "name,op,B,D,F,hardware,chips,flops,bytes"
FIRST = [
    "w,matmul,1..512,4096,64|8|1024,h100,,,",  # a sweep and a list, thinned by the sample
    "c,custom,,,,h100,,1e12,1e6",  # a custom op's size: left out of the sample
    "v,all_gather,,,,h100,8,,1e3|1e9|1e6",
]


def _scenarios(tmp_path):
    rows = [f"s{n},matmul,512|1|4096,{64 + n},4096,h100,,," for n in range(ROWS)]
    return write_scenarios(tmp_path, "\n".join([HEAD, *FIRST, *rows]) + "\n")


def _answer_shapes(folder) -> dict[str, str]:
    """The Answer sheet's series table as {series: shape}."""
    sheet = openpyxl.load_workbook(folder / "workbook.xlsx", read_only=True)["Answer"]
    rows = [list(r) for r in sheet.iter_rows(values_only=True)]
    at = next(i for i, r in enumerate(rows) if "shape" in r)
    column = rows[at].index("shape")
    shapes = {}
    for row in rows[at + 1 :]:
        if row[1] is None:  # past the table (a blank row, or "... and N more")
            return shapes
        shapes[row[0]] = row[column] or ""
    return shapes


def _report_shapes(folder) -> tuple[dict[str, str], dict[str, str]]:
    """The report's series table as {series: shape}, and each sweep's folded line as
    {series: its words} (without how many of its rows the table shows)."""
    page = (folder / "report.html").read_text(encoding="utf-8")
    table = re.findall(
        r'<td class="name">(.*?)</td><td class="hw">.*?</td><td>.*?</td><td class="nw"[^>]*>'
        r"(.*?)</td>",
        page,
    )
    sweeps = re.findall(r"<summary><strong>(.*?)</strong>(.*?)</summary>", page, flags=re.S)
    shown = re.compile(r" \([\d,]+ shown here\)")
    return (
        {html.unescape(s): html.unescape(shape) for s, shape in table},
        {html.unescape(s): shown.sub("", html.unescape(words)) for s, words in sweeps},
    )


def test_every_series_shape_is_the_whole_runs_on_both_engines(tmp_path, cluster, monkeypatch):
    from pipeline.engines.dask.run import run_dask

    monkeypatch.setattr(views, "sample_plan", functools.partial(sample_plan, budget=BUDGET))
    path = _scenarios(tmp_path)
    options = Options(plots=False)
    local = pipeline.analyze(path).write(tmp_path / "local", plots=False).folder
    got = run_dask(path, tmp_path / "dask", scheduler=cluster.scheduler_address,
                   partition_rows=1_000, options=options)  # fmt: skip
    assert got.record.sampled and len(got.record.results) < got.scenarios  # a sample indeed
    want = _answer_shapes(local)
    assert len(want) == 50  # the first 50 series
    assert want["w"] == "B=1..512 D=4096 F=8..1024"
    assert want["c"] == "1.00 TFLOP, 1.00 MB"
    assert want["v"] == "V = 1.00 kB – 1.00 GB"
    assert [want[f"s{n}"] for n in range(47)] == [f"B=1..4096 D={64 + n} F=4096" for n in range(47)]
    assert _answer_shapes(got.folder) == want
    table, sweeps = _report_shapes(local)
    assert table == want
    dask_table, dask_sweeps = _report_shapes(got.folder)
    assert dask_table == want
    both = set(dask_sweeps) & set(sweeps)  # the sample's sweeps the local table shows too
    assert "w" in both and len(both) > 40
    assert {s: dask_sweeps[s] for s in both} == {s: sweeps[s] for s in both}
    assert "B=1..512 D=4096 F=8..1024" in dask_sweeps["w"]


def test_a_chip_whose_rows_the_sample_leaves_out_still_has_its_section(
    tmp_path, cluster, monkeypatch
):
    """Found writing the test above: a chip used only on rows the Dask sample left out made
    the report's write fail (KeyError on the chip) after every partition had run."""
    from pipeline.engines.dask.run import run_dask

    monkeypatch.setattr(views, "sample_plan", functools.partial(sample_plan, budget=BUDGET))
    rows = [f"s{n},matmul,512|1|4096,{64 + n},4096,h100,,," for n in range(ROWS)]
    lone = "c,custom,,,,h100|h200,,1e12,1e6"  # its h200 point: left out of the sample
    path = write_scenarios(tmp_path, "\n".join([HEAD, lone, *rows]) + "\n")
    got = run_dask(path, tmp_path / "dask", scheduler=cluster.scheduler_address,
                   partition_rows=1_000, options=Options(plots=False))  # fmt: skip
    assert got.record.sampled
    assert "h200" not in set(got.record.results["hardware"].astype(str))  # left out indeed
    page = (got.folder / "report.html").read_text(encoding="utf-8")
    assert 'id="hw-h200"' in page or ">h200<" in page


def _used_rates(folder, chip: str) -> list[str]:
    """The rates (peak dtypes, links) the report's hardware section of `chip` marks used."""
    page = (folder / "report.html").read_text(encoding="utf-8")
    start = re.search(rf'id="hw-\d+-{chip}"', page).start()
    end = page.find('id="hw-', start + 1)
    section = page[start : end if end > 0 else len(page)]
    return re.findall(r'<tr class="used"[^>]*><td>([\w.-]+)', section)


def test_the_rates_a_chip_uses_are_the_whole_runs_on_both_engines(tmp_path, cluster, monkeypatch):
    """Its fp8 rows and its one collective (over NVLink) only in rows the sample leaves out:
    the Dask report still marks fp8 and NVLink used, as the local engine's does."""
    from pipeline.engines.dask.run import run_dask

    monkeypatch.setattr(views, "sample_plan", functools.partial(sample_plan, budget=BUDGET))
    head = "name,op,B,D,F,hardware,chips,bytes,dtype"
    first = [  # the sample keeps every third source row from the first: these two not
        "a,matmul,512,64,4096,h100,,,",
        "f,matmul,1..64,4096,4096,h100,,,fp8",
        "v,all_gather,,,,h100,8,1e3|1e9|1e6,",
    ]
    rows = [f"s{n},matmul,512|1|4096,{64 + n},4096,h100,,," for n in range(ROWS)]
    path = write_scenarios(tmp_path, "\n".join([head, *first, *rows]) + "\n")
    local = pipeline.analyze(path).write(tmp_path / "local", plots=False).folder
    got = run_dask(path, tmp_path / "dask", scheduler=cluster.scheduler_address,
                   partition_rows=1_000, options=Options(plots=False))  # fmt: skip
    sample = got.record.results
    assert got.record.sampled
    assert "fp8" not in set(sample["compute_dtype"].astype(str))  # left out indeed
    assert not (sample["collective"].astype(str) != "").any()
    want = _used_rates(local, "h100")
    assert "fp8" in want and "nvlink" in want and "bf16" in want
    assert _used_rates(got.folder, "h100") == want


STEPS = 600  # a decode sweep of 600 steps (B = 1..600): 15 op rows each, about 10,000 rows
WIDE = 2_000  # a D sweep split over 8 chips: idle below D = 8, cut by partitions


def _models_section(page: str) -> str:
    """The report's Models table and what it says of the steps it leaves out."""
    start = page.index('id="models"')
    return page[start : page.index("</table>", start)] + re.search(
        r'<p class="more">.*?</p>', page[start:], flags=re.S
    ).group(0)


def _models_table(page: str) -> str:
    """The notebook repr's Models table (the first table, before the series)."""
    return re.search(r"<table.*?</table>", page, flags=re.S).group(0)


def _sheet_text(folder, name: str) -> list[tuple]:
    """A workbook sheet's cells, row by row."""
    sheet = openpyxl.load_workbook(folder / "workbook.xlsx", read_only=True)[name]
    return [tuple(r) for r in sheet.iter_rows(values_only=True)]


def test_steps_top_ops_and_idle_chips_are_the_whole_runs_on_both_engines(
    tmp_path, cluster, monkeypatch
):
    """A sweep of steps and a split dim, both larger than the Dask sample and cut by its
    partitions: the Models table (report, workbook, notebook: the 50 slowest steps and each
    fleet point's best, each one's top op, how many steps in all) and the idle-chip warnings (its rows counted over every
    partition) are the local engine's, as is summary.json."""
    from pipeline.engines.dask.run import run_dask

    monkeypatch.setattr(views, "sample_plan", functools.partial(sample_plan, budget=BUDGET))
    head = "name,op,model,hardware,chips,shard,B,T,S,D,F"
    rows = [
        f"dec,transformer,llama3-8b,h100,,,1..{STEPS},1,2048,,",
        f"split,matmul,,h100,8,D,64,,,1..{WIDE},4096",
        "fleet,matmul,,h100,1|8,D,64,,,4|4096,4096",
    ]
    path = write_scenarios(tmp_path, "\n".join([head, *rows]) + "\n")
    analysis = pipeline.analyze(path)
    local = analysis.write(tmp_path / "local", plots=False).folder
    got = run_dask(path, tmp_path / "dask", scheduler=cluster.scheduler_address,
                   partition_rows=1_000, options=Options(plots=False))  # fmt: skip
    assert got.partitions == 3 and got.record.sampled
    shown = set(got.record.results["name"].astype(str))
    slowest = {f"dec[B={b}]" for b in range(STEPS - 49, STEPS + 1)}
    assert not slowest <= shown  # some of the 50 slowest left out of the sample
    idle = [w for w in analysis.warnings if "hold nothing" in w]
    assert idle == [
        f"{path}:3: column chips: 8 chips split D, which is below 8 in 7 of this row's "
        f"{WIDE:,} scenarios (D = 1 to 7): some chips hold nothing there",
        f"{path}:4: column chips: 8 chips split D, which is below 8 in 1 of this row's 4 "
        "scenarios (D = 4): some chips hold nothing there",
    ]
    assert got.record.warnings == analysis.warnings
    assert got.warnings == analysis.warnings
    want = _models_section((local / "report.html").read_text(encoding="utf-8"))
    assert "dec[<wbr>B=600]" in want and "The 50 slowest of 600 steps" in want
    page = (got.folder / "report.html").read_text(encoding="utf-8")
    rows_in = got.record.rows_in  # where every row is: the one difference the engines say
    assert _models_section(page.replace(rows_in, "results.csv")) == want
    sheet = [tuple(str(c).replace(rows_in, "results.csv") for c in r)
             for r in _sheet_text(got.folder, "Models")]  # fmt: skip
    assert sheet == [tuple(str(c) for c in r) for r in _sheet_text(local, "Models")]
    notebook = _models_table(analysis._repr_html_())
    assert "dec[B=600]" in notebook
    assert _models_table(render_analysis_html(got.record)) == notebook
    assert (got.folder / "summary.json").read_text() == (local / "summary.json").read_text()
