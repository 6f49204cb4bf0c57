"""The calibration file (pipeline.calibration.file): TOML written in one step, read
back exactly, and validated like a hardware file."""

from __future__ import annotations

import datetime
import math
import re
import tomllib

import pytest

from pipeline.calibration.estimate import Calibration, group_table
from pipeline.calibration.file import read_calibration, write_calibration
from pipeline.errors import InvalidCalibrationFile, OutputError
from pipeline.version import __version__

NAN = math.nan


def calibration() -> Calibration:
    fitted = {"rows": 111, "error_before": 0.35, "error_after": 0.0203, "heldout_error": 0.0214}
    return Calibration(
        groups=group_table(
            [
                {
                    "hardware": "h100",
                    "kind": "matmul",
                    "compute_efficiency": 0.7999748906552991,
                    "hbm_efficiency": 0.7022,
                    "network_efficiency": 1.0,
                    "overhead_seconds": 2.0057e-06,
                    **fitted,
                    "fitted": True,
                    "reason": "",
                },
                {
                    "hardware": "h100",
                    "kind": "all_gather",
                    "compute_efficiency": NAN,
                    "hbm_efficiency": NAN,
                    "network_efficiency": NAN,
                    "overhead_seconds": NAN,
                    "rows": 2,
                    "error_before": 0.47,
                    "error_after": NAN,
                    "heldout_error": NAN,
                    "fitted": False,
                    "reason": "too few rows: 2 measured, at least 3 needed",
                },
                # a user's chip, its name needing quotes, a reason with quotes and a newline
                {
                    "hardware": "my chip",
                    "kind": "custom",
                    "compute_efficiency": 0.6,
                    "hbm_efficiency": 1.0,
                    "network_efficiency": 1.0,
                    "overhead_seconds": 0.0,
                    **fitted,
                    "fitted": True,
                    "reason": 'overhead "left" at 0\nsecond line',
                },
            ]
        ),  # fmt: skip
        created="2026-01-02",
        source="measured.csv",
        source_sha256="ab" * 32,
        error_before=0.33,
        error_after=0.021,
        heldout_error=0.022,
    )


@pytest.fixture
def written(tmp_path):
    path = tmp_path / "cal.toml"
    write_calibration(calibration(), path)
    return path


def test_round_trip_is_exact(written):
    assert read_calibration(written) == calibration()


def test_the_file_has_a_table_per_chip_and_kind_and_where_it_came_from(written):
    text = written.read_text()
    assert text.startswith("# roofline calibration: t_estimate = max(")
    doc = tomllib.loads(text)
    assert list(doc) == ["calibration", "h100", "my chip"]
    assert doc["calibration"] == {
        "created": datetime.date(2026, 1, 2), "source": "measured.csv", "source_sha256": "ab" * 32,
        "error_before": 0.33, "error_after": 0.021, "heldout_error": 0.022,
        "version": __version__,
    }  # fmt: skip
    assert "[h100.matmul]" in text and '["my chip".custom]' in text
    assert doc["h100"]["matmul"]["compute_efficiency"] == 0.7999748906552991
    assert doc["h100"]["matmul"]["rows"] == 111 and doc["h100"]["matmul"]["fitted"] is True
    assert math.isnan(doc["h100"]["all_gather"]["overhead_seconds"])


def test_writing_replaces_the_file_in_one_step_and_leaves_nothing_else(tmp_path, written):
    written.write_text("old")
    write_calibration(calibration(), written)
    assert read_calibration(written) == calibration()
    assert [p.name for p in tmp_path.iterdir()] == ["cal.toml"]


def test_an_unwritable_place_is_an_output_error(tmp_path):
    with pytest.raises(OutputError, match="cannot write"):
        write_calibration(calibration(), tmp_path / "missing" / "cal.toml")


def test_an_empty_calibration_round_trips(tmp_path):
    empty = Calibration(groups=group_table([]), created="2026-01-02")
    write_calibration(empty, tmp_path / "e.toml")
    assert read_calibration(tmp_path / "e.toml") == empty


def edited(path, old: str, new: str) -> None:
    """Replace the first `old` in the file."""
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def header_line(path, table: str) -> int:
    return path.read_text().splitlines().index(table) + 1


