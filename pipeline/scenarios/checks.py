"""The row checks of a scenario file: every problem of every row is collected, then the valid
rows come out typed (and their sweeps expanded). Each check runs on coded columns
(scenarios.coded); the checks of links and shards, of dims and peaks, and the sweep expansion
live in their own modules."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from itertools import repeat

import numpy as np
import pandas as pd
import pyarrow.compute as pc

from pipeline.errors import RowProblem, quoted
from pipeline.model.catalog import Catalog, did_you_mean
from pipeline.model.dtypes import DTYPES, canonical_dtype, known_dtype_names, wider_dtype
from pipeline.model.ops import DIM, OpError, known_op_names, parse_op
from pipeline.scenarios.coded import Col, combine
from pipeline.scenarios.dims import check_dims, check_peak
from pipeline.scenarios.expand import expand
from pipeline.scenarios.header import DTYPE_COLUMNS, KNOWN, OVERRIDES
from pipeline.scenarios.links import check_shard_and_link
from pipeline.scenarios.sweeps import TOO_BIG, whole_number_reason

OP_CHOICES = ", ".join(known_op_names())


class Checker:
    """Collects every problem of a file, then returns the valid rows, typed and expanded."""

    def __init__(self, table, lines, fields, file: str, catalog: Catalog, problems=()):
        self.table = table
        self.lines = lines
        self.file = file
        self.catalog = catalog
        self.n = table.num_rows
        self._names = frozenset(table.column_names)
        self._dims = frozenset(c for c in self._names if DIM.match(c))
        # (row position, column, reason); those found while reading come first
        self.problems: list[tuple[int, str, str]] = list(problems)
        # every coded column at once: Arrow's hashing releases the GIL, so two threads help
        coded = [
            c
            for c in table.column_names
            if (c in KNOWN or DIM.match(c)) and c not in ("name", "notes")
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

    def add_per_value(self, mask, column: str, col: Col, reason) -> None:
        """Record a problem for each row in mask; reason(value) -> str runs once per distinct
        value of `col` among those rows (a did-you-mean costs a search, not one per row)."""
        rows = np.flatnonzero(np.asarray(mask, dtype=bool))
        if not len(rows):
            return
        codes = col.codes[rows]
        reasons = np.empty(len(col.uniques), dtype=object)
        for code in np.unique(codes).tolist():
            reasons[code] = reason(col.uniques[code])
        self.problems.extend(zip(rows.tolist(), repeat(column), reasons[codes].tolist()))

    def add_at(self, pos: int, column: str, reason: str) -> None:
        self.problems.append((int(pos), column, reason))

    def sorted_problems(self) -> list[RowProblem]:
        order = {c: i for i, c in enumerate(self.table.column_names)}
        # a row with too many fields has shifted cells: its other complaints would mislead;
        # a cell with a NUL byte is reported once, for that
        nul = {(p[0], p[1]) for p in self.problems if p[2].startswith("NUL byte")}
        kept = [
            p for p in self.problems
            if (p[0] not in self.ragged or p[1] == "*")
            and ((p[0], p[1]) not in nul or p[2].startswith("NUL byte"))
        ]  # fmt: skip
        items = sorted(kept, key=lambda p: (p[0], order.get(p[1], len(order)), p[2]))
        names = self.names
        return [
            RowProblem(self.file, int(self.lines[pos]), names[pos].as_py(), column, reason)
            for pos, column, reason in items
        ]

    def number_col(
        self, name: str, *, integer: bool = False, what: str = "a positive number", rows=True
    ):
        """Parse an optional numeric column (per distinct value): a Col of floats, NaN for
        blank or bad (bad ones reported, in `rows` only)."""
        col = self.col(name)
        u = col.uniques
        if integer:  # whole numbers up to 2^53, parsed exactly
            reasons = np.array([whole_number_reason(t) for t in u], dtype=object)
            bad = np.array([r is not None for r in reasons], dtype=bool)
            nums = np.array(
                [float(t) if t and not b else np.nan for t, b in zip(u, bad, strict=True)],
                dtype=float,
            )
            if bad.any():
                self.add_per_value(
                    col.per_row(bad) & rows,
                    name,
                    col,
                    lambda u: (
                        f"{quoted(u)} "
                        + (TOO_BIG if TOO_BIG == whole_number_reason(u) else f"is not {what}")
                    ),
                )
            return Col(col.codes, nums)
        nums = pd.to_numeric(pd.Series(u, dtype=object).where(u != ""), errors="coerce")
        nums = nums.to_numpy(dtype=float)
        bad = (u != "") & ~((nums > 0) & np.isfinite(nums))
        if bad.any():
            self.add_per_value(
                col.per_row(bad) & rows, name, col, lambda u: f"{quoted(u)} is not {what}"
            )
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
        for col in (*OVERRIDES, "flops", "measured_seconds"):
            out[col] = self.numbers(col)
        # a collective's bytes is a whole number or a sweep, checked with the dims
        out["bytes"] = self.number_col("bytes", rows=~self.collective).values()
        # rows that give their own peak, HBM or link numbers (the charts and report say so)
        out["own_numbers"] = ~np.logical_and.reduce([np.isnan(out[c]) for c in OVERRIDES])
        self._check_custom(out)
        check_shard_and_link(self, out)
        values, sweeps = check_dims(self, out, dims)
        check_peak(self, out)
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
        return expand(self, frame, ~bad_rows, sweeps, [*dims, "bytes"], max_rows)

    def _text(self, name: str) -> pd.Series:
        if name in self._names:
            return self.table.column(name).to_pandas()
        return pd.Series([""] * self.n, dtype=object)

    def _check_names(self) -> None:
        arr = pc.utf8_trim_whitespace(self.table.column("name")).combine_chunks()
        self.names = arr
        empty = pc.binary_length(arr).to_numpy() == 0
        self.add(empty, "name", "empty name; every scenario needs a unique name")
        if len(pc.unique(arr)) == self.n:  # (unique is several times faster than count_distinct)
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
                # the parser names the cell raw: echo it quoted (escaped, cut past 120)
                msg = str(exc).replace(f"'{text}'", quoted(text), 1)
                if not text:
                    msg = f"empty op; use {OP_CHOICES} or an einsum"
                elif "unknown op" in msg:
                    hint = did_you_mean(text.lower(), known_op_names())
                    msg += (
                        f" (did you mean '{hint}'?)"
                        if hint
                        else f"; use {OP_CHOICES} or an einsum like BD,DF->BF"
                    )
                errors[text] = msg
                return None

        self.sig = ops.derive(resolve)
        self.add_per_value(self.sig.is_(None), "op", ops, errors.__getitem__)
        out["op"] = self.sig.derive(lambda s: s.op if s else "")
        out["einsum"] = self.sig.derive(lambda s: s.einsum if s else "")
        self.collective = self.sig.derive(lambda s: bool(s and s.is_collective), bool).values()

    def _check_hardware(self, out: dict) -> None:
        hw = self.col("hardware")
        resolved = hw.derive(lambda u: self.catalog.resolve(u) or "")

        def reason(text: str) -> str:
            if not text:
                return "empty hardware; name a chip from `pipeline hardware`"
            hint = self.catalog.suggest(text)
            return f"unknown hardware {quoted(text)}" + (
                f" (did you mean '{hint}'?)" if hint else "; see `pipeline hardware` for the list"
            )

        self.add_per_value(resolved.is_(""), "hardware", hw, reason)
        out["hardware"] = resolved

    def _check_dtypes(self, out: dict) -> None:
        parsed = {}
        for name in DTYPE_COLUMNS:
            col = self.col(name)
            resolved = col.derive(lambda u: (canonical_dtype(u) or None) if u else "")

            def reason(text: str) -> str:
                hint = did_you_mean(text.lower(), known_dtype_names())
                return f"unknown dtype {quoted(text)}" + (
                    f" (did you mean '{hint}'?)"
                    if hint
                    else f"; use one of {', '.join(sorted(DTYPES))}"
                )

            self.add_per_value(resolved.is_(None), name, col, reason)
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
