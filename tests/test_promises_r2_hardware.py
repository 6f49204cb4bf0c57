"""What the tool promises about hardware files (issue 16, round two): one test per finding of
the hostile-user probe on the catalog and user hardware files, each named for it."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pipeline
from pipeline.catalogs.hardware import load_catalog
from pipeline.errors import InvalidHardwareFile, PipelineError
from tests.helpers import toml_text

CHIP = "hbm_bandwidth = 1e12\npeak_bf16 = 1e14\n"
ROWS = [
    {"name": "a", "op": "matmul", "B": "1..64*2", "D": 8192, "F": 8192, "hardware": "v5e"},
    {"name": "b", "op": "matmul", "B": 128, "D": 4096, "F": 4096, "hardware": "h100"},
    {"name": "c", "op": "allreduce", "bytes": 1e9, "chips": 8, "hardware": "v6e"},
]


def refused(path: Path, text: str) -> str:
    """The message loading a hardware file holding `text` raises."""
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InvalidHardwareFile) as err:
        load_catalog([path])
    return str(err.value)


# ---------------------------------------------------------------- R5: one chip, two rows


@pytest.mark.parametrize(
    "text",
    [
        "name,aliases,hbm_bandwidth,peak_bf16\na1,a2,1e12,1e14\na2,,2e12,2e14\n",
        "name,aliases,hbm_bandwidth,peak_bf16\na2,,2e12,2e14\na1,a2,1e12,1e14\n",
        "name,aliases,hbm_bandwidth,peak_bf16\na1,x,1e12,1e14\na2,X,2e12,2e14\n",
    ],
)
def test_r05_alias_and_later_chip_clash(tmp_path, text):
    hw = tmp_path / "mine.csv"
    message = refused(hw, text)
    assert f"{hw}:2" in message and f"{hw}:3" in message


def test_r05_alias_and_later_chip_clash_in_toml(tmp_path):
    hw = tmp_path / "mine.toml"
    message = refused(hw, f'[a1]\naliases = ["a2"]\n{CHIP}\n[a2]\n{CHIP}')
    assert f"{hw}:1" in message and f"{hw}:6" in message


def test_r05_catalog_alias_and_name_in_one_file(tmp_path):
    hw = tmp_path / "mine.csv"
    message = refused(hw, "name,hbm_bandwidth\nv5e,1e12\n\ntpu-v5e,2e12\n")
    assert f"{hw}:2" in message and f"{hw}:4" in message and "'tpu-v5e'" in message
    toml = tmp_path / "mine.toml"
    message = refused(toml, "[v5e]\nhbm_bandwidth = 1e12\n[tpu-v5e]\nhbm_bandwidth = 2e12\n")
    assert f"{toml}:1" in message and f"{toml}:3" in message


def test_r05_toml_keys_differing_only_in_case(tmp_path):
    hw = tmp_path / "mine.toml"
    message = refused(hw, "[H100]\nhbm_bandwidth = 1e12\n\n[h100]\nhbm_bandwidth = 2e12\n")
    assert f"{hw}:1" in message and f"{hw}:4" in message
    message = refused(hw, "[h100]\nhbm_bandwidth = 1e12\n# mine\nHBM_Bandwidth = 2e12\n")
    assert f"{hw}:2" in message and f"{hw}:4" in message and "HBM_Bandwidth" in message


# ---------------------------------------------------------------- R11: aliases add up


def test_r11_user_aliases_add_to_the_catalogs(tmp_path):
    hw = tmp_path / "mine.toml"
    hw.write_text('[tpu-v5e]\naliases = ["lite"]\n')
    cat = load_catalog([hw])
    assert cat.resolve("lite") == "tpu-v5e" and cat.resolve("v5e") == "tpu-v5e"
    a = pipeline.analyze(ROWS[:1], hardware=hw)
    assert a.problems.empty and set(a.results["hardware"]) == {"tpu-v5e"}


# ---------------------------------------------------------------- R12: control characters


@pytest.mark.parametrize(
    ("suffix", "text", "where", "shown"),
    [
        (".toml", '[mine]\nsource = "a\\u0000b"\n' + CHIP, "mine.toml", "'a\\x00b'"),
        (".toml", '[mine]\nsource = "a\\u001b[2Jb"\n' + CHIP, "mine.toml", "'a\\x1b[2Jb'"),
        (".toml", '["x\\u0000"]\n' + CHIP, "mine.toml", "'x\\x00'"),
        (".toml", '[mine]\naliases = ["m\\u0007"]\n' + CHIP, "mine.toml", "'m\\x07'"),
        (".csv", "name,hbm_bandwidth,peak_bf16,source\nmine,1e12,1e14,a\x1bb\n", "mine.csv:2", "'a\\x1bb'"),
    ],
)  # fmt: skip
def test_r12_control_characters_in_parsed_values(tmp_path, suffix, text, where, shown):
    message = refused(tmp_path / f"mine{suffix}", text)
    assert where in message and shown in message and "control character" in message


def test_r12_control_characters_in_a_dataframe():
    frame = pd.DataFrame({"name": ["mine"], "hbm_bandwidth": [1e12], "peak_bf16": [1e14]})
    frame["vendor"] = "e\u2028vil\x00"
    with pytest.raises(
        InvalidHardwareFile, match=r"rows 1>:2: column vendor: .*'e\\u2028vil\\x00'"
    ):
        load_catalog([frame])


# ---------------------------------------------------------------- R13: duplicate columns


@pytest.mark.parametrize(
    ("header", "first", "second"),
    [("name,name", "'name'", "'name'"), ("name,peak_bf16,PEAK_BF16", "'peak_bf16'", "'PEAK_BF16'")],
)
def test_r13_duplicate_columns(tmp_path, header, first, second):
    hw = tmp_path / "mine.csv"
    message = refused(hw, f"{header}\n" + ",".join(["h100"] + ["1e14"] * header.count(",")) + "\n")
    assert f"{hw}:1" in message and first in message and second in message
    assert "columns" in message


def test_r13_duplicate_columns_in_a_dataframe():
    frame = pd.DataFrame([["h100", 1e14, 2e14]], columns=["name", "peak_bf16", "Peak_BF16"])
    with pytest.raises(InvalidHardwareFile, match="'peak_bf16'.*'Peak_BF16'"):
        load_catalog([frame])


# ---------------------------------------------------------------- R22: hardware= inputs


def test_r22_catalog_frame_round_trips_as_hardware():
    plain = pipeline.analyze(ROWS)
    again = pipeline.analyze(ROWS, hardware=pipeline.catalog())
    pd.testing.assert_frame_equal(plain.results, again.results)
    assert plain.hardware == again.hardware
    pd.testing.assert_frame_equal(pipeline.catalog(pipeline.catalog()), pipeline.catalog())


@pytest.mark.parametrize("bad", [{"name": "x"}, 5, b"mine.csv", [3]])
def test_r22_hardware_of_another_type_is_a_clear_error(bad):
    with pytest.raises(TypeError, match=r"hardware= takes a CSV or TOML path"):
        pipeline.analyze(ROWS, hardware=bad)
    with pytest.raises(TypeError, match=r"hardware= takes"):
        pipeline.catalog(bad)


def test_r22_toml_integer_past_float64_is_too_large(tmp_path):
    hw = tmp_path / "mine.toml"
    message = refused(hw, "[mine]\nhbm_bandwidth = 1e12\npeak_bf16 = 1" + "0" * 400 + "\n")
    assert "peak_bf16" in message and "too large" in message and "not a positive" not in message
    message = refused(hw, "[mine]\nhbm_bandwidth = 1e12\npeak_bf16 = 1" + "0" * 5000 + "\n")
    assert "mine.toml" in message


# ---------------------------------------------------------------- R2: the files read


def test_r02_catalog_remembers_resolved_hardware_files(tmp_path, monkeypatch):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.toml").write_text(f"[mine]\n{CHIP}")
    (tmp_path / "b.csv").write_text("name,hbm_bandwidth\nh100,3e12\n")
    monkeypatch.chdir(tmp_path / "sub")
    first = load_catalog(["a.toml"])
    assert first.files == ((tmp_path / "sub" / "a.toml").resolve(),)
    assert all(f.is_absolute() for f in first.files)
    both = load_catalog([first, Path("../b.csv")])  # a catalog combined with a file
    assert both.files == (first.files[0], (tmp_path / "b.csv").resolve())
    assert both.resolve("mine") == "mine" and both.chips.loc["h100", "hbm_bandwidth"] == 3e12
    assert load_catalog().files == ()
    assert load_catalog([pd.DataFrame({"name": ["h100"], "hbm_bandwidth": [1e12]})]).files == ()
    assert pipeline.load_hardware(["a.toml"]).files == first.files


# ---------------------------------------------------------------- fuzz: load or refuse

FUZZ = settings(  # make soak sets FUZZ_EXAMPLES=1000
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "30")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
FIELDS = ["name", "aliases", "hbm_bandwidth", "peak_bf16", "default_link", "ici_bandwidth",
          "ici_topology", "source", "hbm_efficiency"]  # fmt: skip
key = st.one_of(
    st.sampled_from([*FIELDS, "NAME", "Peak_BF16", "peak_bf1", "aliases"]), st.text(max_size=6)
)
spelling = st.one_of(
    st.sampled_from(["mine", "v5e", "tpu-v5e", "H100", "a1", "a2", "", " ", "x;y"]),
    st.text(alphabet=st.characters(max_codepoint=0x2030), max_size=6),
)
value = st.one_of(
    spelling,
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(min_value=-(10**500), max_value=10**500).map(str),
    st.sampled_from(["1e12", "0.5", "1e400", "ring", "ici", "\x00", "\x1b[2J", "a\nb", '"']),
)


def _toml_value(text: str) -> str:
    if text.lstrip("-").isdigit() and len(text) < 4000 or text in ("inf", "nan", "1e12"):
        return text  # a bare TOML number
    return f'"{toml_text(text)}"'


@FUZZ
@given(
    rows=st.lists(st.lists(st.tuples(key, value), min_size=1, max_size=5), min_size=1, max_size=3),
    names=st.lists(spelling, min_size=3, max_size=3),
    toml=st.booleans(),
)
def test_fuzz_hardware_files_load_or_raise_a_pipeline_error(tmp_path_factory, rows, names, toml):
    folder = tmp_path_factory.mktemp("hw")
    if toml:
        hw = folder / "mine.toml"
        text = "".join(
            f'["{toml_text(name)}"]\n'
            + "".join(f'"{toml_text(k)}" = {_toml_value(v)}\n' for k, v in dict(row).items())
            for name, row in zip(names, rows, strict=False)
        )
    else:
        hw = folder / "mine.csv"
        header = [k for k, _ in rows[0]]
        lines = [header] + [[v for _, v in row] for row in rows]
        text = "\n".join(",".join(_csv_cell(c) for c in line) for line in lines) + "\n"
    hw.write_bytes(text.encode("utf-8", "surrogatepass"))
    try:
        load_catalog([hw])
    except PipelineError:
        pass
    frame = pd.DataFrame([dict(row) for row in rows])
    try:
        load_catalog([frame])
    except PipelineError:
        pass


def _csv_cell(text: str) -> str:
    return '"' + text.replace('"', '""') + '"' if any(c in text for c in ',"\n\r') else text
