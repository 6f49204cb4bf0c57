"""One exception hierarchy, caught once in the CLI, and the escaping every echoed value gets."""

from __future__ import annotations

import re
from dataclasses import dataclass

from pipeline.i18n import _


class PipelineError(Exception):
    """Base of every error the pipeline reports to its user."""


class ScenarioFileError(PipelineError):
    """Scenarios cannot be used at all (unreadable file, missing columns, no rows)."""


class UnknownHardware(PipelineError):
    """A hardware name is not in the catalog."""


class InvalidHardwareFile(PipelineError):
    """A user hardware file (--hardware) is malformed."""


class InvalidCalibrationFile(PipelineError):
    """A calibration file (--calibration) is malformed or holds a value out of range."""


class UnknownModel(PipelineError):
    """A model name is not in the model catalog."""


class InvalidModelFile(PipelineError):
    """A models file (--models, models=) cannot be read at all, or has rows that are wrong."""

    def __init__(self, message: str, problems=()):
        super().__init__(message)
        self.problems = list(problems)


class UnknownSeries(PipelineError, ValueError):
    """A series name an analysis does not have (or not of the kind asked for)."""


class InvalidScenarios(PipelineError):
    """Rows were rejected and strict mode makes that fatal; carries every problem found."""

    def __init__(self, message: str, problems=(), warnings=()):
        super().__init__(message)
        self.problems = list(problems)
        self.warnings = list(warnings)


class OutputError(PipelineError):
    """Outputs could not be written."""


class BrokenInstall(PipelineError):
    """A data file the package ships is missing: the installation is incomplete."""

    def __init__(self, message: str):
        super().__init__(f"{message}; a file roofline-pipeline ships: reinstall it")


class InvalidPriceFile(PipelineError):
    """A price file (--prices, prices=) cannot be read, or holds a wrong cell."""


class InvalidResults(PipelineError):
    """Results to compare cannot be used (missing, unreadable, a name twice)."""


# C0 and C1 controls, DEL, the Unicode line and paragraph separators: anything a terminal or
# a log reader could take for the end of a line or a control sequence; and the bidirectional
# controls (marks, embeddings, overrides, isolates), which make a terminal show text in an
# order other than its own ('h100\u202etxt.exe' would read 'h100exe.txt')
_CONTROL = re.compile(
    "[\x00-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def printable(text: object, keep: str = "") -> str:
    """`text` on one line, every control character written as an escape (`\\n`, `\\x00`,
    `\\u202e`), so a value can never forge a line of its own in a message, or reorder one;
    the characters of `keep` stay as they are (a page's line breaks: render.templates)."""

    def escape(m: re.Match) -> str:
        ch = m.group(0)
        if ch in keep:
            return ch
        if ch in _NAMED:
            return _NAMED[ch]
        return f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}"

    return _CONTROL.sub(escape, str(text))


QUOTED_LIMIT = 120  # characters of a value shown in a message


def quoted(value: object) -> str:
    """A user's value inside a message: in single quotes, control characters escaped, a long
    one shortened (its length said)."""
    text = str(value)
    if len(text) > QUOTED_LIMIT:
        return f"'{printable(text[: QUOTED_LIMIT - 1])}…' ({len(text):,} characters)"
    return f"'{printable(text)}'"


def described(value: object) -> str:
    """A Python value in an argument error: its repr, escaped and shortened, and its type
    (`'5' (str)`)."""
    text = repr(value)
    if len(text) > QUOTED_LIMIT:
        text = text[: QUOTED_LIMIT - 1] + "…"
    kind = type(value)
    module = "" if kind.__module__ == "builtins" else f"{kind.__module__}."
    return f"{printable(text)} ({module}{kind.__qualname__})"


@dataclass(frozen=True)
class RowProblem:
    """One problem with one input row: FILE:LINE: column COL: reason."""

    file: str
    line: int
    name: str
    column: str
    reason: str

    def __str__(self) -> str:
        return printable(
            _("{file}:{line}: column {column}: {reason}", file=self.file, line=self.line,
              column=self.column, reason=self.reason)
        )  # fmt: skip


def text_list(value: object, argument: str, item: str) -> list[str]:
    """An argument that takes one str or a list of them, as a list; TypeError naming the
    argument (`argument`, e.g. "names must be chip names") or the item (`item`, "a chip
    name") when it is neither."""
    values = [value] if isinstance(value, str) else value
    try:
        given = list(values)  # type: ignore[arg-type]
    except TypeError:
        raise TypeError(f"{argument} (a list of str), not {described(value)}") from None
    for one in given:
        if not isinstance(one, str):
            raise TypeError(f"{item} is a str, not {described(one)}")
    return given
