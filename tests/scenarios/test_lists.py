"""scenarios/lists.py: hardware, dtype and chips cells that list values sweep the fleet, each
point a scenario of its source row's series, with the numbers of the rows written one by one."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import pipeline
from pipeline.catalogs.hardware import load_catalog
from tests.helpers import analyze_rows, load_text, write_scenarios

NUMBERS = ["hardware", "compute_dtype", "chips", "flops", "hbm_bytes", "network_bytes",
           "peak_flops", "t_math", "t_hbm", "t_network", "t_lower", "bound",
           "critical_batch", "fits"]  # fmt: skip


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


def test_a_fleet_sweep_gives_the_numbers_of_its_rows_written_one_by_one():
    swept = analyze_rows(
        [
            {
                "name": "q",
                "op": "matmul",
                "hardware": "h100|h200|tpu-v6e",
                "dtype": "bf16|fp8",
                "chips": "1|2|4",
                "shard": "B",
                "B": "64|4096",
                "D": 8192,
                "F": 8192,
            }
        ]  # fmt: skip
    )
    one_by_one = []
    for hw in ("h100", "h200", "tpu-v6e"):
        for dtype in ("bf16", "fp8"):
            for chips in (1, 2, 4):
                for b in (64, 4096):
                    one_by_one.append(
                        {
                            "name": f"q[hardware={hw},dtype={dtype},chips={chips},B={b}]",
                            "op": "matmul",
                            "hardware": hw,
                            "dtype": dtype,
                            "chips": chips,
                            "shard": "B",
                            "B": b,
                            "D": 8192,
                            "F": 8192,
                        }  # fmt: skip
                    )
    written = analyze_rows(one_by_one)
    # tpu-v6e has no fp8 peak: its fp8 points are refused, each fleet point once (before
    # its B sweep), under the series' name with the point in the reason
    reason = written.problem_list[0].reason
    assert len(written.problem_list) == 6 and {p.reason for p in written.problem_list} == {reason}
    assert [(p.name, p.reason) for p in swept.problem_list] == [
        ("q", f"{reason} (at 'q[hardware=tpu-v6e,dtype=fp8,chips={c}]')") for c in (1, 2, 4)
    ]
    a = swept.results.set_index("name")
    b = written.results.set_index("name")
    assert list(a.index) == list(b.index)  # the same points, in the same order
    assert len(a) == 3 * 2 * 3 * 2 - 6
    pd.testing.assert_frame_equal(a[NUMBERS], b[NUMBERS])
    assert set(swept.results["series"]) == {"q"}
    assert set(swept.facts["swept"]) == {("hardware", "dtype", "chips", "B")}  # a tuple: data


def test_one_series_line_lists_its_chips_and_the_bottom_line_counts_them():
    a = analyze_rows(
        [
            {
                "name": "mlp",
                "op": "matmul",
                "hardware": "h100|b200|tpu-v6e",
                "B": "1..4096*2",
                "D": 8192,
                "F": 28672,
            },
            {"name": "one", "op": "matmul", "hardware": "a100", "B": 8, "D": 8, "F": 8},
        ]  # fmt: skip
    )
    lines = a.summary.lines
    assert list(lines.index) == ["mlp", "one"]
    assert lines.at["mlp", "hardware"] == "h100|b200|tpu-v6e"
    assert lines.at["mlp", "scenarios"] == 3 * 13
    assert lines.at["mlp", "swept"] == "hardware,B"
    # the chips differ in critical batch: no single change point, the range instead
    assert lines.at["mlp", "change_dim"] == ""
    assert lines.at["mlp", "critical_min"] < lines.at["mlp", "critical_max"]
    assert a.summary.bottom["chips"] == 4
    # the critical batch of a fleet series: a row per chip, each that chip's
    batches = a.summary.critical_batches.loc["mlp"]
    assert list(batches["hardware"]) == ["h100", "b200", "tpu-v6e"]
    for hw, low in zip(batches["hardware"], batches["low"], strict=True):
        rows = a.results[(a.results["series"] == "mlp") & (a.results["hardware"] == hw)]
        assert low == rows["critical_batch"].min()


def test_the_sweep_chart_of_each_chip_draws_a_line_per_other_fleet_value():
    from pipeline.summary.turns import sweep_lines

    a = analyze_rows(
        [
            {
                "name": "mlp",
                "op": "matmul",
                "hardware": "h100|h200",
                "dtype": "bf16|fp8",
                "B": "1..4096*2",
                "D": 8192,
                "F": 28672,
            }
        ]  # fmt: skip
    )
    frame = pd.concat([a.results, a.facts[["in_sweep", "swept"]]], axis=1)
    groups = sweep_lines(frame)
    assert set(groups) == {("h100", "B"), ("h200", "B")}
    for key, lines in groups.items():
        assert [ln.detail for ln in lines] == ["dtype=bf16", "dtype=fp8"], key
        for ln in lines:  # each line: 13 batch sizes of one chip and one dtype
            rows = a.results.iloc[ln.rows]
            assert len(rows) == 13 and rows["hardware"].nunique() == 1
            assert rows["compute_dtype"].nunique() == 1


def test_names_use_the_catalog_spelling_and_stay_unique(tmp_path, catalog):
    loaded = load_text(
        tmp_path,
        catalog,
        """
