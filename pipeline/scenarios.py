"""The only scenario-CSV reader: schema, sweep expansion, validation with every problem listed."""

from __future__ import annotations

import csv
import io
import itertools
import math
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from pipeline.dtypes import DTYPES, canonical_dtype, known_dtype_names, peak_family, wider_dtype
from pipeline.errors import InvalidScenario, RowProblem, printable, quoted
from pipeline.hardware import LINKS, Catalog, did_you_mean
from pipeline.limits import DEFAULT_MAX_ROWS
from pipeline.ops import OpError, known_op_names, parse_op
from pipeline.roofline import RESULT_COLUMNS
from pipeline.sweeps import SWEEP_FORMS, TOO_BIG, Sweep, is_sweep, parse_sweep, parse_whole
from pipeline.textfile import decode_utf8, read_bytes

REQUIRED = ("name", "op", "hardware")
DTYPE_COLUMNS = ("dtype", "x_dtype", "y_dtype", "out_dtype", "compute_dtype")
OVERRIDES = ("peak_flops", "hbm_bandwidth", "hbm_capacity", "link_bandwidth")
KNOWN = (
    *REQUIRED,
    *DTYPE_COLUMNS,
    "chips",
    "shard",
    "link",
    *OVERRIDES,
    "flops",
    "bytes",
    "measured_seconds",
    "notes",
)
_DIM = re.compile(r"^[A-Z]$")


@dataclass
class Loaded:
    """A scenario file after validation: valid rows (typed, expanded), and every problem found."""

    path: Path
    frame: pd.DataFrame
    problems: list[RowProblem]
    table: pa.Table  # the rows as read: every cell a string, header names normalized
    lines: np.ndarray  # each table row's line number
    dims: list[str]
    extras: list[str]
    source_rows: int
    warnings: list[str] = field(default_factory=list)

    @property
    def rejected_lines(self) -> int:
        return len({p.line for p in self.problems})

    @cached_property
    def inputs(self) -> pd.DataFrame:
        """The rows as read (strings), with their line numbers first."""
        frame = self.table.to_pandas()
        frame.insert(0, "line", self.lines)
        return frame


def load_scenarios(path: Path, catalog: Catalog, max_rows: int = DEFAULT_MAX_ROWS) -> Loaded:
    """Read and validate one scenario CSV (DESIGN §2). Raises InvalidScenario for a useless file."""
    path = Path(path)
    return _load(path, read_bytes(path, InvalidScenario, "scenario file"), catalog, max_rows)


def load_head(
    path: Path, catalog: Catalog, lines: int, max_rows: int = DEFAULT_MAX_ROWS
) -> tuple[Loaded, bool] | None:
    """The file's first `lines` lines after the header, loaded as load_scenarios loads the
    whole file, and whether the file goes on past them.

    Every check is made row by row (a duplicate name rejects the later row; --max-rows rejects
    the rows past the limit), so these rows come out exactly as at the top of the whole file.
    None when the cut may fall inside a quoted value that spans lines.
    """
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            data = b"".join(itertools.islice(fh, lines + 1))
            more = fh.read(1) != b""
    except OSError as exc:
        raise InvalidScenario(f"{path}: cannot read: {exc.strerror}") from exc
    if more and b'"' in data and _may_span_lines(data.decode("utf-8", errors="replace")):
        return None
    return _load(path, data, catalog, max_rows), more


def _load(path: Path, data: bytes, catalog: Catalog, max_rows: int) -> Loaded:
    warnings: list[str] = []
    table, lines, fields = _read_table(path, data, warnings)
    columns = _normalize_headers(table.column_names, path)
    columns, renamed = _rename_reserved(columns, path)
    table = table.rename_columns(columns)
    dims = sorted(c for c in columns if _DIM.match(c))
    extras = [c for c in columns if c not in KNOWN and c not in dims]
    warnings += renamed + _check_columns(columns, extras, path)
    table, nul_problems = _nul_cells(table)
    checker = _Checker(table, lines, fields, str(path), catalog, nul_problems)
    frame = checker.run(dims, max_rows)
    warnings += idle_chip_warnings(frame, path)
    return Loaded(
        path=path,
        frame=frame,
        problems=checker.sorted_problems(),
        table=table,
        lines=lines,
        dims=dims,
        extras=extras,
        source_rows=table.num_rows,
        warnings=warnings,
    )


IDLE_WARNINGS = 20  # rows named one by one in the warnings about idle chips


