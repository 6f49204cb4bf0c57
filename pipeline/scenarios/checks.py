"""The row checks of a scenario file: every problem of every row is collected, then the valid
rows come out typed (and their sweeps expanded). Each check is a function of coded columns
(scenarios.coded) that returns what it found; the `Checker` owns the columns, calls the checks
(here, and those of links and shards, of dims and peaks, and the sweep expansion in their own
modules) and collects their problems."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.catalogs.chips import unknown_reason
from pipeline.catalogs.hardware import EFFICIENCY_COLUMNS, Catalog, did_you_mean
from pipeline.errors import RowProblem, quoted
from pipeline.model.dtypes import (
    DTYPES,
    TENSOR_DTYPES,
    canonical_dtype,
    known_dtype_names,
    wider_dtype,
)
from pipeline.model.ops import DIM, SERVE, TRANSFORMER, OpError, known_op_names, parse_op
from pipeline.model.overflow import BLAMED
from pipeline.scenarios.coded import Col, combine
from pipeline.scenarios.dims import check_bytes, check_dims, check_peak
from pipeline.scenarios.expand import expand
from pipeline.scenarios.groups import grouped_rows
from pipeline.scenarios.header import DTYPE_INPUTS, INPUTS, OVERRIDES, measured_column
from pipeline.scenarios.links import check_collective, check_link, check_shard
from pipeline.scenarios.lists import FleetRows, duplicate_series
from pipeline.scenarios.numbers import parse_numbers
from pipeline.scenarios.problems import Found, flag, flag_per_value, rejected, row_problems
from pipeline.scenarios.serve_rows import check_serve
from pipeline.scenarios.train_rows import dims_read, train_rows
from pipeline.scenarios.transformer_rows import check_steps

OP_CHOICES = ", ".join(known_op_names())


class Checker:
    """Collects every problem of a file, then returns the valid rows, typed and expanded."""

    def __init__(self, table, lines, fields, file: str, catalog: Catalog, problems=(),
                 fleet=None, models=None):  # fmt: skip
        self.table = table
        self.fleet: FleetRows | None = fleet  # the rows fleet lists made (scenarios.lists)
        self.lines = lines
        self.file = file
        self.catalog = catalog
        self.models = models  # transformer rows' model catalog (None: the built-in one)
        self.n = table.num_rows
        self._names = frozenset(table.column_names)
        self._dims = [c for c in table.column_names if DIM.match(c)]
        self.found: Found = list(problems)  # (row, column, reason); the reader's first
        # every coded column at once: Arrow's hashing releases the GIL, so two threads help
        coded = [
            c
            for c in table.column_names
            if (c in INPUTS or DIM.match(c)) and c not in ("name", "notes")
        ]
        with ThreadPoolExecutor(max_workers=2) as pool:
            encoded = pool.map(Col.from_arrow, (table.column(c) for c in coded))
            self._cols: dict[str, Col] = dict(zip(coded, encoded, strict=True))
        self.ragged: frozenset[int] = frozenset()
        if fields is not None:
            width = table.num_columns
            self.ragged = frozenset(np.flatnonzero(fields > width).tolist())
            self.found += flag(
                fields > width,
                "*",
                lambda p: (
                    f"{fields[p]} fields but the header has {width}; quote cells that hold"
                    ' commas, e.g. an einsum op "BD,DF->BF" or a note'
                ),
            )
        self.names = trimmed_names(table.column("name"))

    def col(self, name: str) -> Col:
        """A column coded (a blank one when the file has none)."""
        if name not in self._cols:
            if name in self._names:
                self._cols[name] = Col.from_arrow(self.table.column(name))
            else:
                self._cols[name] = Col.blank(self.n)
        return self._cols[name]

    def numbers(self, name: str, **how) -> Col:
        """An optional numeric column parsed (parse_numbers), its problems collected."""
        col, found = parse_numbers(self.col(name), name, **how)
        self.found += found
        return col

    def sorted_problems(self) -> list[RowProblem]:
        """Every problem found, in row order, as reported; a fleet list's point under its
        source row's name, the point named in the reason."""
        found, names = self.found, self.names
        if self.fleet is not None and (self.fleet.labels != "").any():
            labels = self.fleet.labels
            found = [
                (p, c, f"{r} (at {quoted(names[p].as_py())})" if labels[p] else r)
                for p, c, r in found
            ]
            names = pa.array(self.fleet.series, pa.string())
        return row_problems(
            found,
            file=self.file,
            lines=self.lines,
            names=names,
            columns=self.table.column_names,
            ragged=self.ragged,
        )

    def run(self, dims: list[str], max_rows: int) -> pd.DataFrame:
        """The valid rows, typed and expanded (their problems collected)."""
        frame, valid, sweeps, made = self.checked(dims)
        frame, over = expand(frame, valid, sweeps, max_rows, made)
        self.found += over
        return frame

    def checked(self, dims: list[str]):
        """Every row typed and checked, not yet expanded: the frame, which rows are valid,
        the sweeps of their cells and the fleet arrays (series, labels, axes) or None."""
        found = self.found
        found += check_names(self.names, self.lines)
        if self.fleet is not None and self.fleet.series is not None:  # one name, one series
            found += duplicate_series(self.fleet.series, self.lines)
        sig, bad_op = check_op(self.col("op"))
        op = sig.derive(lambda s: s.op if s else "")
        collective = sig.derive(lambda s: bool(s and s.is_collective), bool).values()
        hw, bad_hw = check_hardware(self.col("hardware"), self.catalog)
        dtypes, bad_dtypes = check_dtypes({c: self.col(c) for c in DTYPE_INPUTS})
        found += bad_op + bad_hw + bad_dtypes
        chips = self.numbers("chips", integer=True, what="a whole number of chips (1 or more)")
        chips = chips.derive(lambda c: 1.0 if np.isnan(c) else c, dtype=float)
        count = self.numbers("count", integer=True, what="how many times the op runs (1 or more)")
        given = {c: self.numbers(c).values() for c in (*OVERRIDES, "flops")}
        unit, scale = measured_column(self._names)  # measured_ms, measured_us: in seconds
        given["measured_seconds"] = self.numbers(unit).values() * scale
        # a collective's bytes is a whole number or a sweep, checked with the dims
        given["bytes"] = self.numbers("bytes", rows=~collective).values()
        found += check_custom(op, chips, given, self.col("flops"), self.col("bytes"))
        shard, has_shard, bad_shard = check_shard(self.col("shard"), sig, op, chips)
        found += bad_shard + check_collective(
            collective,
            op,
            self.col("chips"),
            chips.values(),
            has_shard,
            {d: self.col(d) for d in self._dims},
            self.col("flops"),
        )
        link, bad_link = check_link(
            self.col("link"),
            hw,
            chips.values(),
            sig,
            shard,
            collective,
            given["link_bandwidth"],
            self.catalog,
        )
        step = op.is_(TRANSFORMER)
        modelled = step | (serve := op.is_(SERVE))  # a serve row: as a step for its model
        cells = {d: self.col(d) for d in dims}
        values, sweeps, bad_dims = check_dims(sig, op, cells, dims_read(modelled, op))
        steps, bad_steps = ({}, []) if not modelled.any() else check_steps(
            modelled, self.col("model"), cells, values,
            self.col("kv_dtype"), dtypes["x_dtype"].values(), shard, chips.values(),
            self.models, sweeps,
        )  # fmt: skip
        found += bad_steps + check_serve(serve, self.col, self._names, values, shard, steps,
                                         self.models)  # fmt: skip
        steps = train_rows(self, op, steps, cells, values, dtypes, hw, chips, link)
        byte_values, sweeps["bytes"], bad_bytes = check_bytes(self.col("bytes"), collective, op)
        what = "an efficiency, 0 < e <= 1 (e.g. 0.9)"
        for c in EFFICIENCY_COLUMNS:
            given[c] = self.numbers(c, what=what).values()
        peaks, bad_peaks = check_peak(
            self.catalog.chips,
            hw,
            dtypes["compute_dtype"],
            collective,
            given,
            self.col("peak_flops").is_(""),
        )
        found += bad_link + bad_dims + bad_bytes + bad_peaks
        group = None if "group" not in self._names else grouped_rows(
            self.col("group"), self.names.to_numpy(zero_copy_only=False), self.lines, step,
            None if self.fleet is None else self.fleet.labels, sweeps, found, hw.values(),
        )  # fmt: skip
        valid = ~rejected(found, self.n)
        # the frame's columns in order; a resolved value (link_bandwidth, peak_flops...) in place
        out = {
            "line": self.lines,
            "name": self.names.to_pandas(),
            "op": op,
            "einsum": sig.derive(lambda s: s.einsum if s else ""),
            "hardware": hw,
            **dtypes,
            "chips": chips,
            **{c: given[c] for c in (*OVERRIDES, "flops", "measured_seconds")},
            "bytes": np.where(collective, byte_values, given["bytes"]),
            # rows that give their own peak, HBM or link numbers (the charts and report say so)
            "own_numbers": ~np.logical_and.reduce([np.isnan(given[c]) for c in OVERRIDES]),
            "given": self._given_bits(),  # which numbers the row gave (model.overflow.BLAMED)
            "shard": shard,
            **link,
            **peaks,
            **values,
            **steps,  # a step's model, KV-cache dtype, MoE routing; a serve row's isl, osl...
            "notes": self._text("notes"),
        }
        if "count" in self._names and not self.col("count").is_("").all():  # one given: n
            # identical ops one after another (docs/model.md#count-n-identical-ops)
            out["count"] = count.derive(lambda c: 1.0 if np.isnan(c) else c, dtype=float)
        elif modelled.any():  # a step's ops have theirs: every row one, in any partition
            out["count"] = np.ones(self.n)
        if group is not None and (group != "").any():  # rows summed into their group's total
            out["group"] = pd.Categorical(group)
        for c in self.table.column_names:  # extra columns, carried through as text
            if c not in INPUTS and c not in self._dims:
                out[c] = self._text(c)
        columns = {
            # text: categorical; numbers: a plain array
            k: (v.categorical() if v.uniques.dtype == object else v.values())
            if isinstance(v, Col)
            else v
            for k, v in out.items()
        }
        frame = pd.DataFrame(columns, copy=False)  # built once: linear in the columns
        fleet = self.fleet
        made = None if fleet is None else (fleet.series, fleet.labels, fleet.axes)
        return frame, valid, sweeps, made

    def _given_bits(self) -> np.ndarray:
        """Per row, bit k set when it gives a value in BLAMED[k] (a blank cell gives none)."""
        bits = np.zeros(self.n, dtype=np.int16)
        for k, c in enumerate(BLAMED):
            col = self.col(c)
            bits |= (~(col.is_("") | col.is_(None))).astype(np.int16) << k
        return bits

    def _text(self, name: str) -> pd.Series:
        if name in self._names:
            return self.table.column(name).to_pandas()
        return pd.Series([""] * self.n, dtype=object)


