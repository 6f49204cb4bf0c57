"""The calibration file (pipeline.calibration.file): TOML written in one step, read
back exactly, and validated like a hardware file."""

from __future__ import annotations

import datetime
import hashlib
import json
import math
import re
import tomllib
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
import tomli_w

from pipeline.calibration import file as file_module
from pipeline.calibration.estimate import ERRORS, Calibration, group_table
from pipeline.calibration.file import calibration_from, read_calibration, write_calibration
from pipeline.errors import InvalidCalibrationFile, OutputError
from pipeline.version import __version__

NAN = math.nan
PUBLISHED = Path(__file__).parent.parent / "data" / "published.toml"  # a small one, made up


SHAPE = json.dumps(
    {
        "knots": {a: [1.0, 2.0, 3.0, 4.0] for a in "mnk"},
        "coef": [i / 100 for i in range(19)],
        "range": {a: [0.0, 5.0] for a in "mnk"},
    },
    separators=(",", ":"),
)


def group(hardware: str, kind: str, dtype: str = "", **given) -> dict:
    """A fitted roofline group's record, `given` replacing any value."""
    return {
        "hardware": hardware, "kind": kind, "dtype": dtype, "chips": 0, "link": "",
        "form": "roofline", "compute_efficiency": 0.7999748906552991, "hbm_efficiency": 0.7022,
        "network_efficiency": 1.0, "overhead_seconds": 2.0057e-06, "shape": "", "rows": 111,
        "floor_median": 1.3, "floor_p90": 9.5, "median": 0.0203, "p90": 0.11,
        "heldout_median": 0.0214, "heldout_p90": 0.13, "fitted": True, "used": True,
        "reason": "", **given,
    }  # fmt: skip


def groups(records: list[dict]) -> pd.DataFrame:
    """group_table's frame, each record's `source` beside it (as the reader keeps it)."""
    frame = group_table(records)
    keys = ["hardware", "kind", "dtype", "chips", "link"]
    said = {tuple(r[k] for k in keys): r.get("source", "") for r in records}
    frame["source"] = [said[k] for k in frame[keys].itertuples(index=False, name=None)]
    return frame


def calibration() -> Calibration:
    unfitted = dict.fromkeys(
        ("compute_efficiency", "hbm_efficiency", "network_efficiency", "overhead_seconds",
         "median", "p90", "heldout_median", "heldout_p90"), NAN)  # fmt: skip
    return Calibration(
        groups=groups(
            [
                group(
                    "h100",
                    "matmul",
                    "bf16",
                    form="roofline+shape",
                    shape=SHAPE,
                    source="gemm/trtllm/1.0 (TensorRT-LLM 1.0)",
                ),
                group("h100", "matmul", reason="12 rows: fp8 uses h100 matmul (every dtype)"),
                group(
                    "h100",
                    "all_reduce",
                    chips=8,
                    link="nvlink",
                    form="alpha_beta",
                    compute_efficiency=1.0,
                    hbm_efficiency=1.0,
                    network_efficiency=0.6,
                ),
                group(
                    "h100",
                    "all_gather",
                    link="nvlink",
                    **unfitted,
                    rows=2,
                    fitted=False,
                    used=False,
                    reason="too few rows: 2 measured, at least 6 needed",
                ),
                group(
                    "h100",
                    "all_to_all",
                    chips=4,
                    network_efficiency=0.5,
                    used=False,
                    reason="not better than the floor",
                ),
                # a user's chip, its name needing quotes, a reason with quotes and a newline
                group(
                    "my chip",
                    "custom",
                    "fp8",
                    compute_efficiency=0.6,
                    hbm_efficiency=1.0,
                    overhead_seconds=0.0,
                    reason='overhead "left" at 0\nsecond line',
                ),
            ]
        ),  # fmt: skip
        created="2026-01-02",
        source="measured.csv",
        source_sha256="ab" * 32,
        **{k: 0.01 * (i + 1) for i, k in enumerate(ERRORS)},
    )


@pytest.fixture
def written(tmp_path):
    path = tmp_path / "cal.toml"
    write_calibration(calibration(), path)
    return path


def test_round_trip_is_exact(written):
    assert read_calibration(written) == calibration()


