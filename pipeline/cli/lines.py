"""The lines the commands print, on either engine: what `run` computed and wrote of an input
and `validate` found valid, the rejected rows counted alike by both (each row once; one with
valid scenarios too said partly), the warnings in one line under -q, and what --baseline and
--fail-on say of the changes."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pipeline.errors import printable
from pipeline.i18n import _
from pipeline.model.roofline import BOUNDS
from pipeline.render import format as fmt
from pipeline.render.format import counted
from pipeline.render.text.serving import serving_sentences
from pipeline.render.text.training import training_sentences


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


def escaped(message: str) -> str:
    """A message's lines, each with its control characters escaped."""
    return "\n".join(printable(line) for line in message.split("\n"))


def summary_lines(path: Path, analysis, written, verbose: bool) -> list[str]:
    """What `pipeline run` prints for an input (named as its analysis names it: a workbook with
    the sheet read, `plan.xlsx[Scenarios]`): what was computed and written, the notices, and
    with `verbose` the seconds each stage took."""
    s = analysis.summary
    folder = written.folder
    files = ", ".join(p.relative_to(folder).as_posix() for p in written.files)
    if len(files) > 160:
        shown = [p for p in written.files if p.parent == folder]
        charts = counted(len(written.files) - len(shown), _("{n} chart in plots/"),
                         _("{n} charts in plots/"))  # fmt: skip
        files = ", ".join([*(p.name for p in shown), charts])
    partly = partly_rejected(analysis.problem_list, analysis._loaded.frame["line"].to_numpy())
    lines = [input_line(analysis.source, s.scenarios, s.bounds, s.rejected_rows, folder, files,
                        partly=partly)]  # fmt: skip
    lines += answer_lines(s.serving, s.training)
    lines += [_("  note: {notice}", notice=printable(notice)) for notice in written.notices]
    if verbose:
        timings = ", ".join(f"{k} {fmt.fixed(v, decimals=2)} s" for k, v in written.timings.items())
        lines.append(_("  seconds: {timings}", timings=timings))
    return lines


def answer_lines(serving, training=None) -> list[str]:
    """The serving answer `pipeline run` prints under an input's line, on either engine: a
    line per serve series and model (render.text.serving, from Summary.serving); none without
    serve rows; then the training answer, a line per train series (render.text.training, from
    Summary.training)."""
    said = serving_sentences(serving) + training_sentences(training)
    return [_("  answer: {sentence}", sentence=printable(s)) for s in said]


def index_line(runs: int, index: str) -> str:
    """The line after several inputs: the index page over their runs."""
    return counted(runs, _("index of {n} run"), _("index of {n} runs")) + f" -> {index}"


# the files of a run that list its warnings, in the order `run -q` names them
WARNINGS_HELD_IN = ("manifest.json", "report.html", "workbook.xlsx")


def warnings_line(source, warnings, folder: Path, files) -> str | None:
    """An input's warnings in one line, on either engine: how many, what the first say (their
    first words), and which of the files written (`files`: paths or names) list them; None
    when it has none."""
    if not warnings:
        return None
    names = {Path(f).name for f in files}
    held = [n for n in WARNINGS_HELD_IN if n in names] or ["manifest.json"]
    listed = held[0] if len(held) == 1 else _("{first} and {last}", first=", ".join(held[:-1]),
                                               last=held[-1])  # fmt: skip
    said = [first_words(w, source) for w in warnings[:GIST_WARNINGS]]
    if len(warnings) > GIST_WARNINGS:
        said.append("…")
    return _(
        "{source}: {warnings} ({said}), in {folder}/{files}",
        source=printable(source),
        warnings=counted(len(warnings), _("{n} warning"), _("{n} warnings")),
        said="; ".join(said),
        folder=printable(folder),
        files=listed,
    )


GIST_WARNINGS = 2  # warnings whose first words `run -q` shows


GIST_CHARACTERS = 60  # of each


