"""The report's tables below the answer (pipeline/render/report_tables.py): a chip's shown rows
grouped by series, single rows plainly and each sweep under its own line."""

from __future__ import annotations

import numpy as np

from pipeline.render import answer
from pipeline.render.report_tables import records, scenario_blocks
from tests.helpers import ROOT, analyze_file


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
