"""Per-field sources: printed figures read into SI values, the sources files read, and the
traps over the whole shipped catalog that compare each figure with its source (every field
has one sources row; no peak is a sparse figure; capacities in decimal bytes as printed; link
bandwidth one-way; a board power as printed for the entry's form factor, or a row saying the
vendor prints none). Each trap is also shown failing on a deliberately wrong row."""

from __future__ import annotations

import math
import re

import pandas as pd
import pytest

from pipeline.catalogs import sources
from pipeline.catalogs.checks import TOLERANCE, UNITS, _blank, _num, _trap
from pipeline.catalogs.hardware import LINKS, PEAK_COLUMNS, load_catalog
from pipeline.catalogs.sources import (
    BASES,
    COLUMNS,
    chip_sources,
    load_sources,
    read_sources,
)
from pipeline.errors import InvalidHardwareFile, quoted

CHIPS = load_catalog().chips  # the shipped catalog
SOURCES = load_sources()
NAMES = list(CHIPS.index)
LINK_BANDWIDTHS = tuple(f"{link}_bandwidth" for link in LINKS)
HEADER = "name,field,printed,basis,per,source,as_of\n"


# ---------------------------------------------------------------- printed figures

# what a printed figure measures (parse_printed's unit_kind)
FLOPS, BYTES, BYTES_PER_S, SECONDS, COUNT = "FLOP/s", "bytes", "bytes/s", "seconds", "count"
WATTS = "watts"
NUMBER = "number"  # a bare number (an efficiency)

TEXT = "text"  # a sourced field of words (topology, default_link, architecture)
# a sourced field (a pattern) -> what its printed figure measures and the bases it may have
FIELD_RULES = (
    ("peak_.+", FLOPS, ("dense", "sparse")),
    ("hbm_capacity", BYTES, ("as-printed",)),
    ("hbm_bandwidth", BYTES_PER_S, ("as-printed", "assumed")),
    (".+_bandwidth", BYTES_PER_S, ("one-way", "bidirectional", "assumed")),
    (".+_latency", SECONDS, ("as-printed", "assumed")),
    (".+_reach", COUNT, ("as-printed", "assumed")),
    (".+_efficiency", NUMBER, ("as-printed", "assumed")),
    ("tdp", WATTS, ("as-printed", "unpublished")),  # unpublished: blank, said in its own row
    ("architecture|default_link|.+_topology", TEXT, ("text", "assumed")),
)


def field_rule(field: str) -> tuple[str, tuple[str, ...]] | None:
    """What a field's sources row prints (a unit kind of parse_printed, or TEXT) and the bases
    it may have (FIELD_RULES); None for a field that takes no source (name, aliases, ...)."""
    return next((r[1:] for r in FIELD_RULES if re.fullmatch(r[0], field)), None)


_PREFIX = {"": 1.0, "K": 1e3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}
_BINARY = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50}
# FLOP/s spellings, upper-case: matched case-insensitively (TFLOPs, TFLOPS, TFLOP/s)
_FLOP_UNITS = {
    f"{prefix}{unit}".upper(): factor
    for prefix, factor in _PREFIX.items()
    for unit in ("FLOPS", "FLOP/s", "OPS", "OP/s")
}
# bytes, bits and seconds, matched as written: GB/s is not Gb/s, ms is not Ms
_CASED_UNITS = {
    **{f"{p}B": (f, BYTES) for p, f in (_PREFIX | _BINARY).items()},
    **{f"{p}B/s": (f, BYTES_PER_S) for p, f in (_PREFIX | _BINARY).items()},
    **{f"{p}b/s": (f / 8, BYTES_PER_S) for p, f in _PREFIX.items()},
    **{f"{p}bps": (f / 8, BYTES_PER_S) for p, f in _PREFIX.items()},
    **{"s": (1.0, SECONDS), "ms": (1e-3, SECONDS), "us": (1e-6, SECONDS)},
    **{"\u00b5s": (1e-6, SECONDS), "\u03bcs": (1e-6, SECONDS), "ns": (1e-9, SECONDS)},
    **{"W": (1.0, WATTS), "kW": (1e3, WATTS)},
}
# counts (a link's reach), lower-case: matched case-insensitively (GPUs, chips)
_COUNT_UNITS = {f"{thing}{s}" for thing in ("chip", "gpu", "tpu", "accelerator") for s in ("s", "")}
_FIGURE = re.compile(
    r"\s*(?P<number>(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?(?:[eE][+-]?\d+)?"
    r"|\.\d+(?:[eE][+-]?\d+)?)\s*(?P<unit>.*?)\s*"
)
VALID_UNITS = (
    "FLOP/s, TFLOPS, PFLOPS, TOPS, POPS; B, GB, TB, GiB, TiB; B/s, GB/s, TB/s, Gb/s, Tb/s; "
    "s, ms, us, ns; W, kW; chips, GPUs, accelerators"
)


