"""The workbook writer, chosen once per process, when the first workbook is written:
rvgsrust-xlsxwriter (rust_xlsxwriter under a Python API, 4-5 x faster) where its wheel is
installed, else XlsxWriter, the pure-Python original, through render.xlsx_adapter (the same
names and call shapes, the same workbook). `rx` stands for either: the workbook modules use
only it, as they would the module `rvgsrust_xlsxwriter`.

PIPELINE_XLSX_WRITER=xlsxwriter forces XlsxWriter (for tests, and where the Rust wheel installs
but misbehaves); =rvgsrust requires the Rust writer; unset or empty picks the Rust writer if it
imports (docs/outputs.md#the-workbook).
"""

from __future__ import annotations

import os
from functools import cache
from types import ModuleType

from pipeline.errors import OutputError, printable

ENV = "PIPELINE_XLSX_WRITER"
RUST, PYTHON = "rvgsrust", "xlsxwriter"


def writer_name() -> str:
    """The writer in use: 'rvgsrust' or 'xlsxwriter'."""
    return _chosen()[0]


@cache
def _chosen() -> tuple[str, ModuleType]:
    wanted = os.environ.get(ENV, "").strip()
    if wanted.lower() not in ("", RUST, PYTHON):
        raise OutputError(
            f"{ENV}={printable(wanted)} names no workbook writer; set it to {PYTHON} or {RUST}, "
            "or unset it (the Rust writer where it is installed)"
        )
    if wanted.lower() != PYTHON:
        try:
            import rvgsrust_xlsxwriter
        except ImportError:
            if wanted:
                raise OutputError(
                    f"{ENV}={RUST}, but rvgsrust-xlsxwriter does not import here; "
                    f"install it (pip install rvgsrust-xlsxwriter) or unset {ENV}"
                ) from None
        else:
            return RUST, rvgsrust_xlsxwriter
    from pipeline.render import xlsx_adapter

    return PYTHON, xlsx_adapter


class _Writer:
    """`rx.Workbook`, `rx.Format`, ...: the chosen writer's, looked up when first used, so
    importing the package loads neither writer and an unusable choice is an error of the
    write (`Error: ...`), not of the import."""

    def __getattr__(self, name: str):
        return getattr(_chosen()[1], name)


rx = _Writer()
