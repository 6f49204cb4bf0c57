"""The lines `pipeline run` and `pipeline validate` print for an input, on either engine:
what was computed or found valid, and the rejected rows, counted alike by both commands
(each row once; one with valid scenarios too said partly)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pipeline.errors import printable
from pipeline.i18n import _
from pipeline.model.roofline import BOUNDS
from pipeline.render import format as fmt


def counted(n: int, one: str, many: str) -> str:
    """`n` with its noun, one or many (texts of the catalog: '1 scenario', '2 scenarios')."""
    return (one if n == 1 else many).format(n=fmt.count(n))


def partly_rejected(problems, lines: np.ndarray) -> int:
    """How many of the rows with a problem also have valid scenarios (`lines`: each valid
    scenario's, or row's, source line): a fleet point the catalog cannot time, a duplicate."""
    bad = {p.line for p in problems}
    return len(bad.intersection(np.unique(lines).tolist())) if bad else 0


def rejected_text(rejected: int, partly: int = 0) -> str:
    """'1 rejected row', '2 rejected rows (1 partly)': the rows with a problem, each once, as
    every output counts them (summary.rejected_rows); those of them whose other scenarios
    are valid (computed by `run`) said apart. `validate` and `run` say it alike."""
    text = counted(rejected, _("{n} rejected row"), _("{n} rejected rows"))
    return text + _(" ({n} partly)", n=fmt.count(partly)) if partly else text


def input_line(source, scenarios: int, bounds, rejected: int, folder: Path, files: str,
               partitions: int | None = None, *, partly: int = 0) -> str:  # fmt: skip
    """The line `pipeline run` prints for an input, on either engine: its scenarios (in how
    many partitions, on Dask), how many are bound by what, the rejected rows (`partly`: how
    many of them have valid scenarios too, rejected_text), and the folder with the files
    written."""
    words = {"compute": _("compute-bound"), "memory": _("memory-bound"),
             "network": _("network-bound")}  # fmt: skip
    bound = ", ".join(f"{words[b]} {fmt.count(bounds[b])}" for b in BOUNDS)
    parts = (
        ""
        if partitions is None
        else counted(partitions, _(" in {n} partition"), _(" in {n} partitions"))
    )
    return _(
        "{source}: {scenarios}{partitions} ({bounds}), {rejected} -> {folder}/ [{files}]",
        source=printable(source),
        scenarios=counted(scenarios, _("{n} scenario"), _("{n} scenarios")),
        partitions=parts,
        bounds=bound,
        rejected=rejected_text(rejected, partly),
        folder=printable(folder),
        files=printable(files),
    )


@dataclass(frozen=True)
class Checked:
    """What `pipeline validate` found in an input, on either engine: the rows read, the valid
    scenarios, every problem and warning, and the line of each valid scenario (checked as the
    Dask engine checks, nothing expanded: of each valid row)."""

    source: str
    rows: int
    scenarios: int
    problems: tuple
    warnings: tuple
    lines: np.ndarray

    @classmethod
    def of(cls, analysis) -> Checked:
        """An analysis's (a local run's checks and model)."""
        s = analysis.summary
        lines = analysis._loaded.frame["line"].to_numpy()  # its valid scenarios' source lines
        return cls(analysis.source, s.source_rows, s.scenarios, analysis.problem_list,
                   analysis.warnings, lines)  # fmt: skip


def validate_line(checked: Checked, *, dask: bool = False, over: int | None = None) -> str:
    """The line `pipeline validate` prints for an input: rows read, valid scenarios, rejected
    rows, each row counted once, as `run` counts them (rejected_text: one with valid
    scenarios and refused ones, a fleet point the catalog cannot time, is a rejected row
    said partly). `dask`: checked for --engine dask; `over`: the --max-rows the file is
    past, so checked as the Dask engine checks it."""
    bad = {p.line for p in checked.problems}
    text = _(
        "{source}: {rows} read, {scenarios}{dask}, {rejected}",
        source=printable(checked.source),
        rows=counted(checked.rows, _("{n} row"), _("{n} rows")),
        scenarios=counted(checked.scenarios, _("{n} valid scenario"), _("{n} valid scenarios")),
        dask=_(" for --engine dask") if dask else "",
        rejected=rejected_text(len(bad), partly_rejected(checked.problems, checked.lines)),
    )
    if over is not None:
        dask_says = _("checked as for --engine dask") if bad else _("valid for --engine dask")
        text += _(": over --max-rows ({limit}) for the local engine; {dask}",
                  limit=fmt.count(over), dask=dask_says)  # fmt: skip
    return text
