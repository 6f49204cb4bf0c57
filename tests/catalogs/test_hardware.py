"""The catalog: book values, sources, user files that add and override chips."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.catalogs.hardware import catalog_from, load_catalog
from pipeline.errors import InvalidHardwareFile

REQUIRED = [
    "tpu-v3",
    "tpu-v4p",
    "tpu-v5e",
    "tpu-v5p",
    "tpu-v6e",
    "tpu7x",
    "a100",
    "h100",
    "h200",
    "b200",
    "gb200",
]


def test_required_chips_have_sources_and_dates(catalog):
    chips = catalog.chips
    for name in REQUIRED:
        assert name in chips.index
        assert chips.loc[name, "source"] and chips.loc[name, "as_of"]
        assert chips.loc[name, "hbm_bandwidth"] > 0 and chips.loc[name, "peak_bf16"] > 0


def test_book_values(catalog):
    c = catalog.chips
    assert c.loc["tpu-v5e", "peak_bf16"] == 1.97e14  # roofline chapter
    assert c.loc["tpu-v5e", "peak_int8"] == 3.94e14
    assert c.loc["tpu-v5e", "hbm_bandwidth"] == 8.2e11  # the book's current text
    assert c.loc["tpu-v5e", "ici_bandwidth"] == 4.5e10  # one-way per link
    assert c.loc["tpu-v5e", "ici_latency"] == 1e-6  # 1 us per ICI hop
    assert c.loc["h100", "peak_bf16"] == 9.89e14  # dense, spec sheet, Q5
    assert c.loc["h100", "hbm_bandwidth"] == 3.35e12
    assert c.loc["h100", "peak_fp32"] > 0 and c.loc["h100", "peak_fp8"] > 0
    assert c.loc["tpu-v6e", "peak_bf16"] == pytest.approx(9.1e14, rel=0.02)  # intro: 9.1e14


def test_aliases_case_insensitive(catalog):
    assert catalog.resolve("V5E") == "tpu-v5e"
    assert catalog.resolve(" h100-sxm ") == "h100"
    assert catalog.resolve("h10") is None
    assert catalog.suggest("h10") == "h100"


def test_user_csv_overrides_and_adds(tmp_path):
    path = tmp_path / "mine.csv"
    path.write_text(
        "name,aliases,hbm_bandwidth,peak_bf16,default_link,ici_bandwidth,ici_topology,source,as_of\n"
        "V5E,,9e11,,,,,my measurement,2026-01-01\n"
        "mychip,mc,1e12,1e14,ici,1e10,ring,vendor sheet,2026-02-02\n",
        encoding="utf-8",
    )
    cat = load_catalog([path])
    assert cat.chips.loc["tpu-v5e", "hbm_bandwidth"] == 9e11
    assert cat.chips.loc["tpu-v5e", "peak_bf16"] == 1.97e14  # untouched fields stay
    assert cat.chips.loc["tpu-v5e", "source"] == "my measurement"
    assert cat.resolve("mc") == "mychip"
    assert cat.version != load_catalog().version


def test_user_toml(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text(
        '[mychip]\naliases = ["mc"]\npeak_bf16 = 1e14\nhbm_bandwidth = 1e12\nsource = "sheet"\n'
        "[h100]\nhbm_bandwidth = 3.0e12\n",
        encoding="utf-8",
    )
    cat = load_catalog([path])
    assert cat.chips.loc["mychip", "peak_bf16"] == 1e14
    assert cat.chips.loc["h100", "hbm_bandwidth"] == 3.0e12
    assert "overridden by" in cat.chips.loc["h100", "source"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "name,hbm_bandwdth\nx,1\n",
            "unknown column 'hbm_bandwdth' (did you mean 'hbm_bandwidth'?)",
        ),
        (
            "name,hbm_bandwidth,peak_bf16\nx,fast,1e14\n",
            "mine.csv:2: column hbm_bandwidth: 'fast' is not a positive number (SI units)",
        ),
        ("name,peak_bf16\nnewchip,1e14\n", "chip 'newchip': hbm_bandwidth is required"),
        (
            "name,aliases\nh200,v5e\n",
            "mine.csv:2: column aliases: alias 'v5e' of chip 'h200' is already a name or alias of chip 'tpu-v5e'",
        ),
    ],
)
def test_bad_user_files(tmp_path, text, message):
    path = tmp_path / "mine.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InvalidHardwareFile) as err:
        load_catalog([path])
    assert message in str(err.value)


def test_bad_extension(tmp_path):
    path = tmp_path / "mine.json"
    path.write_text("{}", encoding="utf-8")
    with pytest.raises(InvalidHardwareFile, match="must end in .csv or .toml"):
        load_catalog([path])


def test_builtin_aliases_are_unique(catalog):
    import pandas as pd

    from pipeline.catalogs.hardware import builtin_catalog_path

    shipped = pd.read_csv(builtin_catalog_path(), dtype=str, keep_default_na=False)
    spellings = [*shipped["name"]]
    for aliases in shipped["aliases"]:
        spellings += [a.strip().lower() for a in aliases.split(";") if a.strip()]
    assert len(spellings) == len(set(spellings))
    assert all(catalog.resolve(s) for s in spellings)


@pytest.mark.parametrize("value, says", [("1.2", "1.2 is above 1"), ("0", "not a positive")])
def test_hardware_file_efficiency_must_be_a_fraction(tmp_path, value, says):
    hw = tmp_path / "hw.csv"
    hw.write_text(f"name,hbm_efficiency\nv5e,{value}\n")
    with pytest.raises(InvalidHardwareFile, match=says) as err:
        load_catalog([hw])
    assert "hw.csv:2: column hbm_efficiency" in str(err.value)


def test_a_user_file_keeps_the_catalogs_aliases_and_case(tmp_path):
    path = tmp_path / "mine.csv"
    path.write_text("name,aliases\nh100,Hopper;H100-SXM\n", encoding="utf-8")
    cat = load_catalog([path])
    aliases = cat.chips.loc["h100", "aliases"].split(";")
    assert aliases[-1] == "Hopper" and len(aliases) == len(set(a.lower() for a in aliases))
    assert cat.resolve("hopper") == "h100" and cat.resolve("h100-sxm") == "h100"


def test_hardware_given_as_one_or_a_list_or_a_catalog_is_one_catalog(tmp_path):
    path = tmp_path / "hw.csv"
    path.write_text("name,hbm_capacity\nh100,1e11\n")
    base = catalog_from(None)
    assert catalog_from(base) is base
    one, listed = catalog_from(path), catalog_from([str(path)])
    assert one.chips.at["h100", "hbm_capacity"] == listed.chips.at["h100", "hbm_capacity"] == 1e11
    with pytest.raises(TypeError, match="hardware= takes"):
        catalog_from(b"bytes")


# the board power of the form factor each entry is (the vendors' datasheets, sources/<vendor>.csv)
BOARD_POWER = {
    "a100": 400.0,  # A100 80GB SXM (the PCIe card is 300 W)
    "h100": 700.0,  # H100 SXM "up to 700W (configurable)" (the PCIe card is 350 W)
    "h200": 700.0,  # H200 SXM (the NVL card is 600 W)
    "b200": 1000.0,  # HGX B200 "configurable up to 1,000W" (GB200's B200 is 1,200 W)
    "gb200": 1200.0,
    "mi300x": 750.0,
    "mi325x": 1000.0,
    "mi355x": 1400.0,
    "gaudi3": 900.0,  # HL-325L OAM
}


def test_board_power_is_the_form_factor_the_entry_is(catalog):
    tdp = catalog.chips["tdp"]
    assert tdp.dtype == float
    for name, watts in BOARD_POWER.items():
        assert tdp[name] == watts, name
    for name in ("tpu-v3", "tpu-v4p", "tpu-v5e", "tpu-v5p", "tpu-v6e", "tpu7x"):
        assert np.isnan(tdp[name]), name  # Google prints no per-chip power: blank, not guessed


def test_a_user_file_gives_a_board_power_or_leaves_it_blank(tmp_path):
    path = tmp_path / "mine.csv"
    path.write_text(
        "name,tdp,hbm_bandwidth,peak_bf16\nh100,650,,\nmychip,,1e12,1e14\nv5e,300,,\n",
        encoding="utf-8",
    )
    chips = load_catalog([path]).chips
    assert chips.at["h100", "tdp"] == 650.0 and chips.at["tpu-v5e", "tdp"] == 300.0
    assert np.isnan(chips.at["mychip", "tdp"])  # blank: no figure
    toml = tmp_path / "mine.toml"
    toml.write_text("[h200]\ntdp = 600\n[mychip]\nhbm_bandwidth = 1e12\npeak_bf16 = 1e14\n")
    chips = load_catalog([toml]).chips
    assert chips.at["h200", "tdp"] == 600.0 and np.isnan(chips.at["mychip", "tdp"])


@pytest.mark.parametrize("value", ["0", "-700", "700W", "inf"])
def test_a_board_power_that_is_not_a_positive_number_is_refused_at_its_cell(tmp_path, value):
    path = tmp_path / "mine.csv"
    path.write_text(f"name,tdp\nh100,\nh200,{value}\n", encoding="utf-8")  # blank: allowed
    with pytest.raises(InvalidHardwareFile) as err:
        load_catalog([path])
    assert f"mine.csv:3: column tdp: '{value}' is not a positive number (SI units)" in str(
        err.value
    )
