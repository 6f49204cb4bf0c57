"""The workbook writer, chosen once per process, when the first workbook is written:
rvgsrust-xlsxwriter (rust_xlsxwriter under a Python API, 4-5 x faster) where its wheel is
installed, else XlsxWriter, the pure-Python original, through render.workbook.xlsx_adapter (the same
names and call shapes, the same workbook). `rx` stands for either: the workbook modules use
only it, as they would the module `rvgsrust_xlsxwriter`.

PIPELINE_XLSX_WRITER=xlsxwriter forces XlsxWriter (for tests, and where the Rust wheel installs
but misbehaves); =rvgsrust requires the Rust writer; unset or empty picks the Rust writer if it
imports (docs/outputs.md#the-workbook). Beside it, what every workbook write shares: its
temporary files in a folder of the write's (spooling_in), the OS's reason inside a Rust
panic (panic_reason) and the language keyword of its document properties.
"""

from __future__ import annotations

import os
import re
import tempfile
import threading
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from types import ModuleType

from pipeline.errors import OutputError, printable
from pipeline.i18n import current_lang

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
    from pipeline.render.workbook import xlsx_adapter

    return PYTHON, xlsx_adapter


class _Writer:
    """`rx.Workbook`, `rx.Format`, ...: the chosen writer's, looked up when first used, so
    importing the package loads neither writer and an unusable choice is an error of the
    write (`Error: ...`), not of the import."""

    def __getattr__(self, name: str):
        return getattr(_chosen()[1], name)


rx = _Writer()


def language_keywords() -> str:
    """The workbook's keywords property: the language of its words for people ('language: ko';
    neither writer can set the core `language` property)."""
    return f"language: {current_lang()}"


# TMPDIR is the process's, not a thread's: a workbook spooling in its own folder holds it
# for its whole write (the writer opens its temp files as late as close()), so two threads
# writing workbooks at once take turns instead of spooling into each other's folders
_TMPDIR_LOCK = threading.Lock()


@contextmanager
def spooling_in(folder: Path | None):
    """The writer's temporary files in `folder`: its constant-memory sheets spool to the
    system's temp folder (TMPDIR, read when the writer needs it), whatever set_tempdir says."""
    if folder is None:
        yield
        return
    tempfile.gettempdir()  # Python's own temp folder cached now, never taken from ours
    with _TMPDIR_LOCK:
        before = os.environ.get("TMPDIR")
        os.environ["TMPDIR"] = str(folder)
        try:
            yield
        finally:
            if before is None:
                os.environ.pop("TMPDIR", None)
            else:
                os.environ["TMPDIR"] = before


def panic_reason(exc: BaseException) -> str:
    """The OS's reason inside a Rust panic message (`... message: "No space left on device"
    }`), else the message's first line."""
    text = str(exc)
    found = re.search(r'message: "([^"]+)"', text)
    return found[1] if found else (text.splitlines() or ["the writer stopped"])[0]
