"""Where each catalog figure comes from: pipeline/data/sources/<vendor>.csv holds one row per
(chip, field) with the figure as its source prints it ("1,979 TFLOPS"), its basis (dense or
sparse, one-way or bidirectional, ...) and the divisor for a system figure; this module reads
those files (docs/model.md#the-hardware-catalog; tests/catalogs/test_sources.py turns each printed
figure into the SI value the catalog keeps and checks it)."""

from __future__ import annotations

import functools
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

import pandas as pd

from pipeline.catalogs.spellings import spelling
from pipeline.errors import BrokenInstall, InvalidHardwareFile, printable, quoted
from pipeline.textfile import csv_rows, decode_utf8

FILE_COLUMNS = ("name", "field", "printed", "basis", "per", "source", "as_of")
COLUMNS = (*FILE_COLUMNS, "file", "line")  # file: the vendor file's name; line: its line
SHOWN = ("field", "printed", "basis", "source", "as_of")  # chip_sources()

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
    "unpublished": None,  # the vendor prints no such figure: the field is blank, said so
}


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
