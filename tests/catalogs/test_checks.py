"""The traps over the whole shipped catalog that need no source (peaks only for the units an
architecture has, ridge points within a sane range per dtype, a reach on every link), each
shown failing on a deliberately wrong row; and the same checks as warnings on a user's
hardware file, which reach the user through analyze(), `run`, `validate` and `hardware`."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from click.testing import CliRunner

import pipeline
from pipeline.catalogs.checks import (
    RIDGE_RANGE,
    UNITS,
    power_problems,
    reach_problems,
    ridge_problems,
    unit_problems,
    user_chip_warnings,
)
from pipeline.catalogs.hardware import load_catalog
from pipeline.cli import cli
from pipeline.model.dtypes import PEAK_FAMILIES
from tests.helpers import FAST, HEAD

CHIPS = load_catalog().chips  # the shipped catalog
NAMES = list(CHIPS.index)
HW_HEADER = "name,architecture,peak_bf16,peak_fp8,hbm_capacity,hbm_bandwidth,nvlink_bandwidth,"
HW_HEADER += "nvlink_topology,nvlink_reach,default_link\n"


def wrong(name: str, **fields) -> pd.Series:
    """A copy of a shipped chip with fields changed."""
    row = CHIPS.loc[name].copy()
    for field, value in fields.items():
        row[field] = value
    return row


def peaks_of(name: str) -> list[str]:
    return [f for f in PEAK_FAMILIES if pd.notna(CHIPS.loc[name, f"peak_{f}"])]


# ---------------------------------------------------------------- the facts, as data


def test_the_facts_name_known_dtype_families():
    assert set(RIDGE_RANGE) == set(PEAK_FAMILIES)
    for arch, families in UNITS.items():
        assert families <= set(PEAK_FAMILIES), arch
    for low, high in RIDGE_RANGE.values():
        assert 0 < low < high < low * 1e6  # a thousand-fold slip on either side falls out


@pytest.mark.parametrize(
    "arch, has, lacks",
    [
        ("ampere", {"tf32", "bf16", "int8"}, {"fp8", "fp4"}),
        ("hopper", {"fp8"}, {"fp4"}),
        ("ada", {"fp8"}, {"fp4"}),
        ("blackwell", {"fp8", "fp4"}, set()),
        ("blackwell-ultra", {"fp8", "fp4"}, set()),
        ("cdna3", {"fp8"}, {"fp4"}),
        ("cdna4", {"fp8", "fp4"}, set()),
        ("gaudi3", {"fp8"}, {"fp4"}),
        ("tpu-v3", {"bf16", "int8"}, {"fp8", "fp4"}),
        ("tpu-v4", {"bf16", "int8"}, {"fp8", "fp4"}),
        ("tpu-v5e", {"bf16", "int8"}, {"fp8", "fp4"}),
        ("tpu-v6e", {"bf16", "int8"}, {"fp8", "fp4"}),
        ("tpu7x", {"bf16", "fp8"}, {"fp4"}),
    ],
)
def test_units_per_architecture(arch, has, lacks):
    assert has <= UNITS[arch] and not lacks & UNITS[arch]


@pytest.mark.parametrize(
    "family, peak, bandwidth",
    [
        ("bf16", 1.48e14, 4.0e12),  # H20: the lowest bf16 ridge of the fleet, ~37
        ("fp4", 1.5e16, 8.0e12),  # B300: the highest fp4 ridge, ~1900
        ("fp32", 7.5e13, 8.0e12),  # B200: ~9
        ("fp8", 7.33e14, 8.64e11),  # L40S: ~850
        ("int8", 1.84e15, 1.6e12),  # v6e: 1150
    ],
)
def test_the_ridge_ranges_hold_the_real_fleet_and_not_a_unit_slip(family, peak, bandwidth):
    low, high = RIDGE_RANGE[family]
    assert low <= peak / bandwidth <= high
    assert not low <= peak * 1000 / bandwidth <= high  # TFLOP/s written as GFLOP/s
    assert not low <= peak / (bandwidth * 1000) <= high  # GB/s written as TB/s


# ---------------------------------------------------------------- traps: the shipped catalog


@pytest.mark.parametrize("name", NAMES)
def test_peaks_only_for_the_units_the_architecture_has(name):
    assert unit_problems(name, CHIPS.loc[name]) == []


@pytest.mark.parametrize("name", NAMES)
def test_ridge_points_are_within_the_range_per_dtype(name):
    assert ridge_problems(name, CHIPS.loc[name]) == []


@pytest.mark.parametrize("name", NAMES)
def test_every_link_with_a_bandwidth_has_a_reach(name):
    assert reach_problems(name, CHIPS.loc[name]) == []


@pytest.mark.parametrize("name", NAMES)
def test_a_board_power_is_one_boards(name):
    assert power_problems(name, CHIPS.loc[name]) == []


def test_a_systems_power_or_kilowatts_fails_the_board_range():
    assert power_problems("h100", wrong("h100", tdp=10200.0)) == [
        "tdp = 1.02e4 W on h100, outside 10 to 5000 W for one chip's board: a whole system's "
        "power (an 8-GPU box), or kW taken for W?"
    ]
    assert len(power_problems("h100", wrong("h100", tdp=0.7))) == 1  # 0.7 kW
    assert power_problems("h100", wrong("h100", tdp=float("nan"))) == []  # blank: none printed
    assert power_problems("h100", wrong("h100", tdp=10200.0), ("hbm_bandwidth",)) == []


def test_a_user_files_system_power_is_warned_at_its_line():
    user = pd.DataFrame({"tdp": [14300.0, 1000.0]}, index=pd.Index(["b200", "mychip"]))
    where = {"b200": "hw.csv:2", "mychip": "hw.csv:3"}
    assert user_chip_warnings(user, CHIPS, where) == [
        "hw.csv:2: tdp = 1.43e4 W on b200, outside 10 to 5000 W for one chip's board: a whole "
        "system's power (an 8-GPU box), or kW taken for W?"
    ]


# ---------------------------------------------------------------- each trap on a wrong row


def test_a_peak_without_units_fails():
    assert unit_problems("a100", wrong("a100", peak_fp8=1e15)) == [
        "peak_fp8 = 1e15 on a100: ampere has no fp8 units (it has fp32, tf32, bf16, fp16, int8, "
        "int4); leave peak_fp8 blank"
    ]
    (problem,) = unit_problems("h100", wrong("h100", peak_fp4=4e15))
    assert "hopper has no fp4 units" in problem
    assert unit_problems("h100", wrong("h100", architecture="volta")) == [
        "h100: architecture 'volta' is unknown; give one of " + ", ".join(UNITS)
        + " (it says which dtypes the chip has)"
    ]  # fmt: skip
    (problem,) = unit_problems("h100", wrong("h100", architecture=""))
    assert problem.startswith("h100: no architecture; give one of tpu-v3")


@pytest.mark.parametrize("name", NAMES)
def test_a_thousand_fold_slip_fails_the_ridge_range(name):
    peak = f"peak_{peaks_of(name)[0]}"
    slipped = wrong(name, **{peak: CHIPS.loc[name, peak] * 1000})
    (problem,) = ridge_problems(name, slipped)
    assert problem.startswith(f"{peak} / hbm_bandwidth = ") and "a unit slip?" in problem
    slow = wrong(name, hbm_bandwidth=CHIPS.loc[name, "hbm_bandwidth"] * 1000)
    assert len(ridge_problems(name, slow)) == len(peaks_of(name))


def test_the_ridge_problem_says_what_was_expected():
    assert ridge_problems("h100", wrong("h100", hbm_bandwidth=3.35e9)) == [
        f"peak_{f} / hbm_bandwidth = {v} / 3.35e9 = {r} FLOP/byte on h100, outside {lo} to {hi} "
        f"for {f}: a unit slip? (FLOP/s and bytes/s, SI)"
        for f, v, r, lo, hi in [
            ("fp32", "6.7e13", "2e4", "1", "2000"),
            ("tf32", "4.947e14", "1.477e5", "2", "5000"),
            ("bf16", "9.89e14", "2.952e5", "5", "1e4"),
            ("fp16", "9.89e14", "2.952e5", "5", "1e4"),
            ("fp8", "1.979e15", "5.907e5", "10", "2e4"),
            ("int8", "1.979e15", "5.907e5", "5", "2e4"),
        ]
    ]


def test_a_link_without_a_reach_fails_but_dcn_may_be_unlimited():
    assert math.isnan(CHIPS.loc["h100", "dcn_reach"])  # no limit: allowed
    assert reach_problems("h100", wrong("h100", nvlink_reach=float("nan"))) == [
        "h100: nvlink_bandwidth but no nvlink_reach; give the largest group of chips the link "
        "connects (blank only for dcn: no limit)"
    ]
    assert reach_problems("h100", wrong("h100", nvlink_reach=1.0)) == [
        "nvlink_reach = 1 on h100: a link connects a whole number of chips, at least 2 (blank: "
        "no limit)"
    ]
    assert len(reach_problems("h100", wrong("h100", pcie_reach=7.5))) == 1
    no_link = wrong("h100", nvlink_bandwidth=float("nan"), nvlink_reach=float("nan"))
    assert reach_problems("h100", no_link) == []  # no bandwidth: no reach needed


# ---------------------------------------------------------------- a user's file: warnings


def user_rows(*lines: str) -> tuple[pd.DataFrame, dict[str, str]]:
    """A user's chips as load_catalog reads them, and where each is (hw.csv:LINE)."""
    text = [line.split(",") for line in lines]
    frame = pd.DataFrame(text, columns=HW_HEADER.strip().split(","))
    frame = frame.set_index("name")
    for col in frame.columns:
        if col not in ("architecture", "nvlink_topology", "default_link"):
            frame[col] = pd.to_numeric(frame[col].where(frame[col] != "")).astype(float)
    return frame, {name: f"hw.csv:{i + 2}" for i, name in enumerate(frame.index)}