def first_words(warning: str, source) -> str:
    """A warning's first words (at most GIST_CHARACTERS, cut between words), without the
    `FILE:LINE:` its line already says."""
    text = " ".join(printable(warning).split())
    text = re.sub(rf"^{re.escape(printable(source))}(?::\d+)?:\s*", "", text)
    if len(text) <= GIST_CHARACTERS:
        return text
    return text[:GIST_CHARACTERS].rsplit(" ", 1)[0].rstrip(",;:(") + "…"


# the files of a run that show its changes since the baseline, in the order a failure names them
CHANGES_HELD_IN = ("changes.csv", "report.html", "workbook.xlsx")


def failed_line(source, changes: dict, kinds: tuple[str, ...], folder: Path, files) -> str:
    """What `pipeline run --fail-on KINDS` prints of an input that fails on them, with or
    without -q (a cron mail must say it): which kinds changed and how many, since which
    baseline, and the files that list the changes."""
    counts = changes["counts"]
    found = _found(counts, kinds)
    other = ", ".join(f"{k} {fmt.count(n)}" for k, n in counts.items() if n and k not in kinds)
    names = {Path(f).name for f in files}
    held = [n for n in CHANGES_HELD_IN if n in names]
    where = f"{printable(folder)}/{', '.join(held)}" if held else f"{printable(folder)}/"
    return _(
        "{source}: changed since {baseline}: {changes} (--fail-on {kinds}{also}) -> {where}",
        source=printable(source),
        baseline=printable(changes["baseline"]),
        changes=found,
        kinds=",".join(kinds),
        also=_("; also {changes}", changes=other) if other else "",
        where=where,
    )


def fail_status(changes: dict, kinds: tuple[str, ...]) -> str:
    """The index's Status of an input that fails `--fail-on KINDS`: the kinds and counts."""
    return _("failed --fail-on: {changes}", changes=_found(changes["counts"], kinds))


def _found(counts: dict, kinds: tuple[str, ...]) -> str:
    """The counts of `kinds` that changed: 'bound 1, fits 2'."""
    return ", ".join(f"{k} {fmt.count(counts[k])}" for k in kinds if counts.get(k))


def added_line(source, baseline: Path, folder: Path) -> str:
    """What `run --fail-on added` prints of an input its baseline has no run of."""
    return _("{source}: added since {baseline}: it has no run there (--fail-on added) -> "
             "{folder}/", source=printable(source), baseline=printable(baseline),
             folder=printable(folder))  # fmt: skip


def removed_line(run: Path, source: str, failing: bool) -> str:
    """What `run --baseline` says of a baseline run whose input this run does not read: a
    failure line with `--fail-on removed` (even with -q), else a note."""
    if failing:
        return _("{source}: removed since {baseline}: no input of this run reads it "
                 "(--fail-on removed)", source=printable(source),
                 baseline=printable(run))  # fmt: skip
    return _("note: {source}: in the baseline ({baseline}/), not in this run; not compared",
             source=printable(source), baseline=printable(run))  # fmt: skip


def no_baseline_note(path: Path, folder: Path) -> str:
    """What `run --baseline` says of an input its baseline folder has no run of."""
    return _("note: {input}: no run of it in the baseline {folder}/; not compared",
             input=printable(path), folder=printable(folder))  # fmt: skip


# the order the summary line names a Dask run's files in, as the local engine's
SHOWN = ("results/part-*.parquet", "results/part-*.csv", "errors.csv", "summary.json",
         "plots/*.png", "workbook.xlsx", "report.html", "manifest.json")  # fmt: skip


def written_files(files: tuple[str, ...]) -> str:
    """The files a run wrote (its manifest's), the partitions and the charts each named once
    by a pattern: only what is there (no plots/*.png when nothing was drawn)."""
    named = set()
    for name in files:
        folder, _, base = name.rpartition("/")
        stem = "part-*" if folder == "results" else "*"
        named.add(f"{folder}/{stem}{Path(base).suffix}" if folder else name)
    return ", ".join(sorted(named, key=lambda n: (SHOWN.index(n) if n in SHOWN else len(SHOWN), n)))