def idle_chip_warnings(frame: pd.DataFrame, path: Path) -> list[str]:
    """Rows that split a dim over more chips than it has: some chips hold nothing (the model
    times the busiest chip, which is right; the warning says the chips are wasted)."""
    if frame.empty or not (frame["chips"] > 1).any():
        return []
    shard = frame["shard"].astype(str).to_numpy()
    size = np.full(len(frame), np.nan)
    for d in set(shard.tolist()) - {""}:
        rows = shard == d
        size[rows] = frame[d].to_numpy(dtype=float)[rows]
    chips = frame["chips"].to_numpy(dtype=float)
    with np.errstate(invalid="ignore"):
        idle = chips > size
    if not idle.any():
        return []
    lines = frame["line"].to_numpy()
    per_line = pd.Series(lines).value_counts()
    hit = pd.DataFrame({"line": lines[idle], "size": size[idle], "chips": chips[idle],
                        "shard": shard[idle]}).groupby("line", sort=True)  # fmt: skip
    first = hit.first()
    low, high, count = hit["size"].min(), hit["size"].max(), hit.size()
    out = []
    for line in first.index[:IDLE_WARNINGS]:
        c, d = int(first.at[line, "chips"]), first.at[line, "shard"]
        where = f"{printable(path)}:{line}: column chips:"
        if per_line[line] == 1:
            v = int(low[line])
            out.append(
                f"{where} {c} chips split {d} = {v}: {c - v} of the chips hold nothing "
                "(the times are those of a busy chip)"
            )
        else:
            out.append(
                f"{where} {c} chips split {d}, which is below {c} in {int(count[line]):,} of "
                f"this row's {int(per_line[line]):,} scenarios ({d} = {int(low[line]):,} to "
                f"{int(high[line]):,}): some chips hold nothing there"
            )
    if len(first) > IDLE_WARNINGS:
        out.append(
            f"{printable(path)}: and {len(first) - IDLE_WARNINGS:,} more rows split a dim over "
            "more chips than it has"
        )
    return out


# ---------------------------------------------------------------- reading


def _read_table(
    path: Path, data: bytes, warnings: list[str]
) -> tuple[pa.Table, np.ndarray, np.ndarray | None]:
    """All cells as strings, each row's line number as an editor counts it, and field counts
    (None when every row had the header's width)."""
    text = _excel_hint(path, decode_utf8(path, data, InvalidScenario), warnings)
    plain = _plain_body(text)
    if plain is not None:  # no comment or blank line: no per-line Python work
        header_line, body = plain
        count = body.count("\n") + (0 if body.endswith("\n") else 1)
        table = None
        if not _may_span_lines(body):
            table = _read_fast(next(csv.reader([header_line])), body)
        if table is not None and table.num_rows == count:
            return table, np.arange(2, count + 2, dtype=np.int64), None
    lines = _LINE_BREAK.split(text)  # not str.splitlines: a form feed or U+2028 is text
    keep = [i for i, ln in enumerate(lines) if ln.strip() and not ln.lstrip().startswith("#")]
    if not keep:
        raise InvalidScenario(
            f"{printable(path)}: no header and no scenario rows (the file is empty)"
        )
    if len(keep) == 1:
        raise InvalidScenario(
            f"{printable(path)}: a header but no scenario rows: nothing to compute"
        )
    header = next(csv.reader([lines[keep[0]]]))
    body = "\n".join(lines[i] for i in keep[1:])
    line_numbers = np.asarray(keep[1:], dtype=np.int64) + 1
    if not _may_span_lines(body):  # fast path: one record per line
        table = _read_fast(header, body)
        if table is not None and table.num_rows == len(line_numbers):
            return table, line_numbers, None
    return _read_slow(path, header, lines, keep)


_SEP_HINT = re.compile(r"^\ufeff?sep=(.?)\s*$", re.IGNORECASE)


def _excel_hint(path: Path, text: str, warnings: list[str]) -> str:
    """Excel's `sep=X` first line: skipped when X is a comma (kept as a comment, so line
    numbers stay right), an error naming the delimiter otherwise."""
    end = text.find("\n")
    first = text if end < 0 else text[:end]
    m = _SEP_HINT.match(first.rstrip("\r"))
    if m is None:
        return text
    sep = m.group(1)
    if sep != ",":
        raise InvalidScenario(
            f"{printable(path)}:1: the file declares {quoted(sep)} as its delimiter "
            f"({quoted(first.strip())}); scenario files are comma-separated: save it as "
            "CSV (comma delimited)"
        )
    warnings.append(
        f"{printable(path)}:1: skipped Excel's delimiter hint 'sep=,' (the file is comma-separated)"
    )
    return "#" + text


_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # what a text editor counts as the end of a line
_LINE_STARTS = ("\n#", "\n\n", "\n\r\n", "\n ", "\n\t")


def _plain_body(text: str) -> tuple[str, str] | None:
    """(header, body) when the text has a header, data rows, "\n" or "\r\n" line ends and
    no comment or blank line, else None (the general path then counts lines one by one)."""
    end = text.find("\n")
    if end < 0 or end == len(text) - 1:
        return None
    body = text.rstrip("\r\n")
    # a comment, a blank line or a line starting with white space: the general path decides
    if body[:1] in ("#", " ", "\t") or any(m in body for m in _LINE_STARTS):
        return None
    if text.count("\r") != text.count("\r\n"):
        return None
    return text[:end].rstrip("\r"), text[end + 1 :]


def _may_span_lines(body: str) -> bool:
    """True when some line has an odd number of quotes, i.e. a quoted value may hold a newline."""
    if '"' not in body:
        return False
    raw = np.frombuffer(body.encode("utf-8"), dtype=np.uint8)
    quotes = np.flatnonzero(raw == ord('"'))
    ends = np.flatnonzero(raw == ord("\n"))
    per_line = np.bincount(np.searchsorted(ends, quotes), minlength=len(ends) + 1)
    return bool((per_line % 2).any())


