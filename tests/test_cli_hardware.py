"""`pipeline hardware --compare NAMES` (a column per chip, ridge points per dtype), `--chart`
(the chips' rooflines as a PNG), their exit statuses and messages, and the helpers
they use."""

from __future__ import annotations

import pytest

import pipeline
from pipeline.cli.options import hardware_usage
from pipeline.textfile import write_file
from tests.helpers import assert_png, invoke


def test_compare_prints_a_column_per_chip_with_ridges_and_dashes():
    result = invoke("hardware", "--compare", "h100", "v6e", "A100")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["chip", "h100", "tpu-v6e", "a100"]
    rows = {line[:22].strip(): line[22:].split() for line in lines[1:]}
    assert rows["peak bf16 (TFLOP/s)"] == ["989", "920", "312"]
    assert rows["ridge bf16 (FLOP/byte)"] == ["295", "575", "153"]
    assert rows["peak fp8 (TFLOP/s)"][1:] == ["-", "-"]  # no fp8 units on v6e or A100
    assert rows["ridge int4 (FLOP/byte)"] == ["-", "-", "612"]
    assert rows["default link"] == ["nvlink", "ici", "nvlink"]
    assert result.stderr == ""


def test_the_flag_may_follow_the_names_and_user_chips_join():
    toml = "[mychip]\npeak_bf16 = 4e14\nhbm_bandwidth = 1e12\n"
    result = invoke("hardware", "h100", "mychip", "--compare", "--hardware", _file(toml))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["chip", "h100", "mychip"]
    ridge = next(line for line in lines if line.startswith("ridge bf16"))
    assert ridge.split()[-2:] == ["295", "400"]


def test_an_unknown_chip_with_compare_is_a_usage_error_naming_each():
    result = invoke("hardware", "--compare", "h100", "h10", "qq-chip")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == (
        "Error: unknown hardware 'h10' (did you mean 'h100'?); "
        "unknown hardware 'qq-chip'; see `pipeline hardware` for the list\n"
    )


def test_an_unknown_single_name_stays_exit_1():
    result = invoke("hardware", "h10")
    assert (result.exit_code, result.stderr) == (
        1,
        "Error: unknown hardware 'h10' (did you mean 'h100'?)\n",
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["h100", "h200"], "2 chips given: add --compare to see them side by side"),
        (["--compare"], "--compare needs chip names, e.g. --compare h100 tpu-v6e"),
        (["--chart", "x.png"], "--chart needs chip names, e.g. --compare h100 tpu-v6e --chart "
         "rooflines.png"),
        (["--compare", "h100", "--dtype", "fp8"], "--dtype is the chart's dtype: give --chart "
         "PATH.png too"),
        (["--compare", "h100", "--chart", "x.png", "--dtype", "fp9"], "--dtype: unknown dtype "
         "'fp9' (did you mean 'fp8'?)"),
    ],
)  # fmt: skip
def test_options_that_do_not_go_together_are_usage_errors(args, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = invoke("hardware", *args)
    assert result.exit_code == 2
    assert result.stderr.startswith("Usage: ")  # click's usage lines, then the message
    assert result.stderr.endswith(f"\n\nError: {message}\n")
    assert list(tmp_path.iterdir()) == []  # no chart written


def test_chart_writes_the_rooflines_png(tmp_path):
    path = tmp_path / "rooflines.png"
    result = invoke("hardware", "--compare", "h100", "h200", "tpu-v6e", "--chart", path)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0].split() == ["chip", "h100", "h200", "tpu-v6e"]
    assert result.stderr == f"bf16 rooflines of 3 chips -> {path}\n"
    assert_png(path.read_bytes(), min_size=(1200, 800))
    assert [p.name for p in tmp_path.iterdir()] == ["rooflines.png"]  # no temporary file left


def test_chart_at_a_dtype_says_which_chips_it_leaves_out(tmp_path):
    path = tmp_path / "fp8.png"
    result = invoke("hardware", "--compare", "h100", "tpu-v6e", "--chart", path, "--dtype", "FP8")
    assert result.exit_code == 0, result.output
    assert result.stderr == f"fp8 rooflines of 1 chip -> {path} (not drawn, no fp8 peak: tpu-v6e)\n"


@pytest.mark.parametrize(
    ("name", "dtype", "message"),
    [
        ("x.txt", "bf16", "{tmp}/x.txt: the chart is a PNG; name it *.png"),
        ("none/x.png", "bf16", "folder {tmp}/none does not exist; create it first"),
        ("x.png", "fp4", "no fp4 peak (peak_fp4) on h100, tpu-v6e; give another dtype, or the "
         "peak in a --hardware file"),
    ],
)  # fmt: skip
def test_a_chart_not_written_is_exit_1_after_the_table(name, dtype, message, tmp_path):
    path = tmp_path / name
    args = ("hardware", "--compare", "h100", "tpu-v6e", "--chart", path, "--dtype", dtype)
    result = invoke(*args)
    assert result.exit_code == 1
    assert result.stdout.startswith("chip ")  # the table is shown all the same
    assert result.stderr == f"Error: {message.replace('{tmp}', str(tmp_path))}\n"
    assert not path.exists()


def test_hardware_usage_accepts_what_goes_together():
    assert hardware_usage((), False, None, None) is None
    assert hardware_usage(("h100",), False, "x.png", "fp8") is None
    assert hardware_usage(("h100", "b200"), True, None, None) is None


