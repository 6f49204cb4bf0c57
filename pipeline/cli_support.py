"""What the command line needs besides click: messages escaped line by line, one output
folder name per input, each input's baseline folder, SIGTERM taken as Ctrl-C, and what
`pipeline hardware` checks of its options and writes (the chips chart)."""

from __future__ import annotations

import hashlib
import os
import re
import signal
import threading
from collections import Counter
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

from pipeline.cli_lines import (  # noqa: F401 (the commands import them from here)
    Checked,
    counted,
    input_line,
    partly_rejected,
    rejected_text,
    validate_line,
)
from pipeline.errors import OutputError, PipelineError, printable, quoted
from pipeline.i18n import _
from pipeline.model.chips import peak_dtype
from pipeline.names import FOLDER_BYTES, fit_bytes
from pipeline.render import format as fmt
from pipeline.run.baseline import check_baseline_dir
from pipeline.run.earlier import LATEST, newest_run, pair_runs, runs_in
from pipeline.textfile import atomic_file, check_file_place


def change_kinds(value: str | None) -> tuple[str, ...] | None:
    """--fail-on's comma-separated change kinds (None: every kind); a PipelineError saying
    what would be valid otherwise."""
    from pipeline.model.changes import KINDS

    if value is None:
        return None
    kinds = tuple(k.strip() for k in value.split(",") if k.strip())
    unknown = [k for k in kinds if k not in KINDS]
    if unknown or not kinds:
        shown = f"unknown kind {quoted(unknown[0])}" if unknown else "no kind given"
        raise PipelineError(f"--fail-on: {shown}; give some of {','.join(KINDS)}")
    return kinds


def fail_on_kinds(value: str | None, baseline: str | None) -> tuple[str, ...] | None:
    """run's --fail-on: the kinds whose changes since the baseline make the run exit 1, or
    None when it is not given (a change never fails the run then)."""
    return None if value is None or baseline is None else change_kinds(value)


def changed(changes: dict, kinds: tuple[str, ...]) -> bool:
    """Whether a run's comparison with its baseline (manifest.json's "changes") found a
    change of one of `kinds`."""
    return any(changes["counts"].get(k, 0) for k in kinds)


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


def removed_runs(baseline: Path | None, paired: list[Path | None]) -> list[tuple[Path, str]]:
    """The baseline's runs that no input of this run pairs (their input was dropped): each
    as (its folder, the input file it read)."""
    if baseline is None:
        return []
    taken = {p for p in paired if p is not None}
    return [(run, f) for run, f in runs_in(baseline).items() if f is not None and run not in taken]


def removed_line(run: Path, source: str, failing: bool) -> str:
    """What `run --baseline` says of a baseline run whose input this run does not read: a
    failure line with `--fail-on removed` (even with -q), else a note."""
    if failing:
        return _("{source}: removed since {baseline}: no input of this run reads it "
                 "(--fail-on removed)", source=printable(source),
                 baseline=printable(run))  # fmt: skip
    return _("note: {source}: in the baseline ({baseline}/), not in this run; not compared",
             source=printable(source), baseline=printable(run))  # fmt: skip


def chosen_baseline(
    value: str | None, output_dir: Path, warn: Callable[[str], None] | None = None
) -> tuple[Path | None, str | None]:
    """run's --baseline as a folder, and a note to print: `latest` is the newest finished run
    beside OUTPUT_DIR (run.earlier.newest_run; `warn` hears of the runs it skips), named with
    its start time; none there yet (the first night) is a note, not an error. Any other value
    is the folder it names, as given."""
    if value is None:
        return None, None
    if value != LATEST:
        return Path(value), None
    found = newest_run(output_dir, warn)
    if found is not None:
        folder, started = found
        return folder, _("note: baseline latest: {folder} (started {started})",
                         folder=printable(folder), started=printable(started))  # fmt: skip
    under = printable(Path(os.path.abspath(output_dir)).parent)
    return None, _("note: baseline latest: first run under {folder}/: nothing to compare",
                   folder=under)  # fmt: skip


def escaped(message: str) -> str:
    """A message's lines, each with its control characters escaped."""
    return "\n".join(printable(line) for line in message.split("\n"))


def output_names(paths: list[Path]) -> list[str]:
    """One output folder name per input: its stem in any script, made safe (a run's own
    workbook.xlsx: its run's name and -rerun; pipeline.analysis.output_name). Inputs whose
    names meet (Plan.csv, plan.csv; a/plan.csv, b/plan.csv) each get their own folder, the
    same whatever the order: the one whose stem is already the folder name keeps it, each
    other one gets `-` and 6 hex digits of its path's SHA-256 (plan-3f9a1c); distinct in
    lower case too, for a case-insensitive file system."""
    from pipeline.analysis import output_name

    bases = [output_name(path) for path in paths]
    inputs = dict(zip(paths, bases, strict=True))  # a path given twice is one input
    met = Counter(inputs.values())
    own = Counter(b for path, b in inputs.items() if path.stem == b)
    names: list[str] = []
    for path, base in zip(paths, bases, strict=True):
        name = base
        if met[base] > 1 and not (path.stem == base and own[base] == 1):
            tag = f"-{hashlib.sha256(path.as_posix().encode()).hexdigest()[:6]}"
            name = fit_bytes(base, FOLDER_BYTES - len(tag)).rstrip("-.") + tag
        first, k = name, 2
        while name.casefold() in {n.casefold() for n in names}:  # the same path twice
            name, k = f"{first}-{k}", k + 1
        names.append(name)
    return names