def trimmed_names(column: pa.ChunkedArray) -> pa.Array:
    """The name column with white space trimmed off both ends."""
    return pc.utf8_trim_whitespace(column).combine_chunks()


def check_names(names: pa.Array, lines: np.ndarray) -> Found:
    """Empty names and duplicates (each pointing at the line of the name's first row)."""
    empty = pc.binary_length(names).to_numpy() == 0
    found = flag(empty, "name", "empty name; every scenario needs a unique name")
    if len(pc.unique(names)) == len(names):  # (several times faster than count_distinct)
        return found
    text = pd.Series(names.to_numpy(zero_copy_only=False), dtype=object)
    dup = (text.duplicated() & ~empty).to_numpy()
    first = text.drop_duplicates()
    first_line = dict(zip(first.to_numpy(), lines[first.index.to_numpy()], strict=True))
    return found + flag(
        dup,
        "name",
        lambda p: (
            f"duplicate name {quoted(text.iat[p])} "
            f"(first on line {first_line[text.iat[p]]}); names must be unique"
        ),
    )


def check_op(ops: Col) -> tuple[Col, Found]:
    """Each row's op signature (None where the op is bad) and the bad ops' problems."""
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

    sig = ops.derive(resolve)
    return sig, flag_per_value(sig.is_(None), "op", ops, errors.__getitem__)


