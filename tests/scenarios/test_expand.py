"""scenarios/expand.py: sweeps expanded to scenarios within --max-rows; idle-chip warnings."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.scenarios.expand import IDLE_WARNINGS, expand, expand_slice, grids, idle_chip_words
from pipeline.scenarios.marks import FLEET_POINT, point_marks
from pipeline.scenarios.sweeps import parse_sweep
from pipeline.summary.idle import idle_chips, idle_lines


def idle_chip_warnings(frame: pd.DataFrame, path: Path) -> list[str]:
    """The warnings of one frame's idle chips, as a run of it says them."""
    return idle_chip_words(idle_lines(idle_chips(frame)), path)


def rows(*names: str) -> pd.DataFrame:
    """A checked frame's first columns, as expand() gets them."""
    n = len(names)
    return pd.DataFrame(
        {"line": np.arange(2, n + 2), "name": list(names), "B": np.full(n, 8.0),
         "D": np.full(n, 16.0), "bytes": np.full(n, np.nan)}
    )  # fmt: skip


def sweeps(**by_column) -> dict:
    """{column: {position: cell}} as check_dims returns them: (rows, Sweep per row)."""
    out = {}
    for column, cells in by_column.items():
        positions = sorted(cells)
        out[column] = (
            np.array(positions, dtype=np.intp),
            [parse_sweep(cells[p]) for p in positions],
        )
    return out


def test_no_sweep_keeps_the_valid_rows_and_adds_series():
    frame, found = expand(rows("a", "b", "c"), np.array([True, False, True]), {}, 100)
    assert list(frame.columns) == ["line", "name", "series", "B", "D", "bytes", "swept", "marks"]
    assert frame["name"].tolist() == frame["series"].tolist() == ["a", "c"]
    assert frame["swept"].tolist() == ["", ""]
    assert frame.index.tolist() == [0, 1] and found == []


def test_sweeps_expand_to_their_product_named_by_value():
    swept = sweeps(B={1: "1|2"}, D={1: "3..5", 2: "7|9"})
    frame, found = expand(rows("a", "p", "q"), np.ones(3, dtype=bool), swept, 100)
    assert frame["name"].tolist() == [
        "a", "p[B=1,D=3]", "p[B=1,D=4]", "p[B=1,D=5]", "p[B=2,D=3]", "p[B=2,D=4]", "p[B=2,D=5]",
        "q[D=7]", "q[D=9]",
    ]  # fmt: skip
    assert frame["series"].tolist() == ["a"] + ["p"] * 6 + ["q"] * 2
    assert frame["B"].tolist() == [8, 1, 1, 1, 2, 2, 2, 8, 8]
    assert frame["D"].tolist() == [16, 3, 4, 5, 3, 4, 5, 7, 9]
    assert frame["line"].tolist() == [2] + [3] * 6 + [4] * 2
    assert frame["swept"].tolist() == [""] + ["B,D"] * 6 + ["D"] * 2
    assert found == []


def test_a_rejected_rows_sweep_is_not_built():
    swept = sweeps(B={0: f"1..{2**53}"})  # 2^53 values: only counted
    frame, found = expand(rows("huge", "b"), np.array([False, True]), swept, 10)
    assert frame["name"].tolist() == ["b"] and found == []


def test_rows_past_max_rows_are_refused_in_file_order():
    # 1 + 100 (refused, takes nothing) + 1 + 5 = 7; then 4 does not fit, 2 does, then 1 fits
    swept = sweeps(B={1: "1..100", 3: "1..5", 4: "1..4", 5: "8|16"})
    frame, found = expand(
        rows("a", "big", "c", "d", "e", "f", "g", "h"), np.ones(8, bool), swept, 10
    )
    assert sorted(set(frame["series"])) == ["a", "c", "d", "f", "g"]
    assert len(frame) == 10
    assert found == [
        (1, "B", "expands to 100 rows, which takes the file past its limit of 10 rows (--max-rows)"),
        (4, "B", "expands to 4 rows, which takes the file past its limit of 10 rows (--max-rows)"),
        (7, "name", "takes the file past its limit of 10 rows (--max-rows), which the rows "
         "before it fill"),
    ]  # fmt: skip


def test_the_bytes_of_a_collective_sweep_like_a_dim():
    swept = sweeps(B={}, bytes={0: "1000..100000*10"})
    frame, _ = expand(rows("ag"), np.ones(1, bool), swept, 100)
    assert frame["bytes"].tolist() == [1e3, 1e4, 1e5]
    assert frame["name"].tolist() == ["ag[bytes=1000]", "ag[bytes=10000]", "ag[bytes=100000]"]