def test_write_file_replaces_whole_and_refuses_a_folder(tmp_path):
    path = tmp_path / "a.png"
    path.write_bytes(b"old")
    write_file(path, b"new")
    assert path.read_bytes() == b"new" and [p.name for p in tmp_path.iterdir()] == ["a.png"]
    with pytest.raises(pipeline.OutputError, match="is a folder"):
        write_file(tmp_path, b"x")


def _file(text: str):
    import tempfile
    from pathlib import Path

    folder = Path(tempfile.mkdtemp())
    (folder / "mine.toml").write_text(text, encoding="utf-8")
    return folder / "mine.toml"


SOURCES_HEAD = "sources (each figure as printed, its basis, what the catalog divides it by, date):"


def _h100_sources(name):
    import pandas as pd

    rows = [("hbm_bandwidth", "3.35 TB/s", "as-printed", "H100 datasheet", "2023-03")]
    frame = pd.DataFrame(rows, columns=["field", "printed", "basis", "source", "as_of"])
    return frame if name == "h100" else frame.iloc[:0]


def test_a_chip_shows_each_fields_source_in_place_of_its_source_text(monkeypatch):
    monkeypatch.setattr("pipeline.catalogs.sources.chip_sources", _h100_sources)
    lines = invoke("hardware", "h100").stdout.splitlines()
    assert not any(line.startswith("source ") for line in lines)
    at = lines.index(SOURCES_HEAD)
    assert lines[at + 1 : at + 3] == [
        "  hbm_bandwidth    3.35 TB/s  as-printed  2023-03",
        "      H100 datasheet",
    ]
    assert lines[at + 3 :] == [  # then its groups of the published calibration, in one line
        "Published calibration: matmul bf16, fp8; all_gather nvlink, 2, 4, 8 chips; "
        "reduce_scatter nvlink, 2, 4, 8 chips; all_reduce nvlink, 2, 4, 8 chips; "
        "all_to_all nvlink, 2, 4, 8 chips (pipeline calibrations)"
    ]
    assert lines[at - 1].startswith("as_of ")  # after the fields


def test_a_chip_without_sources_rows_keeps_its_source_text(monkeypatch):
    monkeypatch.setattr("pipeline.catalogs.sources.chip_sources", _h100_sources)
    lines = invoke("hardware", "a100").stdout.splitlines()
    assert any(line.startswith("source ") for line in lines)
    assert not any(line.startswith("sources") for line in lines)


def test_a_field_a_users_file_changed_is_said_and_the_source_text_kept(monkeypatch):
    monkeypatch.setattr("pipeline.catalogs.sources.chip_sources", _h100_sources)
    mine = _file("[h100]\nhbm_bandwidth = 3.0e12\n")
    lines = invoke("hardware", "h100", "--hardware", mine).stdout.splitlines()
    assert "hbm_bandwidth     3.00 TB/s" in lines
    said = "  hbm_bandwidth    3.35 TB/s  as-printed  2023-03  (overridden by a --hardware file)"
    assert said in lines
    assert any(line.startswith("source ") for line in lines)  # it names the file


def test_a_shipped_chip_lists_each_of_its_sources_rows_once():
    from pipeline.catalogs.sources import chip_sources

    rows = chip_sources("h100")
    if rows.empty:
        pytest.skip("no sources rows shipped for h100 yet")
    lines = invoke("hardware", "h100").stdout.splitlines()
    after = lines[lines.index(SOURCES_HEAD) + 1 :]
    fields = [line.split()[0] for line in after if line.startswith("  ") and line[2] != " "]
    assert sorted(fields) == sorted(rows["field"])
    assert not any(line.startswith("source ") for line in lines)


def test_the_issues_command_once_mi300x_is_in_the_catalog(tmp_path):
    """`pipeline hardware --compare mi300x h200 b200 tpu-v6e` (issue 21), chart included."""
    catalog = pipeline.catalog()
    if "mi300x" not in catalog.index:
        pytest.skip("mi300x is not in pipeline/data/hardware.csv yet")
    chart = tmp_path / "fleet.png"
    args = ("hardware", "--compare", "mi300x", "h200", "b200", "tpu-v6e", "--chart", chart)
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["chip", "mi300x", "h200", "b200", "tpu-v6e"]
    link = next(line for line in lines if line.startswith("default link"))
    assert link.split()[2:] == list(
        catalog.loc[["mi300x", "h200", "b200", "tpu-v6e"], "default_link"]
    )
    # the ridge: 1,307.4 TFLOP/s over 5.3 TB/s = 246.7 FLOP/byte, shown to 3 figures
    shown = next(line for line in lines if line.startswith("ridge bf16")).split()[3]
    assert shown == "247"
    assert_png(chart.read_bytes(), min_size=(1200, 800))


def test_a_chip_on_xgmi_shows_that_link():
    toml = (
        '[amdish]\npeak_bf16 = 1.3e15\nhbm_bandwidth = 5.3e12\ndefault_link = "xgmi"\n'
        'xgmi_bandwidth = 6.4e10\nxgmi_topology = "switch"\nxgmi_reach = 8\n'
    )
    result = invoke("hardware", "--compare", "amdish", "h100", "--hardware", _file(toml))
    rows = {line[:22].strip(): line[22:].split() for line in result.stdout.splitlines()[1:]}
    assert rows["default link"] == ["xgmi", "nvlink"]
    assert rows["link one-way (GB/s)"] == ["64.0", "450"]
    assert rows["link reach (chips)"] == ["8", "8"]
    assert rows["ridge bf16 (FLOP/byte)"][0] == "245"