def baseline_folders(folder: Path | None, paths: list[Path], names: list[str]) -> list[Path | None]:
    """Each input's baseline: its own run in `folder`, paired by the input's name as the
    runs' manifests record it (run.earlier.pair_runs; None where there is none, or no
    `folder`); BaselineError when `folder` is missing or unreadable (before any write)."""
    if folder is None:
        return [None] * len(names)
    root = check_baseline_dir(folder)
    wanted = [(str(path), name) for path, name in zip(paths, names, strict=True)]
    return pair_runs(wanted, runs_in(root))


def no_baseline_note(path: Path, folder: Path) -> str:
    """What `run --baseline` says of an input its baseline folder has no run of."""
    return _("note: {input}: no run of it in the baseline {folder}/; not compared",
             input=printable(path), folder=printable(folder))  # fmt: skip


@contextmanager
def sigterm_as_interrupt():
    """SIGTERM (what `timeout` and CI cancels send) stops a run as Ctrl-C does: temp folders
    removed, worker processes stopped, previous outputs untouched."""

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


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
    lines += [_("  note: {notice}", notice=printable(notice)) for notice in written.notices]
    if verbose:
        timings = ", ".join(f"{k} {fmt.fixed(v, decimals=2)} s" for k, v in written.timings.items())
        lines.append(_("  seconds: {timings}", timings=timings))
    return lines


def index_line(runs: int, index: str) -> str:
    """The line after several inputs: the index page over their runs."""
    return counted(runs, _("index of {n} run"), _("index of {n} runs")) + f" -> {index}"


# the files of a run that list its warnings, in the order `run -q` names them
WARNINGS_HELD_IN = ("manifest.json", "report.html", "workbook.xlsx")


def quiet_line(analysis, written) -> str | None:
    """What `pipeline run -q` prints of an input instead of its warnings (warnings_line)."""
    return warnings_line(analysis.source, analysis.warnings, written.folder, written.files)


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


def hardware_usage(names: tuple[str, ...], compare: bool, chart, dtype) -> str | None:
    """What is wrong with `pipeline hardware`'s arguments taken together (None: nothing)."""
    if (compare or chart) and not names:
        example = "--compare h100 tpu-v6e" + (" --chart rooflines.png" if chart else "")
        return f"{'--compare' if compare else '--chart'} needs chip names, e.g. {example}"
    if len(names) > 1 and not compare:
        return f"{fmt.plural(len(names), 'chip')} given: add --compare to see them side by side"
    if dtype is not None and chart is None:
        return "--dtype is the chart's dtype: give --chart PATH.png too"
    try:
        peak_dtype(dtype or "bf16")
    except ValueError as exc:
        return f"--dtype: {exc}"
    return None


def hardware_lines(catalog, names, compare: bool, raw: bool) -> tuple[list[str], list[str]]:
    """What `pipeline hardware NAME` (its fields, then each field's source) or `--compare
    NAMES` prints, and the chips' catalog names; UnknownHardware naming every unknown one."""
    from pipeline.model.chips import chip_table, overridden_fields, resolve_chips
    from pipeline.model.sources import chip_sources, load_sources
    from pipeline.render.catalog_text import chip_lines, compare_lines, source_lines

    chosen = resolve_chips(catalog, names)
    if compare:
        return compare_lines(chip_table(catalog, chosen), raw), chosen
    name = chosen[0]
    row, sources = catalog.chips.loc[name], chip_sources(name)
    if "per" not in sources:  # the divisor of a system figure, from the same rows
        every = load_sources()
        per = every.loc[every["name"] == name].groupby("field")["per"].first()
        sources = sources.assign(per=sources["field"].map(per))
    changed = overridden_fields(catalog, name)
    if len(sources) and not changed:  # each field's own source says it better
        row = row.drop("source")
    lines = chip_lines(name, row, raw) + source_lines(sources, list(row.index), changed)
    return lines, chosen


def write_chips_chart(path: Path, catalog, names: list[str], dtype: str | None) -> str:
    """Write the chips chart (pipeline.charts.chips) of catalog chips `names` at `dtype`
    (default bf16) to `path`, a PNG (so never over a scenario or hardware file); returns
    what to say of it."""
    from pipeline.charts import chips
    from pipeline.render.charts.style import png_bytes

    if path.suffix.lower() != ".png":
        raise OutputError(f"{printable(path)}: the chart is a PNG; name it *.png")
    family = peak_dtype(dtype or "bf16")
    write_file(path, png_bytes(chips(names, family, catalog)))
    left = [n for n in names if fmt.missing(catalog.chips.at[n, f"peak_{family}"])]
    drawn = fmt.plural(len(names) - len(left), "chip")
    note = f" (not drawn, no {family} peak: {', '.join(left)})" if left else ""
    return printable(f"{family} rooflines of {drawn} -> {path}{note}")


def write_file(path: Path, data: bytes) -> None:
    """`data` at `path`, written beside it first and renamed over it: never half written."""
    check_file_place(path)
    try:
        with atomic_file(path) as temp:
            temp.write_bytes(data)
    except OSError as exc:
        raise OutputError(f"writing {printable(path)} failed: {exc.strerror or exc}") from exc
