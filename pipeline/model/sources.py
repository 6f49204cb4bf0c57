"""Where each catalog figure comes from: pipeline/data/sources/<vendor>.csv holds one row per
(chip, field) with the figure as its source prints it ("1,979 TFLOPS"), its basis (dense or
sparse, one-way or bidirectional, ...) and the divisor for a system figure; this module reads
those files and turns a printed figure into the SI value the catalog keeps
(docs/model.md#the-hardware-catalog)."""

from __future__ import annotations

import functools
import re
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

import pandas as pd

from pipeline.errors import BrokenInstall, InvalidHardwareFile, printable, quoted
from pipeline.model.spellings import spelling
from pipeline.textfile import csv_rows, decode_utf8

FILE_COLUMNS = ("name", "field", "printed", "basis", "per", "source", "as_of")
COLUMNS = (*FILE_COLUMNS, "file", "line")  # file: the vendor file's name; line: its line
SHOWN = ("field", "printed", "basis", "source", "as_of")  # chip_sources()

# what a printed figure measures (parse_printed's unit_kind)
FLOPS, BYTES, BYTES_PER_S, SECONDS, COUNT = "FLOP/s", "bytes", "bytes/s", "seconds", "count"
NUMBER = "number"  # a bare number (an efficiency)

# basis -> the divisor it implies beyond `per`: a sparse (2:4) peak is twice the dense one, a
# bidirectional link figure twice the one-way one; the catalog keeps dense and one-way
BASES = {
    "dense": 1.0,
    "sparse": 2.0,
    "one-way": 1.0,
    "bidirectional": 2.0,
    "as-printed": 1.0,
    "assumed": 1.0,
    "text": None,  # topology, default_link, architecture: words, no number
}

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
}
# counts (a link's reach), lower-case: matched case-insensitively (GPUs, chips)
_COUNT_UNITS = {f"{thing}{s}" for thing in ("chip", "gpu", "tpu", "accelerator") for s in ("s", "")}
_FIGURE = re.compile(
    r"\s*(?P<number>(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?(?:[eE][+-]?\d+)?"
    r"|\.\d+(?:[eE][+-]?\d+)?)\s*(?P<unit>.*?)\s*"
)
VALID_UNITS = (
    "FLOP/s, TFLOPS, PFLOPS, TOPS, POPS; B, GB, TB, GiB, TiB; B/s, GB/s, TB/s, Gb/s, Tb/s; "
    "s, ms, us, ns; chips, GPUs, accelerators"
)


def parse_printed(text: str) -> tuple[float, str]:
    """A printed figure ("1,979 TFLOPS", "80 GB", "900 GB/s", "400 Gb/s", "1 us", "72 GPUs")
    as (its SI value, what it measures: FLOPS, BYTES, BYTES_PER_S, SECONDS, COUNT or
    NUMBER). GB and TB are decimal, GiB and TiB binary, bits are eighths of bytes.
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


def sources_folder() -> Traversable:
    """The folder of the shipped sources files, pipeline/data/sources/."""
    return resources.files("pipeline") / "data" / "sources"


def read_sources(folder: Traversable) -> pd.DataFrame:
    """Every <vendor>.csv in `folder` (none, or a missing folder, gives no rows): COLUMNS,
    `per` a float (blank: 1), name and field lower-case."""
    files = sorted(
        (f for f in folder.iterdir() if f.is_file() and f.name.endswith(".csv")),
        key=lambda f: f.name,
    ) if folder.is_dir() else []  # fmt: skip
    frames = [_read_file(f) for f in files]
    frames = [f for f in frames if len(f)]
    if not frames:
        return pd.DataFrame({c: pd.Series(dtype=float if c == "per" else object) for c in COLUMNS})
    return pd.concat(frames, ignore_index=True)


def _read_file(file: Traversable) -> pd.DataFrame:
    path = Path("sources") / file.name  # as messages name it
    text = decode_utf8(path, file.read_bytes(), InvalidHardwareFile)
    header, rows, lines = csv_rows(path, text, InvalidHardwareFile)
    header = [h.strip().lower() for h in header]
    if header[: len(FILE_COLUMNS)] != list(FILE_COLUMNS):
        raise InvalidHardwareFile(
            f"{printable(path)}:1: the header must be {','.join(FILE_COLUMNS)}, not "
            f"{printable(','.join(header))}"
        )
    width = len(FILE_COLUMNS)
    cells = [[c.strip() for c in (row + [""] * width)[:width]] for row in rows]
    frame = pd.DataFrame(cells, columns=list(FILE_COLUMNS), dtype=object)
    for col in ("name", "field", "basis"):
        frame[col] = frame[col].str.lower()
    per = pd.to_numeric(frame["per"].where(frame["per"] != "", "1"), errors="coerce")
    for i in (~(per > 0)).to_numpy().nonzero()[0]:
        raise InvalidHardwareFile(
            f"{printable(path)}:{lines[i]}: column per: {quoted(frame['per'].iat[i])} is not a "
            "positive number (the divisor of a system figure: 8 for an 8-GPU total, else 1)"
        )
    frame["per"] = per.astype(float)
    frame["file"] = file.name
    frame["line"] = lines
    return frame


@functools.cache
def _shipped() -> pd.DataFrame:
    """The shipped rows; an installation without them is broken, never a catalog with no
    sources (`pipeline hardware` would print none and exit 0)."""
    folder = sources_folder()
    rows = read_sources(folder)
    if rows.empty:
        raise BrokenInstall(f"the hardware catalog's sources ({folder}/<vendor>.csv) are missing")
    return rows


def load_sources() -> pd.DataFrame:
    """Every shipped sources row (read once per process): COLUMNS, one row per (chip, field)."""
    return _shipped().copy()


def chip_sources(name: str) -> pd.DataFrame:
    """One chip's sources rows (its canonical name): field, printed, basis, source, as_of;
    no rows for a chip without any (a user's)."""
    rows = _shipped()
    return rows.loc[rows["name"] == spelling(name), list(SHOWN)].reset_index(drop=True)
