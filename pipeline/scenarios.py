"""The only scenario-CSV reader: schema, sweep expansion, validation with every problem listed."""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv

from pipeline.dtypes import DTYPES, canonical_dtype, known_dtype_names, peak_family, wider_dtype
from pipeline.errors import InvalidScenario, RowProblem
from pipeline.hardware import LINKS, Catalog, did_you_mean
from pipeline.ops import OpError, known_op_names, parse_op

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
DEFAULT_MAX_ROWS = 1_000_000
_DIM = re.compile(r"^[A-Z]$")
_RANGE = re.compile(r"^(\d+)\s*\.\.\s*(\d+)(?:\s*\*\s*(\d+))?$")


@dataclass
class Loaded:
    """A scenario file after validation: valid rows (typed, expanded), and every problem found."""

    path: Path
    frame: pd.DataFrame
    problems: list[RowProblem]
    inputs: pd.DataFrame
    dims: list[str]
    extras: list[str]
    source_rows: int
    warnings: list[str] = field(default_factory=list)

    @property
    def rejected_lines(self) -> int:
        return len({p.line for p in self.problems})


def load_scenarios(path: Path, catalog: Catalog, max_rows: int = DEFAULT_MAX_ROWS) -> Loaded:
    """Read and validate one scenario CSV (DESIGN §2). Raises InvalidScenario for a useless file."""
    path = Path(path)
    raw, lines = _read_table(path)
    raw.columns = _normalize_headers(list(raw.columns), path)
    dims = sorted(c for c in raw.columns if _DIM.match(c))
    extras = [c for c in raw.columns if c not in KNOWN and c not in dims]
    warnings = _check_columns(raw.columns, extras, path)
    inputs = raw.copy()
    inputs.insert(0, "line", lines)
    checker = _Checker(raw, lines, str(path), catalog)
    frame = checker.run(dims, max_rows)
    return Loaded(
        path=path,
        frame=frame,
        problems=checker.sorted_problems(),
        inputs=inputs,
        dims=dims,
        extras=extras,
        source_rows=len(raw),
        warnings=warnings,
    )


# ---------------------------------------------------------------- reading


def _read_table(path: Path) -> tuple[pd.DataFrame, np.ndarray]:
    """All cells as stripped strings, plus each row's line number as an editor counts it."""
    try:
        data = path.read_bytes()
    except FileNotFoundError as exc:
        raise InvalidScenario(f"{path}: no such file") from exc
    except OSError as exc:
        raise InvalidScenario(f"{path}: cannot read: {exc.strerror}") from exc
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InvalidScenario(f"{path}:{line}: not UTF-8 text (byte {exc.start})") from exc
    lines = text.splitlines()
    keep = [i for i, ln in enumerate(lines) if ln.strip() and not ln.lstrip().startswith("#")]
    if not keep:
        raise InvalidScenario(f"{path}: no header and no scenario rows (the file is empty)")
    if len(keep) == 1:
        raise InvalidScenario(f"{path}: a header but no scenario rows: nothing to compute")
    header = next(csv.reader([lines[keep[0]]]))
    body = "\n".join(lines[i] for i in keep[1:])
    line_numbers = np.asarray(keep[1:], dtype=np.int64) + 1
    frame = None
    if '"' not in body:  # fast path: one record per line guaranteed
        frame = _read_fast(header, body)
    if frame is None or len(frame) != len(line_numbers):
        frame, line_numbers = _read_slow(path, header, lines, keep)
    return frame, line_numbers


def _read_fast(header: list[str], body: str) -> pd.DataFrame | None:
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
    frame = table.to_pandas()
    frame.columns = header
    return frame