def test_the_file_has_a_table_per_group_and_where_it_came_from(written):
    text = written.read_text()
    assert text.startswith("# roofline calibration: t_estimate = max(")
    doc = tomllib.loads(text)
    assert list(doc) == ["calibration", "h100", "my chip"]
    assert doc["calibration"] == {
        "created": datetime.date(2026, 1, 2), "source": "measured.csv", "source_sha256": "ab" * 32,
        **{k: 0.01 * (i + 1) for i, k in enumerate(ERRORS)}, "version": __version__,
    }  # fmt: skip
    for table in (
        "[h100.matmul]",
        "[h100.matmul.bf16]",
        "[h100.all_reduce.nvlink.8]",
        "[h100.all_gather.nvlink]",
        "[h100.all_to_all.4]",
        '["my chip".custom.fp8]',
    ):
        assert table in text.splitlines()  # fmt: skip
    bf16 = doc["h100"]["matmul"]["bf16"]
    assert bf16["form"] == "roofline+shape" and json.loads(bf16["shape"])["coef"][1] == 0.01
    assert bf16["source"] == "gemm/trtllm/1.0 (TensorRT-LLM 1.0)"
    assert doc["h100"]["matmul"]["compute_efficiency"] == 0.7999748906552991
    assert doc["h100"]["matmul"]["rows"] == 111 and doc["h100"]["matmul"]["used"] is True
    assert "shape" not in doc["h100"]["matmul"] and "source" not in doc["h100"]["matmul"]
    assert doc["h100"]["all_reduce"]["nvlink"]["8"]["form"] == "alpha_beta"
    assert math.isnan(doc["h100"]["all_gather"]["nvlink"]["overhead_seconds"])


def test_an_old_file_reads_as_every_dtype_and_the_roofline_form(tmp_path):
    old = tmp_path / "old.toml"
    old.write_text(OLD)
    cal = read_calibration(old)
    g = cal.groups.set_index("kind")
    assert list(g.index) == ["matmul", "all_gather"]
    assert list(g["dtype"]) == ["", ""] and list(g["chips"]) == [0, 0]
    assert list(g["link"]) == ["", ""] and list(g["form"]) == ["roofline", "roofline"]
    assert g.loc["matmul", "compute_efficiency"] == 0.8 and g.loc["matmul", "rows"] == 111
    assert list(g["fitted"]) == [True, False] and list(g["used"]) == [True, False]
    assert g.loc["all_gather", "reason"] == "too few rows"
    # a mean error is not a median: not carried over as one
    assert g[["floor_median", "heldout_p90"]].isna().all().all()
    assert all(math.isnan(getattr(cal, k)) for k in ERRORS)
    assert cal.source == "measured.csv" and cal.created == "2025-06-01"


OLD = """[calibration]
created = 2025-06-01
source = "measured.csv"
source_sha256 = ""
error_before = 0.33
error_after = 0.021
heldout_error = 0.022
version = "0.2.0"

[h100.matmul]
compute_efficiency = 0.8
hbm_efficiency = 0.7
network_efficiency = 1.0
overhead_seconds = 2e-06
rows = 111
error_before = 0.35
error_after = 0.02
heldout_error = 0.021
fitted = true
reason = ""

[h100.all_gather]
compute_efficiency = nan
hbm_efficiency = nan
network_efficiency = nan
overhead_seconds = nan
rows = 2
error_before = 0.5
error_after = nan
heldout_error = nan
fitted = false
reason = "too few rows"
"""


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
KEYS = (
    "form, compute_efficiency, hbm_efficiency, network_efficiency, overhead_seconds, rows, "
    "floor_median, floor_p90, median, p90, heldout_median, heldout_p90, fitted, used, reason "
    "(and shape for form roofline+shape, source if known)"
)
RANGE = "an efficiency is a number from 1e-06 to 1 (1 = the full rate)"
SHAPE_SAYS = (
    'knots: {"m": [...], "n": [...], "k": [...]}, as many ascending finite numbers each; coef: '
    '1 + 3 x (1 + knots) + 3 finite numbers (19 with 4 knots); range: {"m": [low, high], ...}'
)
WRITTEN_SHAPE = tomli_w.dumps({"shape": SHAPE}).strip()


def shaped(text: str) -> str:
    """A shape line holding `text` (a TOML literal string)."""
    return f"shape = '{text}'"