@pytest.mark.parametrize(
    "line, warning",
    [
        (
            "h100-custom,,1.98e15,,,,,,,",
            "hw.csv:2: peak_bf16 = 1.98e15 on h100-custom is twice the catalog's dense figure "
            "for h100 (9.89e14): a sparse figure?",
        ),
        (
            "h100,,,,,,9e11,,,",  # the same chip: compared with its own figure
            "hw.csv:2: nvlink_bandwidth = 9e11 on h100 is twice the catalog's one-way figure for "
            "h100 (4.5e11): a bidirectional figure? the catalog keeps one-way",
        ),
        (
            "h100-sxm,,,,85899345920,,,,,",  # an alias of h100
            "hw.csv:2: hbm_capacity = 8.59e10 on h100-sxm is exactly 80 GiB: GiB? vendors print "
            "decimal GB (80 GB = 8e10 bytes)",
        ),
        (
            "h100x,,,,8.59e10,,,,,",  # 80 GB taken for GiB, rounded: 1.0737 x h100's
            "hw.csv:2: hbm_capacity = 8.59e10 on h100x is 1.0737 x the catalog's capacity for "
            "h100 (8e10): GiB? vendors print decimal GB",
        ),
        (
            "a100-fp8,,,1e15,,,,,,",  # no architecture: the matched chip's (a100: ampere)
            "hw.csv:2: peak_fp8 = 1e15 on a100-fp8: ampere has no fp8 units (it has fp32, tf32, "
            "bf16, fp16, int8, int4); leave peak_fp8 blank",
        ),
        (
            "mychip,hopper,1e14,,,1e9,,,,",  # its own architecture, a GB/s slip
            "hw.csv:2: peak_bf16 / hbm_bandwidth = 1e14 / 1e9 = 1e5 FLOP/byte on mychip, outside "
            "5 to 1e4 for bf16: a unit slip? (FLOP/s and bytes/s, SI)",
        ),
        (
            "mychip,ampere,1e14,2e14,,1e12,,,,",
            "hw.csv:2: peak_fp8 = 2e14 on mychip: ampere has no fp8 units (it has fp32, tf32, "
            "bf16, fp16, int8, int4); leave peak_fp8 blank",
        ),
        (
            "h100,,,,,,,,1,",
            "hw.csv:2: nvlink_reach = 1 on h100: a link connects a whole number of chips, at "
            "least 2 (blank: no limit)",
        ),
        (
            "mychip,volta,1e14,,,1e12,,,,",
            "hw.csv:2: mychip: architecture 'volta' is unknown; give one of "
            + ", ".join(UNITS) + " (it says which dtypes the chip has)",
        ),
    ],
)  # fmt: skip
def test_a_user_file_is_warned_of_each_trap(line, warning):
    user, where = user_rows(line)
    assert user_chip_warnings(user, CHIPS, where) == [warning]


