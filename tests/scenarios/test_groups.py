"""scenarios/groups.py: the `group` column's rules, each problem said on its line, and a
group summed whole or not at all."""

from __future__ import annotations

import io

import pandas as pd

import pipeline

HEAD = "name,op,hardware,B,D,F,group,flops,bytes\n"


def problems(body: str) -> list[tuple[int, str, str, str]]:
    frame = pd.read_csv(io.StringIO(HEAD + body), dtype=str, keep_default_na=False)
    a = pipeline.analyze(frame)
    return [(p.line, p.name, p.column, p.reason) for p in a.problem_list]


def test_a_group_with_another_row_between_its_rows_is_refused_saying_where():
    got = problems(
        "a,matmul,h100,8,64,64,g,,\nx,matmul,h100,8,64,64,,,\nb,matmul,h100,8,64,64,g,,\n"
    )
    assert [(line, c) for line, _, c, _ in got] == [(2, "group"), (4, "group")]
    assert got[0][3] == (
        "group 'g' has rows on lines 2, 4 and other rows between them (line 3): a group's "
        "rows come one after another"
    )


def test_rows_of_one_group_sweep_the_same_values():
    got = problems("a,matmul,h100,8|64,64,64,g,,\nb,matmul,h100,8|128,64,64,g,,\n")
    assert got == [
        (2, "a", "group", "refused with its group 'g': its row on line 3 is refused, and a "
         "group is summed whole"),
        (3, "b", "group", "sweeps B over 2 values (8 to 128) but the first row of group 'g' "
         "(line 2) sweeps B over 2 values (8 to 64): a group's rows sweep the same columns "
         "over the same values (its total sums them point by point)"),
    ]  # fmt: skip


def test_a_refused_row_refuses_its_group_and_only_its_group():
    a = pipeline.analyze(
        pd.read_csv(
            io.StringIO(
                HEAD + "a,matmul,h10,8,64,64,g,,\nb,matmul,h100,8,64,64,g,,\n"
                "c,matmul,h100,8,64,64,k,,\nd,custom,h100,,,,k,1e9,1e6\n"
            ),
            dtype=str,
            keep_default_na=False,
        )
    )
    assert [(p.line, p.column) for p in a.problem_list] == [(2, "hardware"), (3, "group")]
    assert a.results["name"].tolist() == ["k", "c", "d"]


def test_a_group_name_that_is_a_rows_name_is_refused():
    got = problems("g,matmul,h100,8,64,64,,,\na,matmul,h100,8,64,64,g,,\n")
    assert got[0][:3] == (3, "a", "group")
    assert got[0][3].startswith("group 'g' is also a row's name")


def test_a_transformer_step_or_a_fleet_list_in_a_group_is_refused():
    got = problems("a,matmul,h100|b200,8,64,64,g,,\n")
    assert [r for *_, r in got] == [
        "a group's rows list no fleet (hardware, dtype or chips lists): write one group per "
        f"chip and precision (at 'a[hardware={chip}]')"
        for chip in ("h100", "b200")
    ]
    a = pipeline.analyze([{"name": "s", "op": "transformer", "model": "llama3-8b",
                           "hardware": "h100", "B": 1, "T": 1, "S": 128, "group": "g"}])  # fmt: skip
    assert [p.reason for p in a.problem_list] == [
        "a transformer step is its own total: leave its group blank (its ops are summed into "
        "its row)"
    ]


def test_a_file_without_groups_has_no_group_column_in_its_results():
    a = pipeline.analyze(pd.read_csv(io.StringIO(HEAD + "a,matmul,h100,8,64,64,,,\n"), dtype=str,
                                     keep_default_na=False))  # fmt: skip
    assert "group" not in a.results.columns and not a.problem_list