def _read_slow(
    path: Path, header: list[str], lines: list[str], keep: list[int]
) -> tuple[pd.DataFrame, np.ndarray]:
    """csv-module reader that tracks line numbers through quoted newlines; ragged rows padded."""
    text = "\n".join(lines)
    reader = csv.reader(io.StringIO(text))
    rows, numbers = [], []
    start = 1
    for record in reader:
        line = start
        start = reader.line_num + 1
        if not record or not "".join(record).strip() or record[0].lstrip().startswith("#"):
            continue
        rows.append(record)
        numbers.append(line)
    header_row, rows, numbers = rows[0], rows[1:], numbers[1:]
    width = len(header_row)
    fields = np.array([len(r) for r in rows], dtype=np.int64)
    fixed = [r + [""] * (width - len(r)) if len(r) < width else r[:width] for r in rows]
    frame = pd.DataFrame(fixed, columns=header_row, dtype=str)
    frame.attrs["fields"] = fields
    return frame, np.asarray(numbers, dtype=np.int64)


def _normalize_headers(columns: list[str], path: Path) -> list[str]:
    out = []
    for c in columns:
        c = str(c).strip()
        out.append(c.upper() if len(c) == 1 and c.isalpha() else c.lower())
    seen: dict[str, int] = {}
    dups = []
    for i, c in enumerate(out):
        if c in seen:
            dups.append(f"'{c}' (columns {seen[c] + 1} and {i + 1})")
        seen.setdefault(c, i)
    if "" in seen:
        raise InvalidScenario(f"{path}:1: column {seen[''] + 1} has an empty header")
    if dups:
        raise InvalidScenario(f"{path}:1: column names appear twice: {', '.join(dups)}")
    return out


def _check_columns(columns, extras: list[str], path: Path) -> list[str]:
    missing = [c for c in REQUIRED if c not in columns]
    if missing:
        parts = []
        for col in missing:
            hint = did_you_mean(col, extras)
            parts.append(f"'{col}'" + (f" (did you mean '{hint}'?)" if hint else ""))
        raise InvalidScenario(
            f"{path}:1: missing required column(s) {', '.join(parts)}; "
            f"the header needs {', '.join(REQUIRED)}"
        )
    warnings = []
    for col in extras:
        hint = did_you_mean(col, list(KNOWN))
        if hint:
            warnings.append(
                f"{path}:1: column '{col}' is not a known column and is carried through as-is"
                f" (did you mean '{hint}'?)"
            )
    return warnings


# ---------------------------------------------------------------- validation


def _quote(value: str) -> str:
    return f"'{value}'"


def _parse_sweep(text: str) -> list[int]:
    """`128|256`, `1..512` or `1..4096*2` -> values; ValueError with a reason otherwise."""
    text = text.strip()
    if "|" in text:
        values = []
        for part in text.split("|"):
            part = part.strip()
            if not part.isdigit() or int(part) < 1:
                raise ValueError(f"sweep item '{part}' is not a positive integer")
            values.append(int(part))
        return values
    m = _RANGE.match(text)
    if not m:
        raise ValueError("not a positive integer or a sweep (128|256, 1..512, 1..4096*2)")
    lo, hi, step = int(m.group(1)), int(m.group(2)), m.group(3)
    if lo < 1 or hi < lo:
        raise ValueError(f"range {lo}..{hi} must go from a positive start up to its end")
    if step is None:
        return list(range(lo, hi + 1))
    factor = int(step)
    if factor < 2:
        raise ValueError(f"geometric factor {factor} must be at least 2")
    values, v = [], lo
    while v <= hi:
        values.append(v)
        v *= factor
    return values


