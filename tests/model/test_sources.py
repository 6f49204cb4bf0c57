"""Per-field sources: printed figures read into SI values, the sources files read, and the
traps over the whole shipped catalog that compare each figure with its source (every field
has one sources row; no peak is a sparse figure; capacities in decimal bytes as printed; link
bandwidth one-way). Each trap is also shown failing on a deliberately wrong row."""

from __future__ import annotations

import pandas as pd
import pytest

from pipeline.errors import InvalidHardwareFile
from pipeline.model import sources
from pipeline.model.catalog import LINKS, PEAK_COLUMNS, load_catalog
from pipeline.model.fleet import (
    coverage_problems,
    orphan_problems,
    ratio_problems,
    sourced_fields,
    value_problems,
)
from pipeline.model.sources import (
    BYTES,
    BYTES_PER_S,
    COLUMNS,
    COUNT,
    FLOPS,
    SECONDS,
    catalog_value,
    chip_sources,
    load_sources,
    parse_printed,
    read_sources,
)

CHIPS = load_catalog().chips  # the shipped catalog
SOURCES = load_sources()
NAMES = list(CHIPS.index)
LINK_BANDWIDTHS = tuple(f"{link}_bandwidth" for link in LINKS)
HEADER = "name,field,printed,basis,per,source,as_of\n"


def rows_of(name: str, table: pd.DataFrame = SOURCES) -> pd.DataFrame:
    return table[table["name"] == name]


def rows(*spec: tuple) -> pd.DataFrame:
    """Sources rows built in a test: (name, field, printed, basis[, per])."""
    built = [
        {"name": s[0], "field": s[1], "printed": s[2], "basis": s[3],
         "per": float(s[4]) if len(s) > 4 else 1.0, "source": "test sheet",
         "as_of": "2025-01-01", "file": "test.csv", "line": i + 2}
        for i, s in enumerate(spec)
    ]  # fmt: skip
    return pd.DataFrame(built, columns=list(COLUMNS))


def wrong(name: str, field: str, value: float) -> pd.Series:
    """A copy of a shipped chip with one field changed."""
    row = CHIPS.loc[name].copy()
    row[field] = value
    return row


# ---------------------------------------------------------------- printed figures


@pytest.mark.parametrize(
    "printed, value, kind",
    [
        ("1,979 TFLOPS", 1.979e15, FLOPS),
        ("1.97e14 FLOP/s", 1.97e14, FLOPS),
        ("4614 TFLOPs", 4.614e15, FLOPS),  # Google's spelling
        ("2.3 PFLOP/s", 2.3e15, FLOPS),
        ("624 TOPS", 6.24e14, FLOPS),
        ("20 POPS", 2e16, FLOPS),
        ("80 GB", 8e10, BYTES),
        ("80GB", 8e10, BYTES),
        ("13.4 TB", 1.34e13, BYTES),
        ("80 GiB", 80 * 2**30, BYTES),
        ("1 TiB", 2**40, BYTES),
        ("3.35 TB/s", 3.35e12, BYTES_PER_S),
        ("900 GB/s", 9e11, BYTES_PER_S),
        ("400 Gb/s", 5e10, BYTES_PER_S),  # bits: an eighth
        ("1.8 Tb/s", 2.25e11, BYTES_PER_S),
        ("1 us", 1e-6, SECONDS),
        ("1 \u00b5s", 1e-6, SECONDS),
        ("600 ns", 6e-7, SECONDS),
        ("2.7 ms", 2.7e-3, SECONDS),
        ("72 GPUs", 72.0, COUNT),
        ("8,960 chips", 8960.0, COUNT),
        ("8 accelerators", 8.0, COUNT),
    ],
)
def test_printed_figures_become_si_values(printed, value, kind):
    got, got_kind = parse_printed(printed)
    assert got == pytest.approx(value, rel=1e-12) and got_kind == kind


@pytest.mark.parametrize(
    "printed, says",
    [
        ("80 GByte", "unknown unit 'GByte'"),
        ("80 gb", "unknown unit 'gb'"),  # bytes or bits? B and b are not guessed
        ("3 furlongs", "unknown unit 'furlongs'"),
        ("fast", "does not start with a number"),
        ("", "does not start with a number"),
    ],
)
def test_an_unknown_unit_is_refused_saying_what_is_valid(printed, says):
    with pytest.raises(ValueError, match="printed figure") as err:
        parse_printed(printed)
    assert says in str(err.value)
    if "unit" in says:
        assert "TFLOPS" in str(err.value) and "GiB" in str(err.value)


