"""The user's price file (`--prices`, `prices=`; docs/input.md#prices): what a chip-hour costs,
a row per chip, CSV or Parquet (or a DataFrame) with columns hardware, usd_per_chip_hour,
source and date. No price ships with the tool: prices move and differ by provider. Chips are
named as the hardware catalog spells them; every wrong cell is refused at once with the file,
the line and the column; a price without its source or date is a warning; a blank price is no
price (the starter file of `pipeline template --prices` is all blanks)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.catalogs.hardware import Catalog, catalog_from
from pipeline.errors import InvalidPriceFile, OutputError, described, printable, quoted
from pipeline.textfile import (
    csv_rows,
    decode_utf8,
    read_bytes,
    refuse_existing,
    sha256_of,
    write_file,
)

PRICE_FILE_COLUMNS = ("hardware", "usd_per_chip_hour", "source", "date")
REQUIRED = ("hardware", "usd_per_chip_hour")
# where a starter file's reader might find a price (never a number: docs/input.md#prices)
WHERE_TO_LOOK = "your cloud provider's on-demand price page or your contract"
NOUN = "price file"
# a price's column left blank, a warning saying what to give
UNSAID = {"source": "say where it is from (a page, a contract)",
          "date": "say when it was read (YYYY-MM-DD): prices move"}  # fmt: skip
PRICES_PATH = "prices.csv"  # `pipeline template --prices` writes it when no PATH is given


@dataclass(frozen=True)
class Prices:
    """A price file read: USD per chip-hour by the catalog's chip name, the file (None for a
    DataFrame) and its SHA-256 (the manifest's), and the doubts about it (the run's warnings)."""

    usd_per_chip_hour: Mapping[str, float]
    label: str  # the file as given, or "<prices>" for a DataFrame
    path: Path | None = None
    sha256: str = ""
    warnings: tuple[str, ...] = field(default=())

    def missing(self, chips) -> list[str]:
        """The chips of `chips` the file gives no price for, A-Z."""
        return sorted({str(c) for c in chips} - set(self.usd_per_chip_hour))


def load_prices(given, catalog: Catalog) -> Prices:
    """A price file (a CSV or Parquet path) or DataFrame checked against `catalog`: every chip
    a catalog name or alias, once; every price a number above 0 (or blank: none); the
    columns hardware and usd_per_chip_hour there. InvalidPriceFile listing every problem."""
    if isinstance(given, Prices):
        return given
    if isinstance(given, pd.DataFrame):
        label, path, data = "<prices>", None, given.to_csv(index=False).encode()
        header, cells, lines = _frame_cells(given)
    elif isinstance(given, str | PathLike) and not isinstance(given, bytes):
        path = Path(given)
        data = read_bytes(path, InvalidPriceFile, NOUN)
        label = printable(path)
        header, cells, lines = _file_cells(path, data, label)
        path = path.resolve()
    else:
        raise TypeError(
            f"prices must be a path to a .csv or .parquet price file or a DataFrame, not "
            f"{described(given)}"
        )
    names = [str(h).strip().lower() for h in header]
    lacking = [c for c in REQUIRED if c not in names]
    if lacking:
        raise InvalidPriceFile(
            f"{label}:1: missing column(s) {', '.join(map(quoted, lacking))}; a price file's "
            f"header is {','.join(PRICE_FILE_COLUMNS)}"
        )
    at = {c: names.index(c) for c in PRICE_FILE_COLUMNS if c in names}
    prices: dict[str, float] = {}
    first: dict[str, int] = {}
    problems, warnings = [], []
    for row, line in zip(cells, lines, strict=True):
        cell = {c: (row[k].strip() if k < len(row) else "") for c, k in at.items()}

        def where(column: str, line=line) -> str:
            return f"{label}:{line}: column {column}: "

        chip = catalog.resolve(cell["hardware"]) if cell["hardware"] else None
        if chip is None:
            problems.append(where("hardware") + _unknown(catalog, cell["hardware"]))
        elif chip in first:
            problems.append(
                where("hardware") + f"{quoted(cell['hardware'])} is chip {chip} again (line "
                f"{first[chip]}); give each chip one price"
            )
        else:
            first[chip] = line
        text = cell["usd_per_chip_hour"]
        if text == "":  # no price yet (the starter's rows): the chip's cost stays blank
            continue
        price = _number(text)
        if price is None or not price > 0:
            problems.append(
                where("usd_per_chip_hour") + f"{quoted(text)} is not a price; give US dollars "
                "per chip-hour, a number above 0 (e.g. 2.5)"
            )
            continue
        for column, say in UNSAID.items():
            if not cell.get(column, ""):
                warnings.append(where(column) + f"the price of {chip} has no {column}; {say}")
        if chip is not None:
            prices[chip] = price
    if problems:
        raise InvalidPriceFile(f"invalid {NOUN}:\n  " + "\n  ".join(problems))
    return Prices(prices, label, path, sha256_of(data), tuple(warnings))


def price_warnings(prices: Prices | None, chips) -> tuple[str, ...]:
    """The run's warnings of its prices: the file's doubts, then once per chip of `chips` (the
    run's) without a price, that its cost is blank."""
    if prices is None:
        return ()
    return (*prices.warnings, *(
        f"{prices.label}: no price for {chip}; the cost of its rows is blank (add a row "
        f"hardware={chip} to give one)" for chip in prices.missing(chips)
    ))  # fmt: skip


def price_files(prices: Prices | None) -> tuple[Path, ...]:
    """The price file read (none for a DataFrame or no prices): an input a run protects."""
    return () if prices is None or prices.path is None else (prices.path,)


def _unknown(catalog: Catalog, text: str) -> str:
    if not text:
        return "empty hardware; name a chip from `pipeline hardware`"
    hint = catalog.suggest(text)
    return f"unknown hardware {quoted(text)}" + (
        f" (did you mean '{hint}'?)" if hint else "; see `pipeline hardware` for the list"
    )


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _file_cells(path: Path, data: bytes, label: str):
    """A CSV's or Parquet's header, rows of text cells and each row's line (Parquet: its
    position + 2, as the table written as CSV would show it)."""
    suffix = path.suffix.lower()
    if suffix == ".parquet" or data.startswith(b"PAR1"):
        try:
            table = pq.read_table(pa.BufferReader(data))
        except (pa.ArrowException, OSError) as exc:
            raise InvalidPriceFile(f"{label}: not a readable Parquet file ({exc})") from None
        return _frame_cells(table.to_pandas())
    if suffix != ".csv":
        raise InvalidPriceFile(f"{NOUN} {label} must end in .csv or .parquet")
    text = decode_utf8(path, data, InvalidPriceFile)
    header, rows, lines = csv_rows(path, text, InvalidPriceFile)
    if not header:
        raise InvalidPriceFile(
            f"{label}: the {NOUN} is empty; it needs a header {','.join(PRICE_FILE_COLUMNS)}"
        )
    return header, rows, lines


def _frame_cells(frame: pd.DataFrame):
    """A DataFrame's header, its cells as text (blank for a missing one) and lines 2, 3, ..."""
    header = [str(c) for c in frame.columns]
    cells = frame.astype(object).where(frame.notna(), "")
    rows = [["" if v is None else _text(v) for v in r] for r in cells.itertuples(index=False)]
    return header, rows, list(range(2, len(rows) + 2))


def _text(value) -> str:
    if isinstance(value, float) and value.is_integer():
        return repr(value)
    return str(value)


def starter_prices(catalog: Catalog) -> pd.DataFrame:
    """The starter price file's rows: every catalog chip, no price, no date, and where its
    reader might look for one (WHERE_TO_LOOK): the user fills in what they pay."""
    chips = [str(c) for c in catalog.chips.index]
    return pd.DataFrame(
        {
            "hardware": chips,
            "usd_per_chip_hour": "",
            "source": f"{WHERE_TO_LOOK} (USD per chip-hour)",
            "date": "",
        },
        columns=list(PRICE_FILE_COLUMNS),
    )


def write_prices_template(path, catalog: Catalog, *, force: bool = False) -> Path:
    """Write the starter price file (starter_prices) at `path`, a .csv; refused when `path`
    exists, unless `force`. Written beside it, then renamed: never half written."""
    path = Path(path)
    if path.suffix.lower() != ".csv":
        raise OutputError(f"{printable(path)}: a starter price file is CSV; name it *.csv")
    refuse_existing(path, force)
    write_file(path, starter_prices(catalog).to_csv(index=False, lineterminator="\n").encode())
    return path


def price_template(path=None, *, hardware=None, force: bool = False) -> pd.DataFrame:
    """pipeline.price_template: the starter price table (starter_prices) of the catalog with
    `hardware` added (as pipeline.analyze takes it), the rows `pipeline template --prices`
    writes; with `path` (a .csv) written there too, refused when it exists unless `force`.
    Fill in usd_per_chip_hour, source and date, then give it (or the DataFrame) as prices=."""
    if not isinstance(force, bool):
        raise TypeError(f"force must be True or False, not {described(force)}")
    if path is not None and (not isinstance(path, str | PathLike) or str(path) == ""):
        raise TypeError(f"path must be a str or a pathlib.Path of a .csv, or None, not "
                        f"{described(path)}")  # fmt: skip
    catalog = catalog_from(hardware)
    if path is not None:
        write_prices_template(path, catalog, force=force)
    return starter_prices(catalog)
