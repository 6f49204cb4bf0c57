"""`pipeline calibrations` (issue 41): the published calibration's groups, as lines or JSON,
and `pipeline hardware CHIP`'s line of the chip's published groups."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline.calibration import file
from tests.helpers import invoke

PUBLISHED = Path(__file__).parent.parent / "data" / "published.toml"  # a small one, made up
SOURCE = "gemm/trtllm/1.0.0 (TensorRT-LLM 1.0.0; made up for the tests)"


@pytest.fixture
def published(monkeypatch):
    monkeypatch.setattr(file, "PUBLISHED_PATH", PUBLISHED)


def test_each_group_is_listed_with_its_form_rows_errors_and_source(published):
    said = invoke("calibrations")
    assert said.exit_code == 0, said.output
    lines = said.stdout.splitlines()
    assert lines[0].startswith("Published calibration: tests: a small calibration in the ")
    assert lines[0].endswith("; give --calibration published to use it")
    assert lines[1:] == [
        f"  b200 matmul bf16: not used (300 rows): not better than the floor held out; {SOURCE}",
        f"  h100 matmul: roofline, 580 rows, error 2.1% / 13.0% held out (the floor's 130.0% / "
        f"950.0%), median / p90; {SOURCE}",
        f"  h100 matmul bf16: roofline+shape, 400 rows, error 2.1% / 13.0% held out (the floor's "
        f"130.0% / 950.0%), median / p90; {SOURCE}",
        f"  h100 matmul fp8: roofline, 180 rows, error 2.1% / 13.0% held out (the floor's 130.0% "
        f"/ 950.0%), median / p90; {SOURCE}",
        "  h100 custom bf16: roofline, 40 rows, error 2.1% / 13.0% held out (the floor's 130.0% "
        "/ 950.0%), median / p90; custom (made up for the tests)",
        "  h100 all_reduce nvlink 8 chips: alpha_beta, 30 rows, error 2.1% / 13.0% held out (the "
        "floor's 130.0% / 950.0%), median / p90; comm/nccl/2.21 (NCCL 2.21; made up for the "
        "tests)",
    ]


def test_the_json_has_every_group_and_where_it_came_from(published):
    said = invoke("calibrations", "--json")
    assert said.exit_code == 0, said.output
    doc = json.loads(said.stdout)
    assert doc["created"] == "2026-11-28" and doc["heldout_median"] == 0.06
    assert [(g["hardware"], g["kind"], g["dtype"], g["chips"], g["link"]) for g in doc["groups"]][
        -1
    ] == ("h100", "all_reduce", "", 8, "nvlink")
    first = doc["groups"][0]
    assert first["used"] is False and first["source"] == SOURCE and first["rows"] == 300
    assert set(first) >= {"form", "heldout_median", "heldout_p90", "floor_median", "reason"}


def test_no_published_calibration_is_an_error_and_hardware_says_nothing(monkeypatch, tmp_path):
    monkeypatch.setattr(file, "PUBLISHED_PATH", tmp_path / "published.toml")
    said = invoke("calibrations")
    assert said.exit_code == 1 and "no published calibration ships" in said.stderr
    assert "Published calibration" not in invoke("hardware", "h100").stdout


def test_hardware_chip_names_its_published_groups_in_one_line(published):
    lines = invoke("hardware", "h100").stdout.splitlines()
    said = (
        "Published calibration: matmul every dtype, bf16, fp8; custom bf16; all_reduce nvlink, "
        "8 chips (pipeline calibrations)"
    )
    assert lines.count(said) == 1
    assert "Published calibration" not in invoke("hardware", "b200").stdout  # its one: not used
