"""Round four of the hostile probe (issue 39), fleet rows past the small cases: a row whose
chips × links pass 127 pairs (every chip of the catalog and a dozen of the user's, listed in
one `hardware` cell) is checked and run, its reach warnings naming the right chip and link
(the pairs were int8 codes, which wrapped)."""

from __future__ import annotations

import re

import pytest

import pipeline
from pipeline.catalogs.hardware import load_catalog
from pipeline.scenarios import load_scenarios
from pipeline.scenarios.reach import REACH_WARNINGS
from tests.helpers import with_chip, write_scenarios

LIKE = ["h100", "tpu-v5e", "mi300x", "gaudi3", "h200", "tpu-v5p"] * 2  # a dozen user chips


@pytest.fixture(scope="module")
def catalog():
    """The catalog and 12 chips of the user's, each a copy of one of LIKE."""
    got = load_catalog()
    for i, like in enumerate(LIKE):
        got = with_chip(got, f"user{i}", like=like)
    return got


def fleet_file(tmp_path, catalog):
    every = "|".join(catalog.chips.index)  # the whole catalog (pipeline hardware), and user's
    assert len(catalog.chips) * 4 > 127  # pairs of chip and link (4 default links) past int8
    text = (
        "name,op,hardware,B,D,F,chips,shard\n"
        f"q,matmul,{every},64,4096,4096,4096,D\n"  # sharded on D, which it contracts
    )
    return write_scenarios(tmp_path, text)


def test_a_fleet_row_of_more_than_127_chip_and_link_pairs_runs(tmp_path, catalog):
    path = fleet_file(tmp_path, catalog)
    analysis = pipeline.analyze(path, hardware=catalog)
    assert not analysis.problem_list
    assert len(analysis.results) == len(catalog.chips)
    reach = [w for w in analysis.warnings if "which reaches" in w]
    # each warning names a chip with its own link and that link's reach (no wrapped pair)
    named = [re.search(r"over (\w+), which reaches ([\d,]+) chips on ([\w-]+):", w) for w in reach]
    assert len(named) == REACH_WARNINGS and all(named), reach
    for link, reaches, chip in (m.groups() for m in named):
        assert link == catalog.chips.at[chip, "default_link"], (chip, link)
        assert int(reaches.replace(",", "")) == catalog.chips.at[chip, f"{link}_reach"]
    assert {m[3] for m in named} & {f"user{i}" for i in range(len(LIKE))}  # theirs too
    assert any(w.endswith("more scenarios on line 2 ask a link for more chips than it reaches")
               for w in analysis.warnings)  # fmt: skip
    # and the run writes its folder (the checks and the computation agree)
    assert analysis.write(tmp_path / "out" / "fleet", plots=False, workbook=False).folder


def test_validate_and_the_dask_check_take_the_same_row(tmp_path, catalog):
    """`pipeline validate` and `run --engine dask` check the row unexpanded (planned)."""
    path = fleet_file(tmp_path, catalog)
    loaded = load_scenarios(path, catalog, planned=True)
    assert not loaded.problems
    assert loaded.planned.total == len(catalog.chips)
    assert any("over nvlink, which reaches 8 chips on user0:" in w for w in loaded.warnings)