def parse_printed(text: str) -> tuple[float, str]:
    """A printed figure ("1,979 TFLOPS", "80 GB", "900 GB/s", "400 Gb/s", "1 us", "700W",
    "72 GPUs") as (its SI value, what it measures: FLOPS, BYTES, BYTES_PER_S, SECONDS, WATTS,
    COUNT or NUMBER). GB and TB are decimal, GiB and TiB binary, bits are eighths of bytes.
    ValueError when the number or the unit is not one of these."""
    found = _FIGURE.fullmatch(str(text))
    if found is None:
        raise ValueError(
            f"printed figure {quoted(text)} does not start with a number "
            "(e.g. '1,979 TFLOPS', '1.97e14 FLOP/s')"
        )
    value = float(found["number"].replace(",", ""))
    unit = found["unit"]
    if not unit:
        return value, NUMBER
    if unit.upper() in _FLOP_UNITS:
        return value * _FLOP_UNITS[unit.upper()], FLOPS
    if unit in _CASED_UNITS:
        factor, kind = _CASED_UNITS[unit]
        return value * factor, kind
    if unit.lower() in _COUNT_UNITS:
        return value, COUNT
    raise ValueError(
        f"printed figure {quoted(text)}: unknown unit {quoted(unit)}; use one of {VALID_UNITS}"
    )


def catalog_value(printed: str, basis: str, per: float = 1.0) -> float:
    """The value the catalog keeps for a printed figure: printed / per, halved for a sparse
    peak or a bidirectional link figure. ValueError for an unknown basis or unit."""
    if basis not in BASES:
        raise ValueError(f"unknown basis {quoted(basis)}; use one of {', '.join(BASES)}")
    divisor = BASES[basis]
    if divisor is None:
        raise ValueError(f"basis {quoted(basis)} has no number; {quoted(printed)} is words")
    if not per > 0:
        raise ValueError(f"per = {per!r} must be a positive divisor (8 for an 8-GPU total)")
    return parse_printed(printed)[0] / per / divisor


# ---------------------------------------------------------------- the traps, against sources


UNPUBLISHED = "unpublished"  # the basis of a row saying the vendor prints no such figure
SAID_WHEN_BLANK = ("tdp",)  # fields whose blank is said in a sources row (never guessed)


def sourced_fields(row: pd.Series) -> list[str]:
    """A chip's fields that need a sources row: every non-blank number, each topology, the
    default link and the architecture; a board power (tdp) even when blank, its row then
    saying the vendor publishes none."""
    return [
        str(f)
        for f, v in row.items()
        if field_rule(str(f)) and (not _blank(v) or str(f) in SAID_WHEN_BLANK)
    ]


# Peaks in a fixed ratio to the same chip's bf16 peak, per architecture, from the datasheets
# fleet.UNITS cites (H100: tf32 494.7, bf16 989, fp8 1979, int8 1979 TFLOPS): one peak entered as its
# sparse figure breaks them even where its sources row says "dense". fp32 (vector units) and
# ratios the datasheets do not fix (B300's int8 and fp4, L40S's int4) are left out.
BF16_RATIOS: dict[str, dict[str, float]] = {
    **{tpu: {"int8": 1.0} for tpu in ("tpu-v3", "tpu-v4")},  # as the book prints them
    **{tpu: {"int8": 2.0} for tpu in ("tpu-v5e", "tpu-v5p", "tpu-v6e")},
    "tpu7x": {"fp8": 2.0},
    "ampere": {"tf32": 0.5, "fp16": 1.0, "int8": 2.0, "int4": 4.0},
    "hopper": {"tf32": 0.5, "fp16": 1.0, "fp8": 2.0, "int8": 2.0},
    "ada": {"tf32": 0.5, "fp16": 1.0, "fp8": 2.0, "int8": 2.0},
    "blackwell": {"tf32": 0.5, "fp16": 1.0, "fp8": 2.0, "int8": 2.0, "fp4": 4.0},
    "blackwell-ultra": {"fp16": 1.0, "fp8": 2.0},
    "cdna3": {"tf32": 0.5, "fp16": 1.0, "fp8": 2.0, "int8": 2.0},
    "cdna4": {"fp16": 1.0, "fp8": 2.0, "int8": 2.0, "fp4": 4.0},
    "gaudi3": {"fp8": 1.0},
}
RATIO_TOLERANCE = 0.03  # vendors round each figure on its own (L40S: tf32 183, bf16 362.05)