def check_hardware(hw: Col, catalog: Catalog) -> tuple[Col, Found]:
    """Each row's chip by its catalog name ("" where unknown) and the unknown ones' problems."""
    resolved = hw.derive(lambda u: catalog.resolve(u) or "")

    def reason(text: str) -> str:
        if not text:
            return "empty hardware; name a chip from `pipeline hardware`"
        return unknown_reason(catalog, text)

    return resolved, flag_per_value(resolved.is_(""), "hardware", hw, reason)


def check_dtypes(cols: dict[str, Col]) -> tuple[dict[str, Col], Found]:
    """x_dtype, y_dtype, out_dtype and compute_dtype per row, canonical, from the dtype
    columns (`cols`, by name): each its own, else dtype, else bf16; compute_dtype else the
    wider of x and y. Unknown dtypes are problems (and count as blank)."""
    found: Found = []
    parsed = {}
    for name in DTYPE_INPUTS:
        col = cols[name]
        resolved = col.derive(lambda u: (canonical_dtype(u) or None) if u else "")

        def reason(text: str) -> str:
            hint = did_you_mean(text.lower(), known_dtype_names())
            return f"unknown dtype {quoted(text)}" + (
                f" (did you mean '{hint}'?)"
                if hint
                else f"; use one of {', '.join(sorted(DTYPES))}"
            )

        found += flag_per_value(resolved.is_(None), name, col, reason)
        parsed[name] = resolved.derive(lambda r: r or "")
    base = parsed["dtype"].derive(lambda d: d or "bf16")
    out = {name: combine(lambda own, b: own or b, parsed[name], base) for name in TENSOR_DTYPES}
    out["compute_dtype"] = combine(
        lambda c, x, y: c or wider_dtype(x, y),
        parsed["compute_dtype"],
        out["x_dtype"],
        out["y_dtype"],
    )
    return out, found


def check_custom(
    op: Col, chips: Col, given: dict[str, np.ndarray], flops: Col, bytes_: Col
) -> Found:
    """A custom op needs its flops and bytes totals (`given` parsed, `flops` and `bytes_` the
    cells: a bad number is reported as such, not as missing) and runs on one chip."""
    custom = op.is_("custom")
    found: Found = []
    for name, cells in (("flops", flops), ("bytes", bytes_)):
        missing = custom & np.isnan(given[name]) & cells.is_("")
        found += flag(missing, name, f"op custom needs a positive {name} total in column {name}")
    return found + flag(
        custom & (chips.values() > 1),
        "chips",
        "custom ops run on one chip; give per-chip flops and bytes with chips = 1",
    )
