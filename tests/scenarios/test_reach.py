"""scenarios/reach.py: a row asking a link for more chips than it reaches is warned, with a
link of that chip that reaches them."""

from __future__ import annotations

import pytest

from pipeline.catalogs.hardware import load_catalog
from pipeline.scenarios.reach import REACH_WARNINGS
from tests.helpers import load_text


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def test_1024_chips_over_nvlink_is_warned_with_a_link_that_reaches(tmp_path, catalog):
    loaded = load_text(
        tmp_path,
        catalog,
        """
name,op,hardware,chips,shard,bytes,B,D,F
ag,all_gather,h100,1024,,1e9,,,
in_node,all_gather,h100,8,,1e9,,,
dp,matmul,h100,1024,B,,4096,8192,8192
""",
    )
    path = tmp_path / "s.csv"
    assert list(loaded.warnings) == [
        f"{path}:2: column chips: 1,024 chips over nvlink, which reaches 8 chips on h100: the "
        "time assumes one nvlink domain joins them all. link = dcn reaches them; or model two "
        "levels: nvlink within each group of 8 chips and dcn across the groups"
    ]  # in_node fits; dp splits B, which it does not contract: nothing crosses the link


def test_a_chips_sweep_is_warned_once_for_its_points_past_the_reach(tmp_path, catalog):
    loaded = load_text(
        tmp_path,
        catalog,
        """
name,op,hardware,chips,shard,B,D,F
tp,matmul,tpu-v5e,64|256|512|1024,D,128,8192,8192
""",
    )
    assert len(loaded.warnings) == 1
    assert "from 512 chips in 2 of 4 scenarios over ici, which reaches 256 chips " \
        "on tpu-v5e" in loaded.warnings[0]  # fmt: skip


def test_a_link_without_a_reach_never_warns_and_many_rows_are_cut(tmp_path, catalog):
    rows = "".join(f"r{i},all_gather,h100,100000,dcn,1e9\n" for i in range(3))
    rows += "".join(f"n{i},all_gather,b200,16,,1e9\n" for i in range(REACH_WARNINGS + 2))
    loaded = load_text(tmp_path, catalog, "name,op,hardware,chips,link,bytes\n" + rows)
    assert len(loaded.warnings) == REACH_WARNINGS + 1
    assert all("b200" in w for w in loaded.warnings[:-1])
    assert loaded.warnings[-1].endswith("and 2 more scenarios on lines 25, 26 ask a link for "
                                        "more chips than it reaches")  # fmt: skip


def test_a_planned_row_counts_the_scenarios_its_sweep_makes(tmp_path, catalog):
    """The Dask client warns from rows not expanded: each weighs its sweep's scenarios, so
    the warning reads as the local engine's."""
    text = "\nname,op,hardware,chips,bytes\nr,all_gather,h100,2|16,1000..1000000000*10\n"
    local = load_text(tmp_path, catalog, text).warnings
    planned = load_text(tmp_path, catalog, text, planned=True).warnings
    assert planned == local and "from 16 chips in 7 of 14 scenarios" in local[0]


def test_the_line_after_the_named_warnings_counts_scenarios_and_lines(tmp_path, catalog):
    rows = "".join(f"n{i},all_gather,b200,16|32,,1e9\n" for i in range(REACH_WARNINGS + 7))
    loaded = load_text(tmp_path, catalog, "name,op,hardware,chips,link,bytes\n" + rows)
    assert loaded.warnings[-1].endswith(": and 14 more scenarios on 7 lines (22, 23, 24, 25, 26, "
                                        "...) ask a link for more chips than it reaches")  # fmt: skip


def test_a_row_without_an_einsum_is_not_taken_for_the_contracting_row_before_it():
    """A blank einsum in a categorical column does not borrow another row's answer (the
    pairs of einsum and shard are worded from their codes, a missing one as 'nan')."""
    import pandas as pd

    from pipeline.scenarios.reach import _communicates

    rows = pd.DataFrame(
        {
            "op": pd.Categorical(["matmul", "matmul", "all_gather"]),
            "einsum": pd.Categorical(["BD,DF->BF", None, None]),
            "shard": pd.Categorical(["D", "D", ""]),
            "chips": [1024, 1024, 1024],
        }
    )
    assert _communicates(rows).tolist() == [True, False, True]
