"""The report's tables below the answer (pipeline/render/report/tables.py): a chip's shown rows
grouped by series, single rows plainly and each sweep under its own line."""

from __future__ import annotations

import numpy as np

from pipeline.render.report.tables import chip_series, records, scenario_blocks
from pipeline.render.text import answer
from tests.helpers import ROOT, analyze_file, analyze_rows


def _chip_rows(analysis, chip: str) -> np.ndarray:
    return np.flatnonzero((analysis.results["hardware"] == chip).to_numpy())


def test_single_rows_are_one_table_and_each_sweep_a_block_of_its_own(book):
    (blocks,) = scenario_blocks(book, [_chip_rows(book, "tpu-v5e")])
    kinds = [(b["sweep"], b.get("series"), len(b["rows"])) for b in blocks]
    assert kinds == [(False, None, 7), (True, "q3_D4096", 512), (True, "q3_D1024", 512),
                     (False, None, 1)]  # fmt: skip
    q3 = blocks[1]
    line = book.summary.lines.loc["q3_D4096"]
    assert q3["time"] == answer.time_text(line["t_min"], line["t_max"]) == "20.5 µs – 87.2 µs"
    assert q3["bound"] == "mixed"
    assert q3["bound_text"] == "memory below B = 137, compute from B = 137"
    assert q3["shape"] == "B=1..512 D=4096 F=4096"
    assert (q3["scenarios"], q3["shown"]) == (512, 512)
    assert [r["name"] for r in q3["rows"][:2]] == ["q3_D4096[B=1]", "q3_D4096[B=2]"]
    assert all(b["math"] for b in blocks)
    assert [r["name"] for r in blocks[0]["rows"]][:2] == ["v5e_critical_intensity", "dot_product"]


def test_the_table_cap_cuts_a_sweep_and_says_how_much_is_shown(book):
    rows = _chip_rows(book, "tpu-v5e")
    capped, h100, empty = scenario_blocks(book, [rows[:500], _chip_rows(book, "h100"), rows[:0]])
    assert [b.get("series") for b in capped] == [None, "q3_D4096"]
    assert (capped[-1]["scenarios"], capped[-1]["shown"]) == (512, 493)
    assert [len(b["rows"]) for b in h100] == [2] and not h100[0]["sweep"]
    assert empty == []


def test_collectives_have_no_intensity_columns_and_their_size_as_shape():
    analysis = analyze_file(ROOT / "scenarios" / "collectives.csv")
    (blocks,) = scenario_blocks(analysis, [_chip_rows(analysis, "tpu-v5e")])
    assert not any(b["math"] for b in blocks)
    sweeps = [b for b in blocks if b["sweep"]]
    assert [b["shape"] for b in sweeps] == ["V = 1.00 kB – 1.00 GB"] * 2
    assert [b["bound_text"] for b in sweeps] == ["network", "network"]
    first = blocks[0]["rows"][0]
    assert first["volume"] == 2e9 and first["intensity"] is None


def test_records_are_plain_values(book):
    plain = records(book.summary.lines.head(2))
    assert all(v is None or isinstance(v, str | int | float) for r in plain for v in r.values())


def test_a_sweep_charts_table_gives_each_chip_its_own_line_of_a_fleet_series():
    rows = [{"name": "f", "op": "matmul", "B": "1|64|4096", "D": 8192, "F": 8192,
             "dtype": "bf16|fp8", "hardware": "h100|b200"}]  # fmt: skip
    a = analyze_rows(rows)
    got = chip_series(a, [("h100", "f"), ("b200", "f"), ("b200", "nope")])
    assert set(got) == {("h100", "f"), ("b200", "f")}
    for hw, line in ((k[0], v) for k, v in got.items()):
        mine = a.results[a.results["hardware"].astype(str) == hw]
        assert (line["hardware"], line["rows"], line["dtype"]) == (hw, 6, "bf16|fp8")
        assert line["t_min"] == mine["t_lower"].min() and line["t_max"] == mine["t_lower"].max()
        assert line["compute"] + line["memory"] == 6 and not line["collective"]
        assert line["knee_min"] is None
    assert got[("h100", "f")]["t_max"] != got[("b200", "f")]["t_max"]


def test_a_collective_sweep_line_gives_its_latency_knee(mix):
    charts = [("tpu-v5e", s) for s in mix.summary.lines.index]
    got = chip_series(mix, charts)
    knees = {s: (v["knee_min"], v["knee_chip_min"]) for (_, s), v in got.items() if v["collective"]}
    assert knees and all(k == (720e3, 45e3) for k in knees.values()), knees


def test_a_sweep_tables_lines_are_the_whole_runs_on_the_dask_engine(tmp_path, cluster, monkeypatch):
    """A fleet sweep larger than the Dask sample: each chip's line (its rows, time range,
    bound counts, dtypes, a collective's knee) counts every row of the run, as the local
    engine's does, not the sample's few."""
    import functools

    import pipeline
    from pipeline.engines.dask import views
    from pipeline.engines.dask.run import run_dask
    from pipeline.engines.dask.sample import sample_plan
    from pipeline.run.write import Options
    from tests.helpers import write_scenarios

    monkeypatch.setattr(views, "sample_plan", functools.partial(sample_plan, budget=100))
    path = write_scenarios(tmp_path, "name,op,B,D,F,bytes,hardware,dtype,chips\n"
                           "f,matmul,1..600,8192,8192,,h100|b200,bf16|fp8,\n"
                           "v,all_gather,,,,1000..1000000000*10,tpu-v5e,,8|16\n")  # fmt: skip
    pairs = [("h100", "f"), ("b200", "f"), ("tpu-v5e", "v")]
    local = pipeline.analyze(path)
    got = run_dask(path, tmp_path / "dask", scheduler=cluster.scheduler_address,
                   partition_rows=1_000, options=Options(plots=False))  # fmt: skip
    assert got.record.sampled and len(got.record.results) < 300  # a sample indeed
    want = chip_series(local, pairs)
    assert want[("h100", "f")]["rows"] == 1_200 and want[("tpu-v5e", "v")]["rows"] == 14
    assert chip_series(got.record, pairs) == want