_DATE = re.compile(r"\d{4}-\d{2}(-\d{2})?")


def coverage_problems(name: str, row: pd.Series, rows: pd.DataFrame) -> list[str]:
    """Each field of chip `name` that needs a source has exactly one of its sources `rows`,
    and each row a source text and a date."""
    problems = []
    for field in sourced_fields(row):
        found = rows[rows["field"] == field]
        if found.empty and _blank(row[field]):
            problems.append(
                f"{name} {field} is blank and has no sources row; add one citing the figure, or "
                f"with basis {UNPUBLISHED} and printed blank saying the vendor publishes none"
            )
        elif found.empty:
            problems.append(
                f"{name} {field} = {_shown(row[field])} has no sources row; add one to "
                "pipeline/data/sources/<vendor>.csv (name,field,printed,basis,per,source,as_of)"
            )
        elif len(found) > 1:
            places = ", ".join(_at(r) for r in found.itertuples())
            problems.append(f"{name} {field} has {len(found)} sources rows ({places}); keep one")
    for r in rows.itertuples():
        if not str(r.source).strip():
            problems.append(f"{_at(r)}: {name} {r.field}: no source; cite the document and where")
        if not _DATE.fullmatch(str(r.as_of)):
            problems.append(
                f"{_at(r)}: {name} {r.field}: as_of {quoted(r.as_of)} is not a date "
                "(YYYY-MM-DD, or YYYY-MM)"
            )
    return problems


def orphan_problems(chips: pd.DataFrame, sources: pd.DataFrame) -> list[str]:
    """Sources rows that name no catalog chip, or a field their chip leaves blank."""
    problems = []
    needed = {str(name): set(sourced_fields(row)) for name, row in chips.iterrows()}
    for r in sources.itertuples():
        if r.name not in needed:
            problems.append(f"{_at(r)}: no catalog chip {quoted(r.name)}")
        elif r.basis == UNPUBLISHED and not _blank(chips.at[r.name, r.field]):
            problems.append(
                f"{_at(r)}: {r.name} {r.field} = {_shown(chips.at[r.name, r.field])} but its row "
                "says the vendor publishes none; cite the figure or leave the field blank"
            )
        elif r.field not in needed[r.name]:
            problems.append(
                f"{_at(r)}: {r.name} has no {quoted(r.field)} in the catalog (blank, or not a "
                "field that takes a source); remove the row or fill the field"
            )
    return problems


def value_problems(
    name: str, row: pd.Series, rows: pd.DataFrame, fields: tuple[str, ...] | None = None
) -> list[str]:
    """Chip `name`'s sourced fields (those in `fields`, default all) against their sources
    `rows`: a basis the field allows (field_rule), a unit of its kind, and the catalog value
    equal to catalog_value(printed, basis, per) within TOLERANCE: a sparse peak halved, a
    bidirectional link halved, a capacity in decimal bytes as printed."""
    problems = []
    for field in sourced_fields(row):
        if fields is not None and field not in fields:
            continue
        kind, bases = field_rule(field)
        for r in rows[rows["field"] == field].itertuples():
            said = f"{_at(r)}: {name} {field}"
            if r.basis not in bases:
                problems.append(
                    f"{said}: basis {quoted(r.basis)}; this field takes {' or '.join(bases)}"
                )
                continue
            if r.basis == UNPUBLISHED and str(r.printed).strip():
                problems.append(
                    f"{said}: basis {UNPUBLISHED} but printed {quoted(r.printed)}; an unpublished "
                    "figure is printed blank (the source text says where none is printed)"
                )
            if kind == TEXT or r.basis == UNPUBLISHED:
                continue
            try:
                printed_kind = parse_printed(r.printed)[1]
                expected = catalog_value(r.printed, r.basis, r.per)
            except ValueError as exc:
                problems.append(f"{said}: {exc}")
                continue
            if printed_kind != kind:
                problems.append(f"{said}: {quoted(r.printed)} is in {printed_kind}, not {kind}")
                continue
            value = float(row[field])
            if not math.isclose(value, expected, rel_tol=TOLERANCE):
                per = f", per {r.per:g}" if r.per != 1 else ""
                problems.append(
                    f"{said} = {_num(value)} but {quoted(r.printed)} ({r.basis}{per}) gives "
                    f"{_num(expected)}{_hint(field, value / expected)}"
                )
    return problems