class _Checker:
    """Collects every problem of a file, then returns the valid rows, typed and expanded."""

    def __init__(self, raw: pd.DataFrame, lines: np.ndarray, file: str, catalog: Catalog):
        self.raw = raw
        self.lines = lines
        self.file = file
        self.catalog = catalog
        self.n = len(raw)
        self.problems: list[tuple[int, str, str]] = []  # (row position, column, reason)
        fields = raw.attrs.get("fields")
        self.ragged: set[int] = set()
        if fields is not None:
            self.ragged = {int(p) for p in np.flatnonzero(fields > len(raw.columns))}
            width = len(raw.columns)
            self.add(
                fields > width,
                "*",
                lambda p: (
                    f"{fields[p]} fields but the header has {width}; quote cells that hold"
                    ' commas, e.g. an einsum op "BD,DF->BF" or a note'
                ),
            )

    # -- helpers
    def col(self, name: str) -> pd.Series:
        if name in self.raw.columns:
            return self.raw[name].astype(str).str.strip()
        return pd.Series([""] * self.n, index=self.raw.index, dtype=object)

    def add(self, mask, column: str, reason) -> None:
        """Record a problem for each row in mask; reason is a string or f(position) -> str."""
        for pos in np.flatnonzero(np.asarray(mask, dtype=bool)):
            self.problems.append((int(pos), column, reason(pos) if callable(reason) else reason))

    def lookup(self, series: pd.Series, resolve) -> tuple[pd.Series, pd.Series]:
        """Map a text column through resolve() once per unique value: (resolved, ok mask)."""
        uniques = pd.unique(series)
        mapping = {u: resolve(u) for u in uniques}
        resolved = series.map(mapping)
        return resolved, resolved.notna()

    def sorted_problems(self) -> list[RowProblem]:
        names = self.col("name")
        order = {c: i for i, c in enumerate(self.raw.columns)}
        # a row with too many fields has shifted cells: its other complaints would mislead
        kept = [p for p in self.problems if p[0] not in self.ragged or p[1] == "*"]
        items = sorted(kept, key=lambda p: (p[0], order.get(p[1], len(order)), p[2]))
        return [
            RowProblem(self.file, int(self.lines[pos]), names.iat[pos], column, reason)
            for pos, column, reason in items
        ]

    def numbers(self, name: str, *, integer: bool = False, what: str = "a positive number"):
        """Parse an optional numeric column: (values float array with NaN for blank, ok mask)."""
        text = self.col(name)
        nums = pd.to_numeric(text.where(text != ""), errors="coerce").to_numpy(dtype=float)
        bad = (text != "").to_numpy() & ~(nums > 0)
        if integer:
            bad |= (text != "").to_numpy() & (nums > 0) & (np.floor(nums) != nums)
        self.add(bad, name, lambda p: f"{_quote(text.iat[p])} is not {what}")
        return np.where(bad, np.nan, nums)

    # -- the checks
    def run(self, dims: list[str], max_rows: int) -> pd.DataFrame:
        out = pd.DataFrame(index=self.raw.index)
        name = self.col("name")
        self.add(name == "", "name", "empty name; every scenario needs a unique name")
        first = {}
        dup = name.duplicated() & (name != "")
        if dup.any():
            for pos, value in enumerate(name):
                first.setdefault(value, pos)
            self.add(
                dup,
                "name",
                lambda p: (
                    f"duplicate name {_quote(name.iat[p])} "
                    f"(first on line {self.lines[first[name.iat[p]]]}); names must be unique"
                ),
            )
        out["name"] = name

        sig = self._check_op(out)
        self._check_hardware(out)
        self._check_dtypes(out)
        chips = self.numbers("chips", integer=True, what="a whole number of chips (1 or more)")
        out["chips"] = np.where(np.isnan(chips), 1, chips)
        for col in (*OVERRIDES, "flops", "bytes", "measured_seconds"):
            out[col] = self.numbers(col)
        out["notes"] = self.col("notes")
        self._check_custom(out, sig)
        self._check_shard_and_link(out, sig)
        values, sweeps = self._check_dims(out, sig, dims)
        self._check_peak(out)
        bad_rows = np.zeros(self.n, dtype=bool)
        for pos, _, _ in self.problems:
            bad_rows[pos] = True
        for d in dims:
            out[d] = values[d]
        for col in self.raw.columns:
            if col not in KNOWN and col not in dims:
                out[col] = self.raw[col]
        out.insert(0, "line", self.lines)
        return self._expand(out, ~bad_rows, sweeps, dims, max_rows)

    def _check_op(self, out: pd.DataFrame) -> pd.Series:
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

        sig, ok = self.lookup(ops, resolve)
        self.add(~ok, "op", lambda p: errors[ops.iat[p]])
        out["op"] = sig.map(lambda s: s.op if s else "")
        out["einsum"] = sig.map(lambda s: s.einsum if s else "")
        return sig

    def _check_hardware(self, out: pd.DataFrame) -> None:
        hw = self.col("hardware")
        resolved, ok = self.lookup(hw, self.catalog.resolve)

        def reason(p: int) -> str:
            text = hw.iat[p]
            if not text:
                return "empty hardware; name a chip from `pipeline hardware`"
            hint = self.catalog.suggest(text)
            return f"unknown hardware {_quote(text)}" + (
                f" (did you mean '{hint}'?)" if hint else "; see `pipeline hardware` for the list"
            )

        self.add(~ok, "hardware", reason)
        out["hardware"] = resolved.fillna("")

    def _check_dtypes(self, out: pd.DataFrame) -> None:
        parsed = {}
        for col in DTYPE_COLUMNS:
            text = self.col(col)
            resolved, ok = self.lookup(text, lambda t: canonical_dtype(t) if t else "")
            bad = ~ok

            def reason(p: int, text=text) -> str:
                hint = did_you_mean(text.iat[p].lower(), known_dtype_names())
                return f"unknown dtype {_quote(text.iat[p])}" + (
                    f" (did you mean '{hint}'?)"
                    if hint
                    else f"; use one of {', '.join(sorted(DTYPES))}"
                )

            self.add(bad, col, reason)
            parsed[col] = resolved.fillna("")
        base = parsed["dtype"].where(parsed["dtype"] != "", "bf16")
        for col in ("x_dtype", "y_dtype", "out_dtype"):
            out[col] = parsed[col].where(parsed[col] != "", base)
        pairs = out["x_dtype"] + "|" + out["y_dtype"]
        wider = pairs.map({p: wider_dtype(*p.split("|")) for p in pd.unique(pairs)})
        out["compute_dtype"] = parsed["compute_dtype"].where(parsed["compute_dtype"] != "", wider)

    def _check_custom(self, out: pd.DataFrame, sig: pd.Series) -> None:
        custom = (out["op"] == "custom").to_numpy()
        for col in ("flops", "bytes"):
            missing = custom & np.isnan(out[col].to_numpy()) & (self.col(col) == "").to_numpy()
            self.add(missing, col, f"op custom needs a positive {col} total in column {col}")
        self.add(
            custom & (out["chips"].to_numpy() > 1),
            "chips",
            "custom ops run on one chip; give per-chip flops and bytes with chips = 1",
        )

    def _check_shard_and_link(self, out: pd.DataFrame, sig: pd.Series) -> None:
        shard = self.col("shard").str.upper()
        chips = out["chips"].to_numpy()
        op_dims = sig.map(lambda s: s.dims if s else None)
        has_shard = (shard != "").to_numpy()
        known_op = op_dims.notna().to_numpy()
        custom = (out["op"] == "custom").to_numpy()
        in_op = np.array(
            [
                bool(s) and d is not None and len(s) == 1 and s in d
                for s, d in zip(shard, op_dims, strict=True)
            ]
        )
        self.add(
            has_shard & known_op & ~custom & ~in_op,
            "shard",
            lambda p: (
                f"{_quote(self.col('shard').iat[p])} is not a dim of op "
                f"{out['op'].iat[p]} (its dims: {', '.join(op_dims.iat[p])})"
            ),
        )
        self.add(
            (chips > 1) & ~has_shard & known_op & ~custom,
            "shard",
            lambda p: (
                f"chips = {int(chips[p])} needs a shard dim to split "
                f"(one of {', '.join(op_dims.iat[p])})"
            ),
        )
        out["shard"] = np.where(chips > 1, shard, "")

        link = self.col("link").str.lower()
        hw = out["hardware"]
        chips_table = self.catalog.chips
        default = hw.map(chips_table["default_link"]).fillna("")
        chosen = link.where(link != "", default)
        self.add(
            ((link != "") & ~link.isin(LINKS)).to_numpy(),
            "link",
            lambda p: (
                f"unknown link {_quote(link.iat[p])}"
                + (
                    f" (did you mean '{h}'?)"
                    if (h := did_you_mean(link.iat[p], list(LINKS)))
                    else f"; use one of {', '.join(LINKS)}"
                )
            ),
        )
        bw = np.full(self.n, np.nan)
        topo = np.full(self.n, "", dtype=object)
        lat = np.full(self.n, np.nan)
        for lk in LINKS:
            m = (chosen == lk).to_numpy()
            if m.any():
                bw[m] = hw[m].map(chips_table[f"{lk}_bandwidth"]).to_numpy(dtype=float)
                topo[m] = hw[m].map(chips_table[f"{lk}_topology"]).fillna("").to_numpy()
                lat[m] = hw[m].map(chips_table[f"{lk}_latency"]).to_numpy(dtype=float)
        override = out["link_bandwidth"].to_numpy()
        bw = np.where(np.isnan(override), bw, override)
        fallback_topo = np.where(chosen.isin(("ici",)).to_numpy(), "ring", "switch")
        topo = np.where(topo == "", fallback_topo, topo)
        lat = np.where(np.isnan(lat), 0.0, lat)
        needs_link = (chips > 1) & (hw != "").to_numpy() & chosen.isin(LINKS).to_numpy()
        self.add(
            needs_link & np.isnan(bw),
            "link",
            lambda p: (
                f"chip {hw.iat[p]} has no bandwidth for link '{chosen.iat[p]}'"
                f" (it has {', '.join(self.catalog.links_of(hw.iat[p])) or 'none'});"
                " pick one of those or give link_bandwidth"
            ),
        )
        out["link"] = chosen
        out["link_bandwidth"] = bw
        out["link_topology"] = topo
        out["link_latency"] = lat

    def _check_dims(self, out, sig: pd.Series, dims: list[str]):
        values: dict[str, np.ndarray] = {}
        sweeps: dict[str, dict[int, list[int]]] = {}
        needed: dict[str, np.ndarray] = {d: np.zeros(self.n, dtype=bool) for d in dims}
        for s in pd.unique(sig.dropna()):
            rows = (sig == s).to_numpy()  # noqa: B023 - evaluated immediately
            for d in s.dims:
                if d not in needed:
                    self.add(
                        rows,
                        d,
                        f"op {s.op} needs dim {d}, and the file has no column '{d}'",
                    )
                else:
                    needed[d] |= rows
        for d in dims:
            text = self.col(d)
            is_sweep = (
                text.str.contains("|", regex=False) | text.str.contains("..", regex=False)
            ).to_numpy()
            nums = pd.to_numeric(text.where((text != "") & ~is_sweep), errors="coerce").to_numpy(
                dtype=float
            )
            plain_ok = (nums >= 1) & (np.floor(nums) == nums)
            need = needed[d]
            self.add(
                need & (text == "").to_numpy(),
                d,
                lambda p, d=d: f"empty; op {out['op'].iat[p]} needs a value for dim {d}",
            )
            self.add(
                need & (text != "").to_numpy() & ~is_sweep & ~plain_ok,
                d,
                lambda p, text=text: (
                    f"{_quote(text.iat[p])} is not a positive integer"
                    " or a sweep (128|256, 1..512, 1..4096*2)"
                ),
            )
            sweeps[d] = {}
            for pos in np.flatnonzero(need & is_sweep):
                try:
                    sweeps[d][int(pos)] = _parse_sweep(text.iat[pos])
                except ValueError as exc:
                    self.add(np.arange(self.n) == pos, d, f"{_quote(text.iat[pos])}: {exc}")
            values[d] = np.where(need & plain_ok, nums, np.nan)
        return values, sweeps

    def _check_peak(self, out: pd.DataFrame) -> None:
        chips = self.catalog.chips
        hw = out["hardware"]
        fam = out["compute_dtype"].map(lambda c: peak_family(c) if c in DTYPES else "")
        peak = np.full(self.n, np.nan)
        for f in pd.unique(fam):
            if not f:
                continue
            m = (fam == f).to_numpy()
            peak[m] = hw[m].map(chips[f"peak_{f}"]).to_numpy(dtype=float)
        override = out["peak_flops"].to_numpy()
        peak = np.where(np.isnan(override), peak, override)
        known = (hw != "").to_numpy() & (fam != "").to_numpy()
        self.add(
            known & np.isnan(peak) & (self.col("peak_flops") == "").to_numpy(),
            "compute_dtype",
            lambda p: (
                f"chip {hw.iat[p]} has no {out['compute_dtype'].iat[p]} peak in the catalog;"
                " give a peak_flops column (FLOP/s) or a --hardware file with "
                f"peak_{fam.iat[p]}"
            ),
        )
        out["peak_flops"] = peak
        for col in ("hbm_bandwidth", "hbm_capacity"):
            cat = hw.map(chips[col]).to_numpy(dtype=float)
            given = out[col].to_numpy()
            out[col] = np.where(np.isnan(given), cat, given)
        self.add(
            (hw != "").to_numpy() & np.isnan(out["hbm_bandwidth"].to_numpy()),
            "hbm_bandwidth",
            lambda p: f"chip {hw.iat[p]} has no HBM bandwidth; give hbm_bandwidth (bytes/s)",
        )

    def _expand(self, out, valid, sweeps, dims, max_rows: int) -> pd.DataFrame:
        """Keep valid rows; expand sweep cells into one row per value (cartesian product)."""
        positions = np.flatnonzero(valid)
        counts = np.ones(self.n, dtype=np.int64)
        swept_rows = sorted({p for d in dims for p in sweeps[d] if valid[p]})
        grids: dict[int, tuple[list[str], np.ndarray]] = {}
        for p in swept_rows:
            names = [d for d in dims if p in sweeps[d]]
            lists = [sweeps[d][p] for d in names]
            counts[p] = int(np.prod([len(v) for v in lists], dtype=np.int64))
            grids[p] = (names, lists)
        total = int(counts[positions].sum())
        if total > max_rows:
            running = np.cumsum(counts[positions])
            over = positions[running > max_rows]
            for p in over:
                col = grids[p][0][0] if p in grids else "name"
                self.add(
                    np.arange(self.n) == p,
                    col,
                    f"expands to {counts[p]:,} rows, which takes the file past its limit of "
                    f"{max_rows:,} rows (--max-rows)",
                )
            valid = valid.copy()
            valid[over] = False
            positions = np.flatnonzero(valid)
        out = out.iloc[positions]
        series = out["name"].to_numpy(dtype=object)
        if not grids or not any(valid[p] for p in grids):
            out = out.reset_index(drop=True)
            out.insert(1, "series", series)
            return out
        reps = counts[positions]
        expanded = out.iloc[np.repeat(np.arange(len(out)), reps)].reset_index(drop=True)
        names = np.repeat(series, reps).astype(object)
        series_col = names.copy()
        starts = np.concatenate(([0], np.cumsum(reps)[:-1]))
        for i, p in enumerate(positions):
            if p not in grids:
                continue
            swept, lists = grids[p]
            mesh = np.meshgrid(*[np.asarray(v, dtype=float) for v in lists], indexing="ij")
            s, n = starts[i], reps[i]
            labels = [""] * n
            for d, grid in zip(swept, mesh, strict=True):
                flat = grid.ravel()
                expanded.loc[s : s + n - 1, d] = flat
                labels = [
                    f"{lab},{d}={int(v)}" if lab else f"{d}={int(v)}"
                    for lab, v in zip(labels, flat, strict=True)
                ]
            names[s : s + n] = [f"{series[i]}[{lab}]" for lab in labels]
        expanded["name"] = names
        expanded.insert(1, "series", series_col)
        return expanded