@pytest.mark.parametrize(
    "printed, basis, per, value",
    [
        ("989 TFLOPS", "dense", 1, 9.89e14),
        ("1,979 TFLOPS", "sparse", 1, 9.895e14),  # the catalog keeps half of a sparse figure
        ("900 GB/s", "bidirectional", 1, 4.5e11),  # and half of a bidirectional one
        ("450 GB/s", "one-way", 1, 4.5e11),
        ("720 PFLOPS", "sparse", 72, 5e15),  # an NVL72 rack's total, per GPU
        ("13.4 TB", "as-printed", 72, 1.34e13 / 72),
        ("1 us", "assumed", 1, 1e-6),
    ],
)
def test_catalog_value_halves_sparse_and_bidirectional_and_divides_by_per(
    printed, basis, per, value
):
    assert catalog_value(printed, basis, per) == pytest.approx(value, rel=1e-12)


@pytest.mark.parametrize(
    "basis, per, says",
    [
        ("dense-ish", 1, "unknown basis 'dense-ish'; use one of dense, sparse, one-way"),
        ("text", 1, "basis 'text' has no number"),
        ("dense", 0, "must be a positive divisor"),
    ],
)
def test_catalog_value_refuses_an_unknown_basis(basis, per, says):
    with pytest.raises(ValueError, match=says):
        catalog_value("989 TFLOPS", basis, per)


# ---------------------------------------------------------------- the files


def test_a_missing_folder_or_vendor_file_gives_the_rows_there_are(tmp_path):
    missing = read_sources(tmp_path / "sources")
    assert missing.empty and list(missing.columns) == list(COLUMNS)
    folder = tmp_path / "sources"
    folder.mkdir()
    assert read_sources(folder).empty
    (folder / "google.csv").write_text(
        HEADER + "# TPU v5e\n\nTPU-v5e,peak_bf16,197 TFLOPS,Dense,,the book,2025-02-04\n"
        'tpu-v5e,hbm_capacity,16 GB,as-printed,1,"the book, TPU table",2025-02\n',
        encoding="utf-8",
    )
    (folder / "notes.txt").write_text("not a sources file", encoding="utf-8")
    got = read_sources(folder)
    assert list(got["name"]) == ["tpu-v5e", "tpu-v5e"]  # lower-case, as the catalog's
    assert list(got["basis"]) == ["dense", "as-printed"]
    assert list(got["per"]) == [1.0, 1.0]  # blank: 1
    assert list(got["file"]) == ["google.csv"] * 2 and list(got["line"]) == [4, 5]
    assert got["source"].iat[1] == "the book, TPU table"


@pytest.mark.parametrize(
    "text, says",
    [
        ("name,field,value\nh100,peak_bf16,1\n", "sources/bad.csv:1: the header must be"),
        (HEADER + "h100,peak_bf16,989 TFLOPS,dense,eight,x,2025-01\n", "sources/bad.csv:2"),
        (HEADER + "h100,peak_bf16,989 TFLOPS,dense,0,x,2025-01\n", "column per: '0'"),
    ],
)
def test_a_malformed_sources_file_is_refused_at_its_line(tmp_path, text, says):
    (tmp_path / "bad.csv").write_text(text, encoding="utf-8")
    with pytest.raises(InvalidHardwareFile, match=says):
        read_sources(tmp_path)


def test_chip_sources_gives_a_chips_rows_or_none(monkeypatch):
    table = rows(("h100", "peak_bf16", "989 TFLOPS", "dense"), ("h200", "hbm_capacity", "141 GB", "as-printed"))  # fmt: skip
    monkeypatch.setattr(sources, "_shipped", lambda: table)
    got = chip_sources(" H100 ")
    assert list(got.columns) == ["field", "printed", "basis", "source", "as_of"]
    assert got.to_dict("records") == [
        {"field": "peak_bf16", "printed": "989 TFLOPS", "basis": "dense",
         "source": "test sheet", "as_of": "2025-01-01"}
    ]  # fmt: skip
    none = chip_sources("my-chip")
    assert none.empty and list(none.columns) == list(got.columns)


