"""One exception hierarchy, caught once in the CLI."""

from __future__ import annotations

from dataclasses import dataclass


class PipelineError(Exception):
    """Base of every error the pipeline reports to its user."""


class InvalidScenario(PipelineError):
    """A scenario file cannot be used at all (missing columns, no rows, unreadable)."""


class UnknownHardware(PipelineError):
    """A hardware name is not in the catalog."""


class InvalidHardwareFile(PipelineError):
    """A user hardware file (--hardware) is malformed."""


class RejectedRows(PipelineError):
    """Rows were rejected and --strict makes that fatal."""


class OutputError(PipelineError):
    """Outputs could not be written."""


@dataclass(frozen=True)
class RowProblem:
    """One problem with one input row: FILE:LINE: column COL: reason."""

    file: str
    line: int
    name: str
    column: str
    reason: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: column {self.column}: {self.reason}"