@pytest.mark.parametrize(
    "line",
    [
        "h100-custom,,9.89e14,,,,,,,",  # the catalog's own figures
        "h100,,,,,3.9e12,,,,",  # a faster memory: ridge 254, fine
        "mychip,,1e14,,8e10,1e12,,,,",  # a new chip like no catalog one, no architecture
        "mychip,cdna3,1.3e15,2.6e15,1.92e11,5.3e12,4e11,switch,8,nvlink",
    ],
)
def test_a_sane_user_chip_is_not_warned(line):
    user, where = user_rows(line)
    assert user_chip_warnings(user, CHIPS, where) == []


def test_a_whole_gib_the_catalog_itself_keeps_is_not_warned():
    assert CHIPS.at["tpu7x", "hbm_capacity"] == 192 * 2**30  # Google prints "192 GiB"
    user, where = user_rows("tpu7x,,,,206158430208,,,,,")
    assert user_chip_warnings(user, CHIPS, where) == []
    decimal = CHIPS.copy()
    decimal.loc["tpu7x", "hbm_capacity"] = 1.92e11  # a catalog that kept decimal GB
    assert len(user_chip_warnings(user, decimal, where)) == 1  # unlike the catalog's: warned


def test_the_shipped_catalog_gives_no_warnings_even_given_back_as_a_user_file():
    assert load_catalog().warnings == ()
    assert pipeline.load_hardware(pipeline.catalog()).warnings == ()


