"""Round four of the hostile probe (issue 39), the `group` column: a group's rows run on one
chip (a group across chips was summed and labelled as its first row's chip), and its rows'
sweeps are compared by the values they expand to, not by their spelling (`1..4` and
`1|2|3|4` were refused, with a message saying both sweep "B over 4 values (1 to 4)")."""

from __future__ import annotations

import io

import pandas as pd
import pytest

import pipeline
from pipeline.catalogs.hardware import load_catalog
from pipeline.scenarios import load_scenarios
from tests.helpers import write_scenarios

HEAD = "name,op,hardware,B,D,F,group\n"


def analyzed(body: str) -> pipeline.Analysis:
    return pipeline.analyze(pd.read_csv(io.StringIO(HEAD + body), dtype=str, keep_default_na=False))


def problems(body: str) -> list[tuple[int, str, str, str]]:
    return [(p.line, p.name, p.column, p.reason) for p in analyzed(body).problem_list]


def test_a_group_whose_rows_run_on_different_chips_is_refused_naming_them():
    got = problems(
        "up,matmul,h100,8,4096,14336,mlp\n"
        "down,matmul,b200,8,14336,4096,mlp\n"
        "act,matmul,b200,8,4096,4096,mlp\n"
        "other,matmul,b200,8,64,64,\n"
    )
    said = (
        "group 'mlp' runs on h100 (line 2) and b200 (lines 3, 4): a group's rows run on one "
        "chip (its total is one chip's time, labelled with it): write one group per chip"
    )
    assert got == [
        (2, "up", "hardware", said),
        (3, "down", "hardware", said),
        (4, "act", "hardware", said),
    ]


def test_a_group_on_one_chip_named_by_its_alias_is_taken():
    chips = load_catalog().chips
    alias = str(chips.at["h100", "aliases"]).split(";")[0]  # h100-sxm
    a = analyzed(f"up,matmul,h100,8,4096,14336,mlp\ndown,matmul,{alias},8,14336,4096,mlp\n")
    assert not a.problem_list
    assert a.results["name"].tolist() == ["mlp", "up", "down"]
    assert set(a.results["hardware"].astype(str)) == {"h100"}


@pytest.mark.parametrize(
    ("first", "second"),
    [("1..4", "1|2|3|4"), ("1|2|3|4", "1..4"), ("1..8*2", "1|2|4|8"), ("1..10*2", "1..8*2"),
     ("8|64", "8|64")],
)  # fmt: skip
def test_a_groups_rows_sweeping_the_same_values_spelled_otherwise_are_summed(first, second):
    a = analyzed(
        f"up,matmul,h100,{first},4096,14336,mlp\ndown,matmul,h100,{second},14336,4096,mlp\n"
    )
    assert not a.problem_list, [str(p) for p in a.problem_list]
    results = a.results.assign(B=a.results["B"].astype(float))
    totals = results[results["op"].astype(str) == "group"].set_index("B")["t_lower"]
    assert len(totals) == len(pipeline.analyze(write_free(first)).results)  # a total a point
    summed = results[results["op"].astype(str) != "group"].groupby("B")["t_lower"].sum()
    assert totals.to_dict() == pytest.approx(summed.to_dict())


def write_free(cell: str) -> pd.DataFrame:
    """One ungrouped row sweeping `cell`: its points."""
    return pd.read_csv(io.StringIO(f"{HEAD}a,matmul,h100,{cell},64,64,\n"), dtype=str,
                       keep_default_na=False)  # fmt: skip


def test_a_groups_rows_sweeping_the_same_values_in_another_order_are_refused_saying_where():
    got = problems("up,matmul,h100,1..4,4096,14336,mlp\ndown,matmul,h100,1|3|2|4,14336,4096,mlp\n")
    assert got[1] == (
        3,
        "down",
        "group",
        "sweeps B over 4 values (1 to 4) as the first row of group 'mlp' (line 2) does, but "
        "its 2nd B is 3 where that row's is 2: a group's rows sweep the same columns over "
        "the same values, in the same order (its total sums them point by point)",
    )
    assert got[0][:3] == (2, "up", "group")  # refused with its group


def test_the_dask_check_takes_and_refuses_the_same_groups(tmp_path):
    """`run --engine dask` and `validate` check the rows unexpanded (planned): the same."""
    path = write_scenarios(
        tmp_path,
        HEAD + "up,matmul,h100,1..4,4096,14336,mlp\ndown,matmul,h100,1|2|3|4,14336,4096,mlp\n"
        "a,matmul,h100,8,64,64,k\nb,matmul,b200,8,64,64,k\n",
    )
    loaded = load_scenarios(path, load_catalog(), planned=True)
    assert [(p.line, p.column) for p in loaded.problems] == [(4, "hardware"), (5, "hardware")]
    assert loaded.planned.total == 8  # the group mlp's 2 rows × 4 (its totals: computed)