def idle(**columns) -> pd.DataFrame:
    n = len(columns["chips"])
    return pd.DataFrame({"line": columns.pop("line", list(range(2, n + 2))), **columns})


def test_no_idle_chips_no_warning():
    frame = idle(chips=[1.0, 4.0], shard=["", "D"], D=[2.0, 4.0])
    assert idle_chip_warnings(frame, Path("s.csv")) == []
    assert idle_chip_warnings(frame.iloc[:0], Path("s.csv")) == []


def test_idle_chips_of_a_row_and_of_a_sweep():
    frame = idle(
        line=[2, 3, 3, 3, 4],
        chips=[8.0, 4.0, 4.0, 4.0, 2.0],
        shard=["D", "F", "F", "F", "F"],
        D=[2.0, 9.0, 9.0, 9.0, 9.0],
        F=[9.0, 1.0, 2.0, 8.0, 4.0],
    )
    assert idle_chip_warnings(frame, Path("s.csv")) == [
        "s.csv:2: column chips: 8 chips split D = 2: 6 of the chips hold nothing (the times are "
        "those of a busy chip)",
        "s.csv:3: column chips: 4 chips split F, which is below 4 in 2 of this row's 3 scenarios "
        "(F = 1 to 2): some chips hold nothing there",
    ]  # fmt: skip


def test_idle_chip_warnings_are_capped():
    n = IDLE_WARNINGS + 3
    frame = idle(chips=[4.0] * n, shard=["D"] * n, D=[1.0] * n)
    warnings = idle_chip_warnings(frame, Path("s.csv"))
    assert len(warnings) == IDLE_WARNINGS + 1
    assert warnings[-1] == "s.csv: and 3 more rows split a dim over more chips than it has"


def test_labels_of_mixed_sweep_shapes_and_slices_word_every_point():
    # sweeps over one and several columns, lists, ranges and factors (up to 2^53), rows of the
    # same shape with other values, unswept rows between, fleet labels; and any slice of the
    # expansion (a Dask partition) names its points as the whole does
    cells = {
        "B": {
            1: "512|1|4096",
            2: "1..3",
            4: "2..64*2",
            5: "7|9",
            6: "1..40",
            7: "1..100",
        },
        "D": {1: "3..5", 3: f"10|{2**53 - 1}|{2**53}", 5: "1..2", 6: "5|6", 7: "1|2"},
        "bytes": {2: "1000..100000*10", 5: "4|3"},
    }
    names = ["a", "p", "q", "r", "s", "t", "u", "v"]
    own = np.array(["", "", "h100", "", "", "v5e", "", ""], dtype=object)
    fleet = (np.array(["a", "p", "qs", "r", "s", "ts", "u", "v"], dtype=object), own, own)
    parsed = {d: {p: parse_sweep(c) for p, c in by.items()} for d, by in cells.items()}
    expected, marks = [], []
    for p, name in enumerate(names):
        grid = [(d, by[p].values()) for d, by in parsed.items() if p in by]
        if not grid:
            expected.append(name)
            continue
        sizes = [len(v) for _, v in grid]
        marks += point_marks(np.unravel_index(np.arange(math.prod(sizes)), sizes), sizes).tolist()
        for point in itertools.product(*(v for _, v in grid)):
            head = [own[p]] if own[p] else []
            words = [f"{d}={int(v)}" for (d, _), v in zip(grid, point, strict=True)]
            expected.append(f"{fleet[0][p]}[{','.join(head + words)}]")
    frame, found = expand(rows(*names), np.ones(8, bool), sweeps(**cells), 1000, fleet)
    assert frame["name"].tolist() == expected and found == []
    swept_marks = frame["marks"][frame["series"] != "a"] & ~FLEET_POINT
    assert swept_marks.tolist() == marks
    assert expected[1:4] == ["p[B=512,D=3]", "p[B=512,D=4]", "p[B=512,D=5]"]
    assert "qs[h100,B=3,bytes=100000]" in expected and "r[D=9007199254740992]" in expected
    valid, n = np.ones(8, bool), len(expected)
    swept = grids(valid, sweeps(**cells))
    counts = np.array([math.prod(len(c) for _, c in swept.get(p, [])) for p in range(8)])
    for cut in ([0, 1, 5, n], [0, 2, 30, 31, 40, n], list(range(0, n, 7)) + [n]):
        parts = pd.concat(
            expand_slice(rows(*names), valid, swept, counts, fleet, lo, hi)
            for lo, hi in itertools.pairwise(cut)
        )
        assert parts["name"].tolist() == expected
        assert parts["marks"].tolist() == frame["marks"].tolist()
        assert parts["B"].tolist() == frame["B"].tolist()