ERROR_KEY = "compute_efficiency = 0.7999748906552991"
CASES = {
    "efficiency above 1": (
        ERROR_KEY, "compute_efficiency = 1.2", "[h100.matmul]",
        "key compute_efficiency: 1.2 is out of range; an efficiency is a number from 1e-06 "
        "to 1 (1 = the full rate)",
    ),
    "efficiency 0": (
        "hbm_efficiency = 0.7022", "hbm_efficiency = 0.0", "[h100.matmul]",
        "key hbm_efficiency: 0.0 is out of range; an efficiency is a number from 1e-06 to "
        "1 (1 = the full rate)",
    ),
    "efficiency nan in a fitted group": (
        ERROR_KEY, "compute_efficiency = nan", "[h100.matmul]",
        "key compute_efficiency: nan is out of range; an efficiency is a number from 1e-06 "
        "to 1 (1 = the full rate)",
    ),
    "negative overhead": (
        "overhead_seconds = 2.0057e-06", "overhead_seconds = -1e-6", "[h100.matmul]",
        "key overhead_seconds: -1e-06 is out of range; an overhead is seconds per op, from 0 "
        "to 3600 (an hour)",
    ),
    "not a number": (
        ERROR_KEY, 'compute_efficiency = "fast"', "[h100.matmul]",
        "key compute_efficiency: 'fast' is not a number",
    ),
    "missing key": (
        "rows = 111\n", "", "[h100.matmul]",
        "key rows is missing; a table needs compute_efficiency, hbm_efficiency, "
        "network_efficiency, overhead_seconds, rows, error_before, error_after, heldout_error, "
        "fitted, reason",
    ),
    "unknown key": (
        "rows = 111\n", "rows = 111\nspeedup = 2\n", "[h100.matmul]",
        "unknown key 'speedup'; valid keys: compute_efficiency, hbm_efficiency, "
        "network_efficiency, overhead_seconds, rows, error_before, error_after, heldout_error, "
        "fitted, reason",
    ),
    "unknown kind": (
        "[h100.matmul]", "[h100.matmal]", "[h100.matmal]",
        "unknown kind 'matmal'; valid kinds: matmul, custom, all_gather, reduce_scatter, "
        "all_reduce, all_to_all",
    ),
    "rows not whole": (
        "rows = 111", "rows = 1.5", "[h100.matmul]",
        "key rows: 1.5 is not a whole number 0 or more",
    ),
    "fitted not a bool": (
        "fitted = true", 'fitted = "yes"', "[h100.matmul]",
        "key fitted: 'yes' is not true or false",
    ),
    "negative error": (
        "error_after = 0.0203", "error_after = -0.1", "[h100.matmul]",
        "key error_after: -0.1 is not a mean relative error: a number 0 or more, or nan",
    ),
    "created not a date": (
        "created = 2026-01-02", 'created = "yesterday"', "[calibration]",
        "key created: 'yesterday' is not a date; give one like 2025-06-01",
    ),
    "bad hash": (
        'source_sha256 = "abab', 'source_sha256 = "xyab', "[calibration]",
        "key source_sha256: 'xy" + "ab" * 31 + "' is not 64 lower-case hex digits or ''",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_each_invalid_value_is_refused_naming_file_line_table_and_key(written, case):
    old, new, table, says = CASES[case]
    edited(written, old, new)
    line = header_line(written, table)
    expected = f"invalid calibration file:\n  {written}:{line} {table}: {says}"
    with pytest.raises(InvalidCalibrationFile) as info:
        read_calibration(written)
    assert str(info.value) == expected


def test_every_problem_is_listed_at_once(written):
    edited(written, ERROR_KEY, "compute_efficiency = 2.0")
    edited(written, "overhead_seconds = 0.0", "overhead_seconds = -2.0")
    with pytest.raises(InvalidCalibrationFile) as info:
        read_calibration(written)
    lines = str(info.value).splitlines()
    assert len(lines) == 3
    assert "[h100.matmul]: key compute_efficiency: 2.0 is out of range" in lines[1]
    assert '["my chip".custom]: key overhead_seconds: -2.0 is out of range' in lines[2]


def test_an_unfitted_group_may_hold_nan_but_nothing_out_of_range(written):
    edited(written, "hbm_efficiency = nan", "hbm_efficiency = 3.0")
    with pytest.raises(InvalidCalibrationFile, match=re.escape(
        "[h100.all_gather]: key hbm_efficiency: 3.0 is out of range; an efficiency is a number "
        "from 1e-06 to 1 (1 = the full rate); nan when fitted = false"
    )):  # fmt: skip
        read_calibration(written)


def test_a_file_without_its_calibration_table_is_refused(written):
    text = written.read_text()
    start, end = text.index("[calibration]"), text.index("[h100.matmul]")
    written.write_text(text[:start] + text[end:])
    with pytest.raises(InvalidCalibrationFile, match=re.escape(
        f"{written}: no [calibration] table; a calibration file starts with one (created, "
        "source, source_sha256, error_before, error_after, heldout_error, version), as "
        "`pipeline calibrate` writes it"
    )):  # fmt: skip
        read_calibration(written)


def test_a_chip_that_is_not_a_table_of_kinds_is_refused(written):
    written.write_text(written.read_text().replace("[calibration]", "h200 = 3\n[calibration]"))
    with pytest.raises(InvalidCalibrationFile, match=re.escape(
        "[h200]: top-level key 'h200' must be a table of kinds, like [h200.matmul]"
    )):  # fmt: skip
        read_calibration(written)


def test_not_toml_and_no_file_are_refused(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[h100.matmul\n")
    with pytest.raises(InvalidCalibrationFile, match=f"^{re.escape(str(bad))}: not valid TOML"):
        read_calibration(bad)
    with pytest.raises(InvalidCalibrationFile, match="no such file"):
        read_calibration(tmp_path / "none.toml")


def test_chips_the_catalog_does_not_know_are_read(written):
    assert "my chip" in set(read_calibration(written).groups["hardware"])