def test_the_shipped_sources_are_read_once_and_handed_out_as_copies():
    first = load_sources()
    first["printed"] = "changed"
    assert "changed" not in set(load_sources()["printed"])
    assert sources._shipped.cache_info().misses <= 1


# ---------------------------------------------------------------- traps: the shipped catalog


@pytest.mark.parametrize("name", NAMES)
def test_every_field_of_every_chip_has_exactly_one_sources_row(name):
    assert coverage_problems(name, CHIPS.loc[name], rows_of(name)) == []


def test_every_sources_row_names_a_catalog_chip_and_field():
    assert orphan_problems(CHIPS, SOURCES) == []


@pytest.mark.parametrize("name", NAMES)
def test_no_peak_is_a_sparse_figure(name):
    row = CHIPS.loc[name]
    assert value_problems(name, row, rows_of(name), PEAK_COLUMNS) == []
    assert ratio_problems(name, row) == []


@pytest.mark.parametrize("name", NAMES)
def test_capacities_are_decimal_bytes_as_printed(name):
    assert value_problems(name, CHIPS.loc[name], rows_of(name), ("hbm_capacity",)) == []


@pytest.mark.parametrize("name", NAMES)
def test_link_bandwidth_is_one_way(name):
    assert value_problems(name, CHIPS.loc[name], rows_of(name), LINK_BANDWIDTHS) == []


@pytest.mark.parametrize("name", NAMES)
def test_every_other_figure_matches_its_source(name):
    assert value_problems(name, CHIPS.loc[name], rows_of(name)) == []


# ---------------------------------------------------------------- each trap on a wrong row


def test_coverage_fails_on_a_missing_doubled_or_undated_row():
    h100 = CHIPS.loc["h100"]
    fields = sourced_fields(h100)
    assert {"peak_bf16", "nvlink_topology", "default_link", "architecture"} <= set(fields)
    assert "peak_fp4" not in fields and "source" not in fields  # blank, or not a figure
    complete = rows(*(("h100", f, "as printed", "text") for f in fields))
    assert coverage_problems("h100", h100, complete) == []
    missing = complete[complete["field"] != "peak_bf16"]
    assert coverage_problems("h100", h100, missing) == [
        "h100 peak_bf16 = 9.89e14 has no sources row; add one to pipeline/data/sources/"
        "<vendor>.csv (name,field,printed,basis,per,source,as_of)"
    ]
    again = rows(("h100", "peak_bf16", "989 TFLOPS", "dense")).assign(line=99)
    assert coverage_problems("h100", h100, pd.concat([complete, again])) == [
        "h100 peak_bf16 has 2 sources rows (sources/test.csv:5, sources/test.csv:99); keep one"
    ]
    undated = complete.assign(as_of=["2025-01-01"] * (len(complete) - 1) + ["soon"])
    (problem,) = coverage_problems("h100", h100, undated)
    assert "as_of 'soon' is not a date (YYYY-MM-DD, or YYYY-MM)" in problem


def test_orphans_fail_on_an_unknown_chip_or_a_blank_field():
    table = rows(("h100x", "peak_bf16", "989 TFLOPS", "dense"), ("h100", "peak_fp4", "1 PFLOPS", "dense"))  # fmt: skip
    assert orphan_problems(CHIPS, table) == [
        "sources/test.csv:2: no catalog chip 'h100x'",
        "sources/test.csv:3: h100 has no 'peak_fp4' in the catalog (blank, or not a field that "
        "takes a source); remove the row or fill the field",
    ]