name,op,hardware,dtype,B,D,F
q,matmul,H100-SXM|Trillium,BF16|INT8,8,8,8
dup,matmul,h100|h100-sxm,bf16,8,8,8
""",
    )
    names = list(loaded.frame["name"])
    assert names[:4] == [
        "q[hardware=h100,dtype=bf16]", "q[hardware=h100,dtype=int8]",
        "q[hardware=tpu-v6e,dtype=bf16]", "q[hardware=tpu-v6e,dtype=int8]",
    ]  # fmt: skip
    # an alias of a chip already listed is the same point twice: refused as a duplicate
    assert names[4:] == ["dup[hardware=h100]"]
    assert [p.column for p in loaded.problems] == ["name"]
    assert "duplicate name 'dup[hardware=h100]'" in loaded.problems[0].reason
    assert loaded.source_rows == 2  # rows read, before any sweep


def test_an_unknown_chip_in_a_list_is_refused_alone_with_its_line_and_point(tmp_path):
    path = write_scenarios(tmp_path, "name,op,hardware,B,D,F\nq,matmul,h100|h10|b200,8,8,8\n")
    a = pipeline.analyze(path)
    assert [str(p) for p in a.problem_list] == [
        f"{path}:2: column hardware: unknown hardware 'h10' (did you mean 'h100'?) "
        "(at 'q[hardware=h10]')"
    ]
    assert list(a.results["name"]) == ["q[hardware=h100]", "q[hardware=b200]"]


def test_a_chips_range_and_a_bad_chips_item(tmp_path, catalog):
    loaded = load_text(
        tmp_path,
        catalog,
        """
name,op,hardware,chips,shard,B,D,F
r,matmul,h100,1..64*4,B,64,8,8
bad,matmul,h100,2|x,B,64,8,8
""",
    )
    r = loaded.frame[loaded.frame["series"] == "r"]
    assert list(r["chips"]) == [1.0, 4.0, 16.0, 64.0]
    assert list(r["name"]) == [f"r[chips={c}]" for c in (1, 4, 16, 64)]
    assert [(p.column, p.reason) for p in loaded.problems] == [
        ("chips", "'x' is not a whole number of chips (1 or more) (at 'bad[chips=x]')")
    ]


def test_lists_past_max_rows_are_counted_not_built(tmp_path, catalog):
    chips = "|".join(str(c) for c in range(1, 101))
    loaded = load_text(
        tmp_path,
        catalog,
        f"""
name,op,hardware,dtype,chips,shard,B,D,F
big,matmul,h100|h200|b200,bf16|fp8,{chips},B,1..1000000,8,8
huge,matmul,h100,bf16,1..9007199254740992,B,8,8,8
small,matmul,h100|h200,bf16,1,,8,8,8
""",
        max_rows=1000,
    )
    reasons = {p.name: (p.column, p.reason) for p in loaded.problems}
    assert reasons["huge"] == (
        "chips",
        "lists 9,007,199,254,740,992 combinations, which takes the file past its limit of "
        "1,000 rows (--max-rows)",
    )
    # big's 600 fleet points fit; its B sweep takes each past the limit (refused per point)
    assert reasons["big"][1].startswith("expands to 1,000,000 rows")
    assert list(loaded.frame["series"]) == ["small", "small"]


def test_a_file_without_lists_is_read_as_before(tmp_path, catalog):
    loaded = load_text(tmp_path, catalog, "name,op,hardware,B,D,F\nq,matmul,h100,8,8,8\n")
    assert list(loaded.frame["name"]) == ["q"] and list(loaded.frame["swept"]) == [""]
    assert not isinstance(loaded.frame["swept"].dtype, pd.CategoricalDtype)


def test_refused_points_keep_other_cells_checked(tmp_path, catalog):
    """A row past the limit keeps its first value, so its other problems are still said."""
    chips = "|".join(str(c) for c in range(1, 2001))
    loaded = load_text(
        tmp_path,
        catalog,
        f"name,op,hardware,chips,shard,B,D,F\nq,matmul,h100,{chips},B,8,zz,8\n",
        max_rows=1000,
    )
    assert sorted(p.column for p in loaded.problems) == ["D", "chips"]
    assert np.all(loaded.frame.empty)


def test_two_fleet_rows_of_one_name_are_refused_as_duplicates():
    # found in review: the points' names differ, but the two rows would be one series,
    # ranked as one at different swept values
    import pipeline

    rows = [{"name": "dup", "op": "matmul", "B": "1..64*2", "D": 8192, "F": 8192,
             "hardware": "h100|b200"},
            {"name": "dup", "op": "matmul", "B": "4096|8192", "D": 1024, "F": 8192,
             "hardware": "h200|mi300x"}]  # fmt: skip
    a = pipeline.analyze(rows)
    assert {(p.line, p.column) for p in a.problem_list} == {(3, "name")}
    assert a.problem_list[0].reason.startswith("duplicate name 'dup' (first on line 2)")
    assert set(a.results["hardware"]) == {"h100", "b200"}
