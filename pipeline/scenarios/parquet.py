"""A Parquet scenario (or measured) file as the reader's text table: every cell as the text a
CSV would hold (numbers as written, a null empty), so it goes through the checks a CSV goes
through. Its rows are numbered as the table written as CSV would show them: the first row
(pandas' index 0) is line 2, under the header's line 1 (docs/input.md#parquet)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline.errors import ScenarioFileError, printable, quoted

MAGIC = b"PAR1"  # a Parquet file starts and ends with it


def is_parquet(name: str, data: bytes) -> bool:
    """True when the file is Parquet by its first bytes or its extension."""
    return data.startswith(MAGIC) or name.lower().endswith(".parquet")


def read_parquet(path: Path, data: bytes) -> tuple[pa.Table, np.ndarray]:
    """(table of text cells, line numbers: a row's position + 2); ScenarioFileError when the
    file is not Parquet, has no rows, or a column holds lists, structs or bytes."""
    try:
        table = pq.read_table(pa.BufferReader(data))
    except (pa.ArrowException, OSError) as exc:
        raise ScenarioFileError(f"{printable(path)}: not a readable Parquet file ({exc})") from None
    if table.num_rows == 0:
        raise ScenarioFileError(
            f"{printable(path)}: a header but no scenario rows: nothing to compute"
        )
    columns = []
    for name, column in zip(table.column_names, table.columns, strict=True):
        kind = column.type
        if pa.types.is_dictionary(kind):
            kind = kind.value_type
            column = column.cast(kind)
        # nested and binary cells have no text a CSV would hold; the rest (numbers, decimals,
        # dates, times) are read as the text they print as, like a CSV's cells
        if pa.types.is_nested(kind) or pa.types.is_binary(kind) or pa.types.is_large_binary(kind):
            raise ScenarioFileError(
                f"{printable(path)}: column {quoted(name)} holds {kind}: a scenario file's "
                "cells are text, numbers or dates"
            )
        text = pc.cast(column, pa.string()) if not pa.types.is_null(kind) else column
        columns.append(pc.fill_null(text.cast(pa.string()), ""))
    lines = np.arange(2, table.num_rows + 2, dtype=np.int64)
    return pa.table(columns, names=[str(n) for n in table.column_names]), lines