def _read_fast(header: list[str], body: str) -> pa.Table | None:
    names = [f"c{i}" for i in range(len(header))]
    try:
        table = pacsv.read_csv(
            io.BytesIO(body.encode("utf-8")),
            read_options=pacsv.ReadOptions(column_names=names, block_size=1 << 24),
            parse_options=pacsv.ParseOptions(newlines_in_values=False),
            convert_options=pacsv.ConvertOptions(
                column_types={n: pa.string() for n in names},
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except pa.ArrowInvalid:  # ragged rows: the slow path reports them one by one
        return None
    return table.rename_columns(header)


MAX_VALUE_LINES = 100  # a quoted value spanning more lines than this is a stray quote


def _read_slow(
    path: Path, header: list[str], lines: list[str], keep: list[int]
) -> tuple[pa.Table, np.ndarray, np.ndarray]:
    """csv-module reader that tracks line numbers through quoted newlines; ragged rows padded.

    A quoted value may hold line breaks, but one still open at the end of the file, or one
    running over MAX_VALUE_LINES lines, is a stray quote that would swallow the rows after
    it: an error at the line where it opened."""
    reader = csv.reader(io.StringIO("\n".join(lines)))
    rows, numbers = [], []
    start = 1
    for record in reader:
        line = start
        start = reader.line_num + 1
        if reader.line_num - line >= MAX_VALUE_LINES:
            raise InvalidScenario(
                f"{printable(path)}:{line}: a quoted value opens on this line and runs over "
                f"{MAX_VALUE_LINES} lines (to line {reader.line_num}): is a closing '\"' "
                "missing? Close the value where it ends"
            )
        if not record or not "".join(record).strip() or record[0].lstrip().startswith("#"):
            continue
        rows.append(record)
        numbers.append(line)
    if numbers and numbers[-1] < len(lines) and _open_at_end(lines[numbers[-1] - 1 :]):
        raise InvalidScenario(
            f"{printable(path)}:{numbers[-1]}: a quoted value opens on this line and is still "
            "open at the end of the file: is a closing '\"' missing? Close the value where "
            "it ends"
        )
    header_row, rows, numbers = rows[0], rows[1:], numbers[1:]
    width = len(header_row)
    fields = np.array([len(r) for r in rows], dtype=np.int64)
    fixed = [r + [""] * (width - len(r)) if len(r) < width else r[:width] for r in rows]
    columns = list(zip(*fixed, strict=True)) if fixed else [()] * width
    table = pa.table({f"c{i}": pa.array(col, pa.string()) for i, col in enumerate(columns)})
    return table.rename_columns(header_row), np.asarray(numbers, dtype=np.int64), fields


def _open_at_end(lines: list[str]) -> bool:
    """True when the last record (these lines) ends inside a quoted value."""
    try:
        for _ in csv.reader(io.StringIO("\n".join(lines)), strict=True):
            pass
    except csv.Error as exc:
        return "end of data" in str(exc)
    return False


def _normalize_headers(columns: list[str], path: Path) -> list[str]:
    out = []
    for i, c in enumerate(columns):
        c = str(c).strip()
        if "\x00" in c:
            raise InvalidScenario(
                f"{printable(path)}:1: column {i + 1}: the header {quoted(c)} holds a NUL byte "
                f"at character {c.index(chr(0)) + 1}; remove it (a scenario file is text)"
            )
        out.append(c.upper() if len(c) == 1 and c.isalpha() else c.lower())
    seen: dict[str, int] = {}
    dups = []
    for i, c in enumerate(out):
        if c in seen:
            dups.append(f"{quoted(c)} (columns {seen[c] + 1} and {i + 1})")
        seen.setdefault(c, i)
    if "" in seen:
        raise InvalidScenario(f"{printable(path)}:1: column {seen[''] + 1} has an empty header")
    if dups:
        raise InvalidScenario(f"{printable(path)}:1: column names appear twice: {', '.join(dups)}")
    return out


def _nul_cells(table: pa.Table) -> tuple[pa.Table, list[tuple[int, str, str]]]:
    """Cells holding a NUL byte reject their row (the position said); the NUL is kept as the
    visible text \\x00, so no output ever holds the raw byte."""
    problems: list[tuple[int, str, str]] = []
    columns = table.columns
    for i, name in enumerate(table.column_names):
        hit = pc.match_substring(columns[i], "\x00")
        if not pc.any(hit).as_py():
            continue
        for pos in np.flatnonzero(hit.to_numpy(zero_copy_only=False)):
            cell = columns[i][int(pos)].as_py()
            problems.append(
                (int(pos), name, f"NUL byte at character {cell.index(chr(0)) + 1} of "
                 f"{quoted(cell)}; remove it (a scenario file is text)")
            )  # fmt: skip
        columns[i] = pc.replace_substring(columns[i], "\x00", "\\x00")
    if problems:
        table = pa.table(dict(zip(table.column_names, columns, strict=True)))
    return table, problems


def _rename_reserved(columns: list[str], path: Path) -> tuple[list[str], list[str]]:
    """Extra columns named like an output column are kept as input_<name>, with a warning."""
    reserved = set(RESULT_COLUMNS) | {
        "line", "link_topology", "link_latency", "measured_over_predicted",
    }  # fmt: skip
    out, warnings = [], []
    for c in columns:
        if c in reserved and c not in KNOWN:
            new = f"input_{c}"
            while new in columns or new in out:
                new = f"input_{new}"
            warnings.append(
                f"{printable(path)}:1: column {quoted(c)} is also an output column; it is "
                f"carried through as {quoted(new)}"
            )
            c = new
        out.append(c)
    return out, warnings


def _check_columns(columns, extras: list[str], path: Path) -> list[str]:
    missing = [c for c in REQUIRED if c not in columns]
    if missing:
        parts = []
        for col in missing:
            hint = did_you_mean(col, extras)
            parts.append(f"'{col}'" + (f" (did you mean {quoted(hint)}?)" if hint else ""))
        raise InvalidScenario(
            f"{printable(path)}:1: missing required column(s) {', '.join(parts)}; "
            f"the header needs {', '.join(REQUIRED)}{_delimiter_hint(columns)}"
        )
    warnings = []
    for col in extras:
        hint = did_you_mean(col, list(KNOWN))
        if hint:
            warnings.append(
                f"{printable(path)}:1: column {quoted(col)} is not a known column and is "
                f"carried through as-is (did you mean '{hint}'?)"
            )
    return warnings


def _delimiter_hint(columns) -> str:
    """When the header is one cell holding the names split by another delimiter, say so."""
    if len(columns) != 1:
        return ""
    for sep, label in ((";", "semicolons"), ("\t", "tabs"), ("|", "'|'")):
        if sep in columns[0] and sum(c in columns[0].split(sep) for c in REQUIRED) >= 2:
            return (
                f"; the header is separated by {label}, not commas: save the file as CSV "
                "(comma delimited)"
            )
    return ""


# ---------------------------------------------------------------- validation


def _whole_reason(text: str) -> str | None:
    """Why a cell is not a whole number from 1 to 2^53; None when it is (or is blank)."""
    if text == "":
        return None
    try:
        parse_whole(text)
    except ValueError as exc:
        return str(exc)
    return None


MAX_OP_LOG2 = 1000  # an op's dims may multiply to 2^1000; float64 ends near 2^1024


def _parse_dim_cell(text: str) -> int | Sweep | str | None:
    """A dim cell: its whole number, its Sweep, None when blank, or the reason it is bad."""
    if text == "":
        return None
    try:
        return parse_sweep(text) if is_sweep(text) else parse_whole(text)
    except ValueError as exc:
        if is_sweep(text):
            return f"{quoted(text)}: {exc}"
        if str(exc) == TOO_BIG:
            return f"{quoted(text)} {TOO_BIG}"
        return f"{quoted(text)} is not a positive integer or a sweep ({SWEEP_FORMS})"


class Col:
    """A column as codes into a few distinct values: every check and lookup runs once per
    distinct value (or combination of values), then is broadcast to the rows by the codes."""

    def __init__(self, codes: np.ndarray, uniques: np.ndarray):
        self.codes = codes
        self.uniques = uniques  # per distinct value: stripped text, or a derived value

    @classmethod
    def from_arrow(cls, arr: pa.ChunkedArray | pa.Array) -> Col:
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks()
        enc = pc.dictionary_encode(arr)
        uniques = np.array([u.strip() for u in enc.dictionary.to_pylist()], dtype=object)
        return cls(enc.indices.to_numpy(zero_copy_only=False).astype(np.intp), uniques)

    @classmethod
    def blank(cls, n: int) -> Col:
        return cls(np.zeros(n, dtype=np.intp), np.array([""], dtype=object))

    def at(self, pos: int):
        return self.uniques[self.codes[pos]]

    def per_row(self, per_unique: np.ndarray) -> np.ndarray:
        """Broadcast a per-distinct-value array to rows."""
        return np.asarray(per_unique)[self.codes]

    def values(self) -> np.ndarray:
        return self.uniques[self.codes]

    def derive(self, fn, dtype=object) -> Col:
        """fn applied once per distinct value."""
        out = np.empty(len(self.uniques), dtype=dtype)
        for k, u in enumerate(self.uniques):
            out[k] = fn(u)
        return Col(self.codes, out)

    def is_(self, value) -> np.ndarray:
        if value is None:
            return self.per_row(np.array([u is None for u in self.uniques], dtype=bool))
        return self.per_row(np.array([u == value for u in self.uniques], dtype=bool))

    def categorical(self) -> pd.Categorical:
        """The rows as a pandas Categorical, built from the codes (no per-row work)."""
        cats, inverse = np.unique(self.uniques.astype(str), return_inverse=True)
        return pd.Categorical.from_codes(inverse[self.codes], categories=cats)


def combine(fn, *cols: Col, dtype=object) -> Col:
    """fn(*values) evaluated once per combination of the columns' values that occurs."""
    sizes = [max(len(c.uniques), 1) for c in cols]
    key = np.zeros(len(cols[0].codes), dtype=np.int64)
    for c, size in zip(cols, sizes, strict=True):
        key = key * size + c.codes
    total = int(np.prod(sizes, dtype=np.int64))
    if total <= 1 << 22:  # a dense look-up table: no sort
        present = np.zeros(total, dtype=bool)
        present[key] = True
        keys = np.flatnonzero(present)
        lut = np.zeros(total, dtype=np.intp)
        lut[keys] = np.arange(len(keys))
        codes = lut[key]
    else:
        keys, codes = np.unique(key, return_inverse=True)
    values = np.empty(len(keys), dtype=dtype)
    for k, packed in enumerate(keys.tolist()):
        parts = []
        for size in reversed(sizes):
            packed, rest = divmod(packed, size)
            parts.append(rest)
        parts.reverse()
        values[k] = fn(*(c.uniques[i] for c, i in zip(cols, parts, strict=True)))
    return Col(codes.astype(np.intp), values)


class _Checker:
    """Collects every problem of a file, then returns the valid rows, typed and expanded."""

    def __init__(self, table, lines, fields, file: str, catalog: Catalog, problems=()):
        self.table = table
        self.lines = lines
        self.file = file
        self.catalog = catalog
        self.n = table.num_rows
        self._names = frozenset(table.column_names)
        self._dims = frozenset(c for c in self._names if _DIM.match(c))
        # (row position, column, reason); those found while reading come first
        self.problems: list[tuple[int, str, str]] = list(problems)
        # every coded column at once: Arrow's hashing releases the GIL, so two threads help
        coded = [
            c
            for c in table.column_names
            if (c in KNOWN or _DIM.match(c)) and c not in ("name", "notes")
        ]
        with ThreadPoolExecutor(max_workers=2) as pool:
            encoded = pool.map(Col.from_arrow, (table.column(c) for c in coded))
            self._cols: dict[str, Col] = dict(zip(coded, encoded, strict=True))
        self.ragged: set[int] = set()
        if fields is not None:
            width = table.num_columns
            self.ragged = {int(p) for p in np.flatnonzero(fields > width)}
            self.add(
                fields > width,
                "*",
                lambda p: (
                    f"{fields[p]} fields but the header has {width}; quote cells that hold"
                    ' commas, e.g. an einsum op "BD,DF->BF" or a note'
                ),
            )

    # -- helpers
    def col(self, name: str) -> Col:
        if name not in self._cols:
            if name in self._names:
                self._cols[name] = Col.from_arrow(self.table.column(name))
            else:
                self._cols[name] = Col.blank(self.n)
        return self._cols[name]

    def add(self, mask, column: str, reason) -> None:
        """Record a problem for each row in mask; reason is a string or f(position) -> str."""
        for pos in np.flatnonzero(np.asarray(mask, dtype=bool)):
            self.problems.append((int(pos), column, reason(pos) if callable(reason) else reason))

    def add_at(self, pos: int, column: str, reason: str) -> None:
        self.problems.append((int(pos), column, reason))

    def sorted_problems(self) -> list[RowProblem]:
        order = {c: i for i, c in enumerate(self.table.column_names)}
        # a row with too many fields has shifted cells: its other complaints would mislead
        kept = [p for p in self.problems if p[0] not in self.ragged or p[1] == "*"]
        items = sorted(kept, key=lambda p: (p[0], order.get(p[1], len(order)), p[2]))
        names = self.names
        return [
            RowProblem(self.file, int(self.lines[pos]), names[pos].as_py(), column, reason)
            for pos, column, reason in items
        ]

    def number_col(self, name: str, *, integer: bool = False, what: str = "a positive number"):
        """Parse an optional numeric column (per distinct value): a Col of floats, NaN for
        blank or bad (bad ones reported)."""
        col = self.col(name)
        u = col.uniques
        if integer:  # whole numbers up to 2^53, parsed exactly
            reasons = np.array([_whole_reason(t) for t in u], dtype=object)
            bad = np.array([r is not None for r in reasons], dtype=bool)
            nums = np.array(
                [float(t) if t and not b else np.nan for t, b in zip(u, bad, strict=True)],
                dtype=float,
            )
            if bad.any():
                self.add(
                    col.per_row(bad),
                    name,
                    lambda p: (
                        f"{quoted(col.at(p))} "
                        + (TOO_BIG if reasons[col.codes[p]] == TOO_BIG else f"is not {what}")
                    ),
                )
            return Col(col.codes, nums)
        nums = pd.to_numeric(pd.Series(u, dtype=object).where(u != ""), errors="coerce")
        nums = nums.to_numpy(dtype=float)
        bad = (u != "") & ~((nums > 0) & np.isfinite(nums))
        if bad.any():
            self.add(col.per_row(bad), name, lambda p: f"{quoted(col.at(p))} is not {what}")
        return Col(col.codes, np.where(bad, np.nan, nums))

    def numbers(self, name: str) -> np.ndarray:
        return self.number_col(name).values()

    # -- the checks
    def run(self, dims: list[str], max_rows: int) -> pd.DataFrame:
        out: dict[str, object] = {"line": self.lines}
        self._check_names()
        self._check_op(out)
        self._check_hardware(out)
        self._check_dtypes(out)
        chips = self.number_col(
            "chips", integer=True, what="a whole number of chips (1 or more)"
        ).derive(lambda c: 1.0 if np.isnan(c) else c, dtype=float)
        out["chips"] = chips
        for col in (*OVERRIDES, "flops", "bytes", "measured_seconds"):
            out[col] = self.numbers(col)
        self._check_custom(out)
        self._check_shard_and_link(out)
        values, sweeps = self._check_dims(out, dims)
        self._check_peak(out)
        bad_rows = np.zeros(self.n, dtype=bool)
        for pos, _, _ in self.problems:
            bad_rows[pos] = True
        for d in dims:
            out[d] = values[d]
        columns = {}
        for key, value in out.items():
            if isinstance(value, Col):  # text: categorical; numbers: a plain array
                columns[key] = (
                    value.categorical() if value.uniques.dtype == object else value.values()
                )
            else:
                columns[key] = value
        columns = {"line": columns.pop("line"), "name": self.names.to_pandas(), **columns}
        columns["notes"] = self._text("notes")
        for col in self.table.column_names:  # extra columns, carried through as text
            if col not in KNOWN and col not in self._dims:
                columns[col] = self._text(col)
        frame = pd.DataFrame(columns, copy=False)  # built once: linear in the columns
        return self._expand(frame, ~bad_rows, sweeps, dims, max_rows)

    def _text(self, name: str) -> pd.Series:
        if name in self._names:
            return self.table.column(name).to_pandas()
        return pd.Series([""] * self.n, dtype=object)

    def _check_names(self) -> None:
        arr = pc.utf8_trim_whitespace(self.table.column("name")).combine_chunks()
        self.names = arr
        empty = pc.equal(arr, "").to_numpy(zero_copy_only=False)
        self.add(empty, "name", "empty name; every scenario needs a unique name")
        if pc.count_distinct(arr).as_py() == self.n:
            return
        names = pd.Series(arr.to_numpy(zero_copy_only=False), dtype=object)
        dup = (names.duplicated() & ~empty).to_numpy()
        first = names.drop_duplicates()
        first_line = dict(zip(first.to_numpy(), self.lines[first.index.to_numpy()], strict=True))
        self.add(
            dup,
            "name",
            lambda p: (
                f"duplicate name {quoted(names.iat[p])} "
                f"(first on line {first_line[names.iat[p]]}); names must be unique"
            ),
        )

    def _check_op(self, out: dict) -> None:
        ops = self.col("op")
        errors: dict[str, str] = {}

        def resolve(text: str):
            try:
                return parse_op(text)
            except OpError as exc:
                msg = str(exc)
                if not text:
                    msg = "empty op; use matmul, dot, batched_matmul, custom or an einsum"
                elif "unknown op" in msg:
                    hint = did_you_mean(text.lower(), known_op_names())
                    msg += (
                        f" (did you mean '{hint}'?)"
                        if hint
                        else "; use matmul, dot, batched_matmul, custom or an einsum like BD,DF->BF"
                    )
                errors[text] = msg
                return None

        self.sig = ops.derive(resolve)
        self.add(self.sig.is_(None), "op", lambda p: errors[ops.at(p)])
        out["op"] = self.sig.derive(lambda s: s.op if s else "")
        out["einsum"] = self.sig.derive(lambda s: s.einsum if s else "")

    def _check_hardware(self, out: dict) -> None:
        hw = self.col("hardware")
        resolved = hw.derive(lambda u: self.catalog.resolve(u) or "")

        def reason(p: int) -> str:
            text = hw.at(p)
            if not text:
                return "empty hardware; name a chip from `pipeline hardware`"
            hint = self.catalog.suggest(text)
            return f"unknown hardware {quoted(text)}" + (
                f" (did you mean '{hint}'?)" if hint else "; see `pipeline hardware` for the list"
            )

        self.add(resolved.is_(""), "hardware", reason)
        out["hardware"] = resolved

    def _check_dtypes(self, out: dict) -> None:
        parsed = {}
        for name in DTYPE_COLUMNS:
            col = self.col(name)
            resolved = col.derive(lambda u: (canonical_dtype(u) or None) if u else "")

            def reason(p: int, col=col) -> str:
                hint = did_you_mean(col.at(p).lower(), known_dtype_names())
                return f"unknown dtype {quoted(col.at(p))}" + (
                    f" (did you mean '{hint}'?)"
                    if hint
                    else f"; use one of {', '.join(sorted(DTYPES))}"
                )

            self.add(resolved.is_(None), name, reason)
            parsed[name] = resolved.derive(lambda r: r or "")
        base = parsed["dtype"].derive(lambda d: d or "bf16")
        for name in ("x_dtype", "y_dtype", "out_dtype"):
            out[name] = combine(lambda own, b: own or b, parsed[name], base)
        out["compute_dtype"] = combine(
            lambda c, x, y: c or wider_dtype(x, y),
            parsed["compute_dtype"],
            out["x_dtype"],
            out["y_dtype"],
        )

    def _check_custom(self, out: dict) -> None:
        custom = out["op"].is_("custom")
        for name in ("flops", "bytes"):
            missing = custom & np.isnan(out[name]) & self.col(name).is_("")
            self.add(missing, name, f"op custom needs a positive {name} total in column {name}")
        self.add(
            custom & (out["chips"].values() > 1),
            "chips",
            "custom ops run on one chip; give per-chip flops and bytes with chips = 1",
        )

    def _check_shard_and_link(self, out: dict) -> None:
        shard_col = self.col("shard")
        shard = shard_col.derive(str.upper)
        chips = out["chips"].values()
        op_dims = self.sig.derive(lambda s: s.dims if s and not s.is_custom else None)
        dims_of = op_dims.values()
        has_shard = ~shard.is_("")
        splittable = ~op_dims.is_(None)
        in_op = combine(
            lambda s, d: bool(s) and d is not None and len(s) == 1 and s in d,
            shard,
            op_dims,
            dtype=bool,
        ).values()
        self.add(
            has_shard & splittable & ~in_op,
            "shard",
            lambda p: (
                f"{quoted(shard_col.at(p))} is not a dim of op "
                f"{out['op'].at(p)} (its dims: {', '.join(dims_of[p])})"
            ),
        )
        self.add(
            (chips > 1) & ~has_shard & splittable,
            "shard",
            lambda p: (
                f"chips = {int(chips[p])} needs a shard dim to split "
                f"(one of {', '.join(dims_of[p])})"
            ),
        )
        out["shard"] = combine(lambda s, c: s if c > 1 else "", shard, out["chips"])

        link = self.col("link").derive(str.lower)
        hw = out["hardware"]
        table = self.catalog.chips
        chosen = combine(lambda lk, c: lk or table["default_link"].get(c, ""), link, hw)
        self.add(
            ~link.is_("") & ~np.isin(link.values(), LINKS),
            "link",
            lambda p: (
                f"unknown link {quoted(link.at(p))}"
                + (
                    f" (did you mean '{h}'?)"
                    if (h := did_you_mean(link.at(p), list(LINKS)))
                    else f"; use one of {', '.join(LINKS)}"
                )
            ),
        )

        def link_fields(chip: str, lk: str) -> tuple:
            if chip not in table.index or lk not in LINKS:
                return (np.nan, "ring" if lk == "ici" else "switch", np.nan)
            row = table.loc[chip]
            topology = row[f"{lk}_topology"] or ("ring" if lk == "ici" else "switch")
            return (row[f"{lk}_bandwidth"], topology, row[f"{lk}_latency"])

        fields = combine(link_fields, hw, chosen)
        bw = fields.per_row(np.array([f[0] for f in fields.uniques], dtype=float))
        lat = fields.per_row(np.array([f[2] for f in fields.uniques], dtype=float))
        override = out["link_bandwidth"]
        bw = np.where(np.isnan(override), bw, override)
        needs_link = (chips > 1) & ~hw.is_("") & np.isin(chosen.values(), LINKS)
        self.add(
            needs_link & np.isnan(bw),
            "link",
            lambda p: (
                f"chip {hw.at(p)} has no bandwidth for link '{chosen.at(p)}'"
                f" (it has {', '.join(self.catalog.links_of(hw.at(p))) or 'none'});"
                " pick one of those or give link_bandwidth"
            ),
        )
        out["link"] = chosen
        out["link_bandwidth"] = bw
        out["link_topology"] = fields.derive(lambda f: f[1])
        out["link_latency"] = np.where(np.isnan(lat), 0.0, lat)

    def _check_dims(self, out: dict, dims: list[str]):
        """Each dim's value per row (NaN where blank, swept or bad) and its sweeps: per dim,
        the rows that sweep it and each one's Sweep (parsed once per distinct cell)."""
        values: dict[str, np.ndarray] = {}
        sweeps: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        needed: dict[str, np.ndarray] = {d: np.zeros(self.n, dtype=bool) for d in dims}
        for code, s in enumerate(self.sig.uniques):
            if s is None:
                continue
            rows = self.sig.codes == code
            if not rows.any():
                continue
            for d in s.dims:
                if d not in needed:
                    self.add(rows, d, f"op {s.op} needs dim {d}, and the file has no column '{d}'")
                else:
                    needed[d] |= rows
        for d in dims:
            col = self.col(d)
            parsed = col.derive(_parse_dim_cell)
            kinds = np.array([type(v).__name__ for v in parsed.uniques], dtype=object)
            need = needed[d]
            self.add(
                need & col.is_(""),
                d,
                lambda p, d=d: f"empty; op {out['op'].at(p)} needs a value for dim {d}",
            )
            self.add(need & parsed.per_row(kinds == "str"), d, lambda p, c=parsed: c.at(p))
            number = np.array(
                [float(v) if isinstance(v, int) else np.nan for v in parsed.uniques], dtype=float
            )
            values[d] = np.where(need, parsed.per_row(number), np.nan)
            swept = need & parsed.per_row(kinds == "Sweep")
            sweeps[d] = (np.flatnonzero(swept), parsed.values()[swept])
        self._check_size(out, dims, values, sweeps)
        return values, sweeps

    def _check_size(self, out: dict, dims: list[str], values: dict, sweeps: dict) -> None:
        """An op whose dims multiply past what float64 can count (each dim <= 2^53, but an
        einsum may have many) is rejected rather than computed as infinity."""
        log2 = np.zeros(self.n)
        for d in dims:
            largest = values[d].copy()
            rows, cells = sweeps[d]
            largest[rows] = [c.largest for c in cells]
            log2 += np.log2(np.where(np.isnan(largest), 1.0, largest))
        self.add(
            log2 > MAX_OP_LOG2,
            "op",
            lambda p: (
                f"its dims multiply to about 2^{log2[p]:.0f}; the tool counts FLOPs and bytes "
                f"up to 2^{MAX_OP_LOG2} (float64)"
            ),
        )

    def _check_peak(self, out: dict) -> None:
        chips = self.catalog.chips
        hw = out["hardware"]
        compute = out["compute_dtype"]

        def catalog_peak(chip: str, dtype: str) -> float:
            if chip not in chips.index or dtype not in DTYPES:
                return np.nan
            return chips.at[chip, f"peak_{peak_family(dtype)}"]

        peak = combine(catalog_peak, hw, compute, dtype=float).values()
        override = out["peak_flops"]
        peak = np.where(np.isnan(override), peak, override)
        known = ~hw.is_("") & ~compute.is_("")
        self.add(
            known & np.isnan(peak) & self.col("peak_flops").is_(""),
            "compute_dtype",
            lambda p: (
                f"chip {hw.at(p)} has no {compute.at(p)} peak in the catalog;"
                " give a peak_flops column (FLOP/s) or a --hardware file with "
                f"peak_{peak_family(compute.at(p))}"
            ),
        )
        out["peak_flops"] = peak
        for name in ("hbm_bandwidth", "hbm_capacity"):
            cat = hw.derive(lambda c, n=name: chips[n].get(c, np.nan), dtype=float).values()
            out[name] = np.where(np.isnan(out[name]), cat, out[name])
        self.add(
            ~hw.is_("") & np.isnan(out["hbm_bandwidth"]),
            "hbm_bandwidth",
            lambda p: f"chip {hw.at(p)} has no HBM bandwidth; give hbm_bandwidth (bytes/s)",
        )

    def _expand(self, out, valid, sweeps, dims, max_rows: int) -> pd.DataFrame:
        """Keep valid rows; expand sweep cells into one row per value (cartesian product).

        Each row's count is the product of its sweeps' lengths, computed before any value is
        built, so a row past --max-rows is refused without building it."""
        swept: dict[int, list[tuple[str, Sweep]]] = {}
        for d in dims:
            rows, cells = sweeps[d]
            for p, cell in zip(rows.tolist(), cells, strict=True):
                if valid[p]:
                    swept.setdefault(p, []).append((d, cell))
        exact = {p: math.prod(len(cell) for _, cell in grid) for p, grid in swept.items()}
        counts = np.ones(self.n, dtype=np.int64)
        for p, count in exact.items():
            counts[p] = min(count, max_rows + 1)  # no overflow: anything past it is refused
        positions = np.flatnonzero(valid)
        if int(counts[positions].sum()) > max_rows:
            running = np.cumsum(counts[positions])
            over = positions[running > max_rows]
            for p in over.tolist():
                col = swept[p][0][0] if p in swept else "name"
                self.add_at(
                    p,
                    col,
                    f"expands to {exact.get(p, 1):,} rows, which takes the file past its limit "
                    f"of {max_rows:,} rows (--max-rows)",
                )
            valid = valid.copy()
            valid[over] = False
            positions = np.flatnonzero(valid)
        if len(positions) == self.n:
            out = out.reset_index(drop=True)
        else:
            out = out.iloc[positions].reset_index(drop=True)
        series = out["name"]
        if not any(valid[p] for p in swept):
            out.insert(2, "series", series)
            return out
        reps = counts[positions]
        expanded = out.iloc[np.repeat(np.arange(len(out)), reps)].reset_index(drop=True)
        series_arr = series.to_numpy(dtype=object)
        names = np.repeat(series_arr, reps).astype(object)
        series_col = names.copy()
        starts = np.concatenate(([0], np.cumsum(reps)[:-1]))
        for i, p in enumerate(positions.tolist()):
            if p not in swept:
                continue
            grid = swept[p]
            mesh = np.meshgrid(*[cell.values() for _, cell in grid], indexing="ij")
            s, n = starts[i], reps[i]
            labels = [""] * n
            for (d, _), values in zip(grid, mesh, strict=True):
                flat = values.ravel()
                expanded.loc[s : s + n - 1, d] = flat
                labels = [
                    f"{lab},{d}={int(v)}" if lab else f"{d}={int(v)}"
                    for lab, v in zip(labels, flat, strict=True)
                ]
            names[s : s + n] = [f"{series_arr[i]}[{lab}]" for lab in labels]
        expanded["name"] = names
        expanded.insert(2, "series", series_col)
        return expanded