CASES = {
    "efficiency above 1": (
        ERROR_KEY, "compute_efficiency = 1.2", "[h100.matmul]",
        f"key compute_efficiency: 1.2 is out of range; {RANGE}",
    ),
    "efficiency 0": (
        "hbm_efficiency = 0.7022", "hbm_efficiency = 0.0", "[h100.matmul]",
        f"key hbm_efficiency: 0.0 is out of range; {RANGE}",
    ),
    "efficiency nan in a fitted group": (
        ERROR_KEY, "compute_efficiency = nan", "[h100.matmul]",
        f"key compute_efficiency: nan is out of range; {RANGE}",
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
    "missing key": ("rows = 111\n", "", "[h100.matmul]", f"key rows is missing; a table needs {KEYS}"),
    "unknown key": (
        "rows = 111\n", "rows = 111\nspeedup = 2\n", "[h100.matmul]",
        f"unknown key 'speedup'; valid keys: {KEYS}",
    ),
    "unknown kind": (
        "[h100.matmul]", "[h100.matmal]", "[h100.matmal]",
        "unknown kind 'matmal'; valid kinds: matmul, custom, all_gather, reduce_scatter, "
        "all_reduce, all_to_all",
    ),
    "unknown dtype": (
        "[h100.matmul.bf16]", "[h100.matmul.bf17]", "[h100.matmul.bf17]",
        "unknown dtype 'bf17'; a matmul or custom group's table is [chip.kind] (every dtype) "
        "or [chip.kind.DTYPE], DTYPE one of fp32, tf32, bf16, fp16, fp8, fp8_e4m3, fp8_e5m2, "
        "int8, int4, fp4",
    ),
    "zero chips": (
        "[h100.all_reduce.nvlink.8]", "[h100.all_reduce.nvlink.0]", "[h100.all_reduce.nvlink.0]",
        "'0' is not a chip count; a collective's table is [chip.kind], [chip.kind.LINK], "
        "[chip.kind.CHIPS] or [chip.kind.LINK.CHIPS], CHIPS a whole number 1 or more",
    ),
    "chips not a number": (
        "[h100.all_reduce.nvlink.8]", "[h100.all_reduce.nvlink.eight]",
        "[h100.all_reduce.nvlink.eight]",
        "'eight' is not a chip count; a collective's table is [chip.kind], [chip.kind.LINK], "
        "[chip.kind.CHIPS] or [chip.kind.LINK.CHIPS], CHIPS a whole number 1 or more",
    ),
    "unknown form": (
        'form = "alpha_beta"', 'form = "linear"', "[h100.all_reduce.nvlink.8]",
        "key form: 'linear' is not a form; valid forms: roofline, roofline+shape, alpha_beta",
    ),
    "shape without its form": (
        'form = "roofline+shape"', 'form = "roofline"', "[h100.matmul.bf16]",
        "key shape: only a group of form roofline+shape has one",
    ),
    "shape form without a shape": (
        'form = "roofline"', 'form = "roofline+shape"', "[h100.matmul]",
        "key shape is missing; a group of form roofline+shape needs one",
    ),
    "shape not JSON": (
        WRITTEN_SHAPE, shaped(SHAPE.replace('"coef":[', '"coef":[[')), "[h100.matmul.bf16]",
        f"key shape: not JSON; {SHAPE_SAYS}",
    ),
    "shape coef too short": (
        WRITTEN_SHAPE, shaped(SHAPE.replace(",0.18]", "]")), "[h100.matmul.bf16]",
        f"key shape: 18 coef, 19 needed for its knots; {SHAPE_SAYS}",
    ),
    "shape knots not ascending": (
        WRITTEN_SHAPE, shaped(SHAPE.replace('"m":[1.0,2.0', '"m":[2.0,1.0')),
        "[h100.matmul.bf16]",
        f"key shape: knots of m are not ascending finite numbers; {SHAPE_SAYS}",
    ),
    "shape coef not finite": (
        WRITTEN_SHAPE, shaped(SHAPE.replace('"coef":[0.0,', '"coef":[NaN,')),
        "[h100.matmul.bf16]",
        f"key shape: coef are not all finite numbers; {SHAPE_SAYS}",
    ),
    "shape without its range": (
        WRITTEN_SHAPE, shaped(SHAPE[: SHAPE.index(',"range"')] + "}"), "[h100.matmul.bf16]",
        f"key shape: range of m is not [low, high]; {SHAPE_SAYS}",
    ),
    "shape axis missing": (
        WRITTEN_SHAPE, shaped(SHAPE.replace('"k":', '"q":')), "[h100.matmul.bf16]",
        f"key shape: knots for m, n, k, not m, n, q; {SHAPE_SAYS}",
    ),
    "source not text": (
        'source = "gemm/trtllm/1.0 (TensorRT-LLM 1.0)"', "source = 3", "[h100.matmul.bf16]",
        "key source: 3 is not text; give a quoted string",
    ),
    "used without a fit": (
        "used = false\nreason = \"too few", "used = true\nreason = \"too few",
        "[h100.all_gather.nvlink]", "key used: true, but the group is not fitted",
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
        "heldout_p90 = 0.13", "heldout_p90 = -0.1", "[h100.matmul]",
        "key heldout_p90: -0.1 is not an error: a fraction 0 or more (max(t/m, m/t) - 1), or "
        "nan",
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
    assert '["my chip".custom.fp8]: key overhead_seconds: -2.0 is out of range' in lines[2]


def test_an_unfitted_group_may_hold_nan_but_nothing_out_of_range(written):
    edited(written, "hbm_efficiency = nan", "hbm_efficiency = 3.0")
    with pytest.raises(InvalidCalibrationFile, match=re.escape(
        "[h100.all_gather.nvlink]: key hbm_efficiency: 3.0 is out of range; an efficiency is a number "
        "from 1e-06 to 1 (1 = the full rate); nan when fitted = false"
    )):  # fmt: skip
        read_calibration(written)


def test_a_file_without_its_calibration_table_is_refused(written):
    text = written.read_text()
    start, end = text.index("[calibration]"), text.index("[h100.matmul]")
    written.write_text(text[:start] + text[end:])
    with pytest.raises(InvalidCalibrationFile, match=re.escape(
        f"{written}: no [calibration] table; a calibration file starts with one (created, "
        f"source, source_sha256, {', '.join(ERRORS)}, version), as `pipeline calibrate` writes it"
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


def written_part(tmp_path, name: str, keep) -> Path:
    """calibration()'s groups that `keep` keeps, written to `name`."""
    cal = calibration()
    path = tmp_path / name
    write_calibration(
        replace(cal, groups=cal.groups[keep(cal.groups)].reset_index(drop=True)), path
    )
    return path


def test_files_of_different_groups_merge_into_one_calibration(tmp_path):
    a = written_part(tmp_path, "a.toml", lambda g: g["kind"] == "matmul")
    b = written_part(tmp_path, "b.toml", lambda g: g["kind"] != "matmul")
    merged, files = calibration_from([a, b])
    assert files == (a, b)
    pd.testing.assert_frame_equal(merged.groups, calibration().groups)
    sha = {p: hashlib.sha256(p.read_bytes()).hexdigest()[:12] for p in (a, b)}
    assert merged.label == f"a.toml {sha[a]} + b.toml {sha[b]}"
    assert merged.source == "measured.csv" and merged.created == "2026-01-02"
    alone, files = calibration_from([a])  # one file in a list: as given alone
    assert alone.label == f"a.toml {sha[a]}" and files == (a,)


def test_a_group_in_two_files_is_refused_naming_it_and_both_files(tmp_path):
    a = written_part(tmp_path, "a.toml", lambda g: g["kind"] == "matmul")
    b = written_part(tmp_path, "b.toml", lambda g: g["dtype"] == "bf16")
    with pytest.raises(InvalidCalibrationFile) as info:
        calibration_from([a, b])
    assert str(info.value) == (
        f"calibration group [h100.matmul.bf16] is in both {a} and {b}: give each group once "
        "(fit the files' measurements together, or leave the group out of one)"
    )


def test_published_names_the_calibration_that_ships(tmp_path, monkeypatch):
    monkeypatch.setattr(file_module, "PUBLISHED_PATH", PUBLISHED)
    cal, files = calibration_from("published")
    assert files == (PUBLISHED,) and cal.label.startswith("published.toml ")
    assert (cal.groups["source"] != "").all() and len(cal.groups) >= 3
    again, _ = calibration_from(Path("published"))  # as --calibration gives it
    assert again == cal
    missing = tmp_path / "published.toml"
    monkeypatch.setattr(file_module, "PUBLISHED_PATH", missing)
    with pytest.raises(InvalidCalibrationFile, match="no published calibration ships"):
        calibration_from("published")


def test_a_calibration_argument_of_another_type_is_a_type_error():
    with pytest.raises(TypeError, match="calibration must be"):
        calibration_from(3)
    with pytest.raises(TypeError, match="calibration must be"):
        calibration_from([])
