"""A user's models file (CSV or TOML, as `--models`) or DataFrame read into a table of text
cells, one row per model with the line it is on (docs/model.md#the-model-catalog). Column
names are matched exactly first (`K` KV heads, `k` active experts), then in any case where
that names one column (`d` is `D`, `SOURCE` is `source`)."""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from pipeline.catalogs.hardware_file import toml_lines, toml_problem
from pipeline.catalogs.spellings import spelling
from pipeline.catalogs.table_file import Table, one_name_each
from pipeline.errors import InvalidModelFile, printable, quoted

FILE_HINT = (
    "a CSV header row with name and the fields to set (D,F,N,K,H,L,V, ...), or a TOML table "
    "[name] per model"
)


def canonical_columns(header: list[str], columns: Sequence[str], where: str) -> list[str]:
    """Each header name as the catalog's column it names: exactly, else in any case when only
    one column has that spelling; others as written (reported as unknown later). Two names
    for one column are an error."""
    lower: dict[str, list[str]] = {}
    for col in columns:
        lower.setdefault(col.lower(), []).append(col)
    out = []
    for raw in header:
        name = raw.strip()
        match = lower.get(name.lower(), [])
        out.append(name if name in columns or len(match) != 1 else match[0])
    return one_name_each(header, out, where, InvalidModelFile)


def read_model_toml(path: Path, text: str, columns: Sequence[str]) -> Table:
    """A models TOML's tables as rows (the table's key is the model's name), each on the line
    of its [header]; an array of aliases becomes one ';'-separated cell."""
    try:
        parsed = tomllib.loads(text, parse_float=lambda s: s.replace("_", ""))
    except (tomllib.TOMLDecodeError, ValueError) as exc:
        raise InvalidModelFile(
            f"{printable(path)}: not valid TOML: {toml_problem(text, exc)}"
        ) from exc
    lines = toml_lines(text)
    rows = []
    for table, fields in parsed.items():
        if not isinstance(fields, dict):
            raise InvalidModelFile(
                f"{printable(path)}: top-level key {quoted(table)} must be a table like "
                f"[{printable(table)}] naming a model"
            )
        keys = canonical_columns(list(fields), columns, f"{printable(path)} [{printable(table)}]")
        row = {k: _toml_cell(v) for k, v in zip(keys, fields.values(), strict=True)}
        given = row.pop("name", table)
        if spelling(given) != spelling(table):
            raise InvalidModelFile(
                f"{printable(path)} [{printable(table)}]: key name: {quoted(given)} differs "
                "from the table's name; a TOML model is named by its [header]: remove the key"
            )
        rows.append({"name": table, **row})
    frame = pd.DataFrame(rows, dtype=object).fillna("") if rows else pd.DataFrame()
    return frame, [lines.get((t,)) for t in parsed]


def _toml_cell(value: object) -> str:
    if isinstance(value, list):
        return ";".join(str(v) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value).strip()


def read_model_frame(frame: pd.DataFrame, label: str, columns: Sequence[str]) -> Table:
    """A DataFrame's cells as text (blank for NaN): its header is line 1, its rows lines 2,
    3, ... A frame indexed by name (as pipeline.models() gives) has its index as `name`."""
    if str(frame.index.name) == "name" and "name" not in map(str, frame.columns):
        frame = frame.reset_index()
    names = canonical_columns([str(c) for c in frame.columns], columns, f"{label}:1")
    values = frame.astype(object).where(frame.notna(), "")
    cells = values.map(_toml_cell)
    cells.columns = names
    return cells.reset_index(drop=True), list(range(2, len(frame) + 2))