def ratio_problems(name: str, row: pd.Series) -> list[str]:
    """Chip `name`'s peaks in the ratios to its bf16 peak its architecture fixes (BF16_RATIOS):
    a sparse figure (x2) taken for a dense one, even where its source row agrees, breaks one."""
    bf16 = row.get("peak_bf16")
    ratios = BF16_RATIOS.get(str(row.get("architecture", "")).strip().lower(), {})
    problems = []
    for family, ratio in ratios.items():
        field = f"peak_{family}"
        if _blank(bf16) or _blank(row.get(field)):
            continue
        found = float(row[field]) / float(bf16)
        if not math.isclose(found, ratio, rel_tol=RATIO_TOLERANCE):
            problems.append(
                f"{field} / peak_bf16 = {_num(row[field])} / {_num(bf16)} = {_num(found)} on "
                f"{name}, but {row['architecture']} has {_num(ratio)}: one of them sparse?"
            )
    return problems


def _hint(field: str, ratio: float) -> str:
    trap = _trap(field, ratio)
    return f"; {trap[0]} that: {trap[2]}" if trap else ""


def _shown(value: object) -> str:
    return _num(value) if isinstance(value, float) else quoted(value)


def _at(r) -> str:
    """Where a sources row is: sources/<vendor>.csv:LINE."""
    return f"sources/{r.file}:{r.line}"


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
        ("700W", 700.0, WATTS),
        ("1,000 W", 1000.0, WATTS),
        ("1.4 kW", 1400.0, WATTS),
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


def test_the_shipped_sources_are_read_once_and_handed_out_as_copies(monkeypatch):
    load_sources()  # read by now (if no test before read them)
    reads = []
    real = sources.read_sources
    monkeypatch.setattr(
        sources, "read_sources", lambda folder: reads.append(folder) or real(folder)
    )
    first = load_sources()
    first["printed"] = "changed"
    assert "changed" not in set(load_sources()["printed"])
    assert reads == []  # the files are not read again, per call


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


def test_the_ratios_name_families_the_architecture_has():
    for arch, ratios in BF16_RATIOS.items():
        assert set(ratios) <= UNITS[arch], arch


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


def test_a_board_power_fails_without_its_row_or_against_a_wrong_one():
    h100 = CHIPS.loc["h100"]
    assert "tdp" in sourced_fields(h100)
    printed = rows(("h100", "tdp", "700W", "as-printed"))
    assert value_problems("h100", h100, printed, ("tdp",)) == []
    others = rows(*(("h100", f, "as printed", "text") for f in sourced_fields(h100) if f != "tdp"))
    assert coverage_problems("h100", h100, others) == [
        "h100 tdp = 700 has no sources row; add one to pipeline/data/sources/<vendor>.csv "
        "(name,field,printed,basis,per,source,as_of)"
    ]
    pcie = rows(("h100", "tdp", "350W", "as-printed"))  # the PCIe card's, not the SXM module's
    assert value_problems("h100", h100, pcie, ("tdp",)) == [
        "sources/test.csv:2: h100 tdp = 700 but '350W' (as-printed) gives 350"
    ]
    bidirectional = rows(("h100", "tdp", "700W", "bidirectional"))
    assert value_problems("h100", h100, bidirectional, ("tdp",)) == [
        "sources/test.csv:2: h100 tdp: basis 'bidirectional'; this field takes as-printed or "
        "unpublished"
    ]


def test_a_blank_board_power_is_said_never_guessed():
    v5e = CHIPS.loc["tpu-v5e"]
    assert math.isnan(v5e["tdp"]) and "tdp" in sourced_fields(v5e)  # blank, still sourced
    others = [("tpu-v5e", f, "as printed", "text") for f in sourced_fields(v5e) if f != "tdp"]
    said = rows(("tpu-v5e", "tdp", "", "unpublished"), *others)
    assert coverage_problems("tpu-v5e", v5e, said) == []
    assert value_problems("tpu-v5e", v5e, said, ("tdp",)) == []
    assert coverage_problems("tpu-v5e", v5e, said.iloc[1:]) == [
        "tpu-v5e tdp is blank and has no sources row; add one citing the figure, or with basis "
        "unpublished and printed blank saying the vendor publishes none"
    ]
    guessed = rows(("tpu-v5e", "tdp", "", "unpublished"), ("h100", "tdp", "", "unpublished"))
    assert orphan_problems(CHIPS, guessed) == [
        "sources/test.csv:3: h100 tdp = 700 but its row says the vendor publishes none; cite "
        "the figure or leave the field blank"
    ]
    printed = rows(("tpu-v5e", "tdp", "200W", "unpublished"))
    assert value_problems("tpu-v5e", v5e, printed, ("tdp",)) == [
        "sources/test.csv:2: tpu-v5e tdp: basis unpublished but printed '200W'; an unpublished "
        "figure is printed blank (the source text says where none is printed)"
    ]
