"""Run metadata shared by every output stage (manifest, workbook, report)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class RunMeta:
    """What a run read and with which tool and catalog; plain data for every output."""

    run_name: str
    input_path: str
    input_sha256: str
    started: str  # ISO 8601, UTC
    tool_version: str
    catalog_version: str
    source_rows: int  # data rows in the file (before sweep expansion)
    scenarios: int  # valid scenarios computed (after expansion)
    rejected_rows: int  # input lines rejected
    notices: tuple[str, ...] = field(default=())  # what caps left out, said plainly
    warnings: tuple[str, ...] = field(default=())  # about the input: rows kept, but look

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Chart:
    """One rendered chart: what it shows and where its PNG is."""

    kind: str  # "roofline" | "network" | "sweep" | "summary"
    title: str
    path: str  # relative to the run's output folder, e.g. "plots/roofline-tpu-v5e.png"
    hardware: str | None = None  # canonical chip name, for per-hardware charts
    series: tuple[str, ...] = ()  # sweep series drawn, for sweep charts