@pytest.fixture
def hw(tmp_path):
    path = tmp_path / "hw.csv"
    path.write_text(HW_HEADER + "h100-custom,,1.98e15,,,3.35e12,,,,\n", encoding="utf-8")
    return path


def test_load_catalog_sets_the_warnings_at_the_users_line(hw):
    said = f"{hw}:2: peak_bf16 = 1.98e15 on h100-custom is twice the catalog's dense figure"
    catalog = load_catalog([hw])
    (warning,) = catalog.warnings
    assert warning.startswith(said)
    assert load_catalog([catalog]).warnings == catalog.warnings  # a Catalog keeps its own


def test_the_warnings_reach_analyze_and_the_command_line(hw, tmp_path):
    said = f"{hw}:2: peak_bf16 = 1.98e15 on h100-custom is twice"
    rows = [{"name": "q", "op": "matmul", "B": 8, "D": 8, "F": 8, "hardware": "h100-custom"}]
    assert any(w.startswith(said) for w in pipeline.analyze(rows, hardware=hw).warnings)
    scenarios = tmp_path / "s.csv"
    scenarios.write_text(f"{HEAD}\nq,matmul,8,8,8,h100-custom\n", encoding="utf-8")
    runner = CliRunner()
    for args in (
        ["validate", str(scenarios)],
        ["run", str(scenarios), "-o", str(tmp_path / "out"), *FAST],
        ["hardware"],
        ["hardware", "h100-custom"],
    ):
        result = runner.invoke(cli, [*args, "--hardware", str(hw)])
        assert result.exit_code == 0, result.output
        assert f"warning: {said}" in result.stderr, args
        assert said not in result.stdout