def test_a_sparse_peak_fails_against_its_source_and_the_other_peaks():
    good = rows(("h100", "peak_bf16", "989 TFLOPS", "dense"))
    assert value_problems("h100", CHIPS.loc["h100"], good, PEAK_COLUMNS) == []
    halved = rows(("h100", "peak_bf16", "1,979 TFLOPS", "sparse"))  # printed sparse, kept half
    assert value_problems("h100", CHIPS.loc["h100"], halved, PEAK_COLUMNS) == []
    # the sparse figure stored: its dense source row gives it away
    sparse = wrong("h100", "peak_bf16", 1.979e15)
    assert value_problems("h100", sparse, good, PEAK_COLUMNS) == [
        "sources/test.csv:2: h100 peak_bf16 = 1.979e15 but '989 TFLOPS' (dense) gives 9.89e14; "
        "twice that: a sparse figure?"
    ]
    # ... and where its source row says the same ("1,979 TFLOPS" dense), the other peaks do
    agreeing = rows(("h100", "peak_bf16", "1,979 TFLOPS", "dense"))
    assert value_problems("h100", sparse, agreeing, PEAK_COLUMNS) == []
    problems = ratio_problems("h100", sparse)
    assert (
        "peak_fp8 / peak_bf16 = 1.979e15 / 1.979e15 = 1 on h100, but hopper has 2: one of them "
        "sparse?"
    ) in problems
    assert len(problems) == 4  # tf32, fp16, fp8 and int8 against bf16
    wrong_basis = rows(("h100", "peak_bf16", "989 TFLOPS", "as-printed"))
    assert value_problems("h100", CHIPS.loc["h100"], wrong_basis, PEAK_COLUMNS) == [
        "sources/test.csv:2: h100 peak_bf16: basis 'as-printed'; this field takes dense or sparse"
    ]
    wrong_unit = rows(("h100", "peak_bf16", "989 TB/s", "dense"))
    assert value_problems("h100", CHIPS.loc["h100"], wrong_unit, PEAK_COLUMNS) == [
        "sources/test.csv:2: h100 peak_bf16: '989 TB/s' is in bytes/s, not FLOP/s"
    ]


def test_a_gib_capacity_fails_against_its_decimal_source():
    printed = rows(("h100", "hbm_capacity", "80 GB", "as-printed"))
    assert value_problems("h100", CHIPS.loc["h100"], printed, ("hbm_capacity",)) == []
    as_gib = wrong("h100", "hbm_capacity", 85899345920.0)  # 80 GiB
    assert value_problems("h100", as_gib, printed, ("hbm_capacity",)) == [
        "sources/test.csv:2: h100 hbm_capacity = 8.59e10 but '80 GB' (as-printed) gives 8e10; "
        "1.0737 x that: GiB? vendors print decimal GB"
    ]
    assumed = rows(("h100", "hbm_capacity", "80 GB", "assumed"))  # a capacity is as printed
    assert (
        "this field takes as-printed"
        in value_problems("h100", CHIPS.loc["h100"], assumed, ("hbm_capacity",))[0]
    )


def test_a_bidirectional_link_figure_fails_unless_halved():
    bidirectional = rows(("h100", "nvlink_bandwidth", "900 GB/s", "bidirectional"))
    assert value_problems("h100", CHIPS.loc["h100"], bidirectional, LINK_BANDWIDTHS) == []
    taken_whole = wrong("h100", "nvlink_bandwidth", 9e11)
    assert value_problems("h100", taken_whole, bidirectional, LINK_BANDWIDTHS) == [
        "sources/test.csv:2: h100 nvlink_bandwidth = 9e11 but '900 GB/s' (bidirectional) gives "
        "4.5e11; twice that: a bidirectional figure? the catalog keeps one-way"
    ]
    as_dense = rows(("h100", "nvlink_bandwidth", "450 GB/s", "dense"))
    assert value_problems("h100", CHIPS.loc["h100"], as_dense, LINK_BANDWIDTHS) == [
        "sources/test.csv:2: h100 nvlink_bandwidth: basis 'dense'; this field takes one-way or "
        "bidirectional or assumed"
    ]


def test_a_system_figure_is_divided_by_per():
    rack = rows(("gb200", "peak_fp4", "720 PFLOPS", "dense", 72))
    assert value_problems("gb200", CHIPS.loc["gb200"], rack, PEAK_COLUMNS) == []
    not_divided = rows(("gb200", "peak_fp4", "720 PFLOPS", "dense"))
    (problem,) = value_problems("gb200", CHIPS.loc["gb200"], not_divided, PEAK_COLUMNS)
    assert "gb200 peak_fp4 = 1e16 but '720 PFLOPS' (dense) gives 7.2e17" in problem


def test_a_capacity_off_by_another_factor_is_not_called_gib():
    announced = wrong("b200", "hbm_capacity", 1.92e11)  # 192 GB announced, 180 GB shipping
    (problem,) = value_problems(
        "b200", announced, rows(("b200", "hbm_capacity", "180 GB", "as-printed")), ("hbm_capacity",)
    )
    assert problem.endswith("gives 1.8e11")  # a wrong figure, not a GiB one
