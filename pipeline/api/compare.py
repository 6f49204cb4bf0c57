"""`pipeline.compare(old, new)`: what changed between two runs (DESIGN.md §9), each run an
Analysis, an output folder (its results.parquet, else results.csv), one of those files, or a
results frame; `Comparison.write(DIR)` writes changes.csv and changes.html atomically.

`pipeline.compare_runs(old, new)`, `pipeline compare` of two whole runs (README "What changed
since last night"): two folders `run -o` wrote for several inputs, their inputs (the <stem>/
sub-folders) paired by the input's own name as each run's manifest records it
(run.earlier.pair_runs), and named by its file (input_names), never by its folder; an input
only one run has is `added` or `removed` as a whole (every scenario of it). One changes.csv
(an `input` column first), one changes.html (the changes of every input grouped first, then
a section per input) and one exit status for the night."""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from pipeline.changes.compare import (
    DEFAULT_THRESHOLD,
    KINDS,
    Changes,
    check_threshold,
    compare_results,
    merge_changes,
)
from pipeline.errors import InvalidResults, OutputError, printable
from pipeline.i18n import _
from pipeline.record import Record
from pipeline.render import format as fmt
from pipeline.render.report.changes_page import (
    render_changes_html,
    render_changes_sections,
)
from pipeline.run.baseline import NO_RESULTS, read_results_file, results_in
from pipeline.run.earlier import input_file, pair_runs
from pipeline.run.folder import OutputFolder
from pipeline.run.manifest import TOOL, file_entries, read_manifest
from pipeline.run.tables import write_changes_csv

Run = Record | str | Path | pd.DataFrame


@dataclass(frozen=True)
class Comparison:
    """The changes between two runs (`changes`: pipeline.changes.compare.Changes)."""

    old_label: str
    new_label: str
    changes: Changes
    # (role, absolute path) of each run read from disk: a folder, or a results file and,
    # when it lies in an output folder of ours, that folder; write() never goes near them
    runs: tuple[tuple[str, Path], ...] = ()

    @property
    def table(self) -> pd.DataFrame:
        """One row per change: name, hardware, change, old, new, ratio, causes."""
        return self.changes.table

    def summary(self) -> str:
        """'1,035 compared: 3 changes (bound 1, t_lower 2)' or '1,035 compared: no changes'."""
        c = self.changes
        text = _("{compared} compared: {changes}", compared=fmt.count(c.compared),
                 changes=changes_text(c.counts))  # fmt: skip
        if c.skipped:
            text += _("; skipped columns only one run has: {columns}",
                      columns=", ".join(c.skipped))  # fmt: skip
        return printable(text)

    @property
    def labels(self) -> tuple[str, str]:
        """The two runs' names as shown: their sources (a path, or an Analysis's name=), each
        followed by its role when both read the same ('rows (baseline)', 'rows (new)': two
        Analyses of rows in memory given no name=)."""
        old, new = printable(self.old_label), printable(self.new_label)
        return (old, new) if old != new else (f"{old} (baseline)", f"{new} (new)")

    def __repr__(self) -> str:
        old, new = self.labels
        return f"<Comparison of {old} → {new}: {self.summary()}>"

    def _repr_html_(self) -> str:
        """What Jupyter shows for a Comparison: the counts, the changes grouped, the first
        bound flips (pipeline.render.report.notebook_changes)."""
        from pipeline.render.report.notebook_changes import render_comparison_html

        return render_comparison_html(self.changes, *self.labels)

    def write(self, out_dir: str | Path, *, force: bool = False) -> tuple[Path, Path]:
        """Write out_dir/changes.csv and out_dir/changes.html, replacing out_dir as a whole
        only when it is missing, empty or a folder this tool wrote, and never when it is,
        holds or lies inside a compared run (OutputError); returns the two paths."""
        html = render_changes_html(self.changes, self.old_label, self.new_label)
        about = {"counts": dict(self.changes.counts), "compared": self.changes.compared,
                 "skipped": list(self.changes.skipped)}  # fmt: skip
        return write_changes_folder(
            Path(out_dir), self.runs, force, self.changes, html,
            {"baseline": self.old_label, "new": self.new_label, **about},
        )  # fmt: skip


def write_changes_folder(
    out_dir: Path, runs, force: bool, changes: Changes, html: str, about: dict
) -> tuple[Path, Path]:
    """Write out_dir/changes.csv (`changes`' table), changes.html and a manifest.json
    (`about`, then the files), replacing out_dir as a whole only when it is missing, empty or
    a folder this tool wrote, and never when it is, holds or lies inside one of `runs`
    ((role, path) pairs: OutputError); returns the CSV's and the page's paths."""
    check_apart(out_dir, runs)
    with OutputFolder(out_dir, inputs=[path for _, path in runs], force=force) as tmp:
        csv_path = write_changes_csv(changes, tmp / "changes.csv")
        html_path = tmp / "changes.html"
        html_path.write_text(html, encoding="utf-8")
        manifest = {"tool": TOOL, "kind": "changes", **about,
                    "files": file_entries(tmp, [csv_path, html_path])}  # fmt: skip
        text = json.dumps(manifest, indent=2, ensure_ascii=False) + "\n"
        (tmp / "manifest.json").write_text(text, encoding="utf-8")
    return out_dir / "changes.csv", out_dir / "changes.html"


def changes_text(counts: dict[str, int]) -> str:
    """'3 changes (bound 1, t_lower 2)', '1 change (fits 1)' or 'no changes': the changes
    counted per kind, in the current language. English names each kind as changes.csv and
    --fail-on do; Korean in words, as the index page counts them ('병목 전환 1건')."""
    total = sum(counts.get(k, 0) for k in KINDS)
    if not total:
        return _("no changes")
    found = ", ".join(_kind_count(k, counts[k]) for k in KINDS if counts.get(k))
    if total == 1:
        return _("{n} change ({kinds})", n=fmt.count(total), kinds=found)
    return _("{n} changes ({kinds})", n=fmt.count(total), kinds=found)


def _kind_count(kind: str, n: int) -> str:
    texts = {
        "bound": _("bound {n}"),
        "fits": _("fits {n}"),
        "critical_batch": _("critical_batch {n}"),
        "t_lower": _("t_lower {n}"),
        "t_estimate": _("t_estimate {n}"),
        "cost": _("cost {n}"),
        "energy": _("energy {n}"),
        "added": _("added {n}"),
        "removed": _("removed {n}"),
    }
    return texts[kind].format(n=fmt.count(n))


def compare(old: Run, new: Run, threshold: float = DEFAULT_THRESHOLD) -> Comparison:
    """The changes from run `old` (the baseline) to run `new`; each an Analysis, an output
    folder, a results.parquet or results.csv file, or a results frame."""
    threshold = check_threshold(threshold)  # before anything is read
    old_frame, old_label = load_results(old, "baseline")
    new_frame, new_label = load_results(new, "new")
    changes = compare_results(old_frame, new_frame, threshold)
    runs = tuple((role, path) for role, run in (("baseline", old), ("new", new))
                 for path in run_paths(run))  # fmt: skip
    return Comparison(old_label, new_label, changes, runs)


def run_paths(run: Run) -> list[Path]:
    """The absolute paths a run read from disk occupies: its folder; or its file, and the
    file's folder when that is an output folder of ours (a run's results.csv)."""
    if not isinstance(run, str | os.PathLike):
        return []
    path = Path(os.path.abspath(run))
    if path.is_dir():
        return [path]
    return [path, path.parent] if read_manifest(path.parent) is not None else [path]


def check_apart(out_dir: Path, runs) -> None:
    """OutputError when `out_dir` is, holds or lies inside one of `runs` ((role, path) pairs):
    replacing it would delete that run, writing into it would change it."""
    target = {Path(os.path.abspath(out_dir)), Path(out_dir).resolve()}
    for role, run in runs:
        places = {run, run.resolve()}
        if target & places:
            how = f"is the {role} run"
        elif any(places & set(t.parents) for t in target):
            how = f"is inside the {role} run {printable(run)}"
        elif any(target & set(p.parents) for p in places):
            how = f"holds the {role} run {printable(run)}"
        else:
            continue
        raise OutputError(
            f"{printable(out_dir)} {how}; a compared run is only read, never written over or "
            "into: give another output folder (e.g. -o changes)"
        )


def load_results(run: Run, role: str = "baseline") -> tuple[pd.DataFrame, str]:
    """A run's results frame (from a file: only the columns a comparison reads) and a label
    for it; InvalidResults when it cannot be read."""
    if isinstance(run, Record):
        return run.results, str(run.source)
    if isinstance(run, pd.DataFrame):
        return run, f"{role} frame"
    if not isinstance(run, str | Path):
        raise TypeError(f"a run is an Analysis, a folder, a file or a DataFrame, not {run!r}")
    path = Path(run)
    label = printable(path)
    if path.is_dir():
        found = results_in(path)
        if found is None:
            raise InvalidResults(
                f"the {role} folder {label} {NO_RESULTS}; give an output folder of `pipeline run`"
            )
        path = found
    elif not path.exists():
        raise InvalidResults(f"the {role} {label} does not exist")
    frame = read_results_file(path, role)
    return frame, label


def inputs_of(folder: Path) -> dict[str, Path]:
    """The runs a folder of several inputs holds: <stem> -> its results file, A-Z; empty for
    a folder that is itself one input's run (it has results of its own) or holds none."""
    folder = Path(folder)
    if not folder.is_dir() or results_in(folder) is not None:
        return {}
    found = {}
    for child in sorted(folder.iterdir()):
        if child.is_dir() and not child.is_symlink() and (path := results_in(child)):
            found[child.name] = path
    return found


@dataclass(frozen=True)
class RunsComparison:
    """Two whole runs compared input by input: each input's Comparison (in order: the
    inputs both runs have, then those only the new run has, then those only the baseline
    has), which inputs one run lacks (`whole`: name -> added or removed), and the inputs'
    changes as one (`changes`: changes.compare.merge_changes, an `input` column first)."""

    old_label: str
    new_label: str
    inputs: tuple[tuple[str, Comparison], ...]
    whole: dict[str, str]
    changes: Changes
    runs: tuple[tuple[str, Path], ...] = ()  # (role, absolute path) of the two folders

    @property
    def counts(self) -> dict[str, int]:
        """Changes per kind over every input."""
        return dict(self.changes.counts)

    def failing(self, kinds=None) -> bool:
        """Whether an input has a change of one of `kinds` (None: any)."""
        return self.changes.failing(kinds)

    def summary(self) -> str:
        """One line for the night: how many inputs, how many scenarios compared by name,
        changes per kind, the inputs that changed, and those one run lacks (each input named
        by its file: input_names)."""
        compared = self.changes.compared
        text = _(
            "{inputs}, {scenarios} compared: {changes}",
            inputs=fmt.counted(len(self.inputs), _("{n} input"), _("{n} inputs")),
            scenarios=fmt.counted(compared, _("{n} scenario"), _("{n} scenarios")),
            changes=changes_text(self.counts),
        )
        changed = [n for n, c in self.inputs
                   if n not in self.whole and sum(c.changes.counts.values())]  # fmt: skip
        if changed:
            text += _("; changed: {inputs}", inputs=", ".join(changed))
        if names := [n for n, w in self.whole.items() if w == "added"]:
            text += _("; added: {inputs}", inputs=", ".join(names))
        if names := [n for n, w in self.whole.items() if w == "removed"]:
            text += _("; removed: {inputs}", inputs=", ".join(names))
        return printable(text)

    def __repr__(self) -> str:
        return f"<RunsComparison of {self.old_label} → {self.new_label}: {self.summary()}>"

    def write(self, out_dir: str | Path, *, force: bool = False) -> tuple[Path, Path]:
        """Write out_dir/changes.csv, changes.html and manifest.json, as Comparison.write
        does (never into or over a compared run); returns the CSV's and the page's paths."""
        runs = (*self.runs, *(run for _name, c in self.inputs for run in c.runs))
        title = _("Changes: {old} → {new}", old=self.old_label, new=self.new_label)
        sections = [(name, c.changes, c.old_label, c.new_label) for name, c in self.inputs]
        html = render_changes_sections(self.changes, sections, title,
                                       (self.old_label, self.new_label))  # fmt: skip
        inputs = {n: {"counts": dict(c.changes.counts), "compared": c.changes.compared,
                      **({"whole": self.whole[n]} if n in self.whole else {})}
                  for n, c in self.inputs}  # fmt: skip
        about = {"baseline": self.old_label, "new": self.new_label, "inputs": inputs,
                 "counts": self.counts}  # fmt: skip
        return write_changes_folder(Path(out_dir), runs, force, self.changes, html, about)


def compare_runs(
    old: str | Path, new: str | Path, threshold: float = DEFAULT_THRESHOLD
) -> RunsComparison:
    """Two folders of multi-input runs compared input by input (see the module);
    InvalidResults when either is not one."""
    old_inputs, new_inputs = inputs_of(Path(old)), inputs_of(Path(new))
    for role, folder, found in (("baseline", old, old_inputs), ("new", new, new_inputs)):
        if not found:
            raise InvalidResults(
                f"the {role} {printable(folder)} holds no run of an input (<stem>/ folders "
                "with results): give two folders `pipeline run -o` wrote, or two inputs' folders"
            )
    files = {role: {name: input_file(read_manifest(path.parent)) for name, path in found.items()}
             for role, found in (("baseline", old_inputs), ("new", new_inputs))}  # fmt: skip
    pairs = _paired(files["baseline"], files["new"])
    gone = [n for n in old_inputs if n not in set(pairs.values())]
    entries = [  # (folder, role, how): paired first, then added, then removed
        *((n, "new", None) for n in new_inputs if pairs[n] is not None),
        *((n, "new", "added") for n in new_inputs if pairs[n] is None),
        *((n, "baseline", "removed") for n in gone),
    ]
    names = input_names([(files[role][n], n, how) for n, role, how in entries])
    inputs, whole = [], {}
    for (folder, _role, how), name in zip(entries, names, strict=True):
        if how is None:
            old_run, new_run = old_inputs[pairs[folder]].parent, new_inputs[folder].parent
            inputs.append((name, compare(old_run, new_run, threshold)))
        else:
            path = (new_inputs if how == "added" else old_inputs)[folder]
            inputs.append((name, _one_sided(path, how, threshold)))
            whole[name] = how
    runs = (("baseline", Path(os.path.abspath(old))), ("new", Path(os.path.abspath(new))))
    merged = merge_changes([(name, c.changes) for name, c in inputs])
    return RunsComparison(printable(os.fspath(old)), printable(os.fspath(new)), tuple(inputs),
                          whole, merged, runs)  # fmt: skip


def input_names(entries: list[tuple[str | None, str, str | None]]) -> list[str]:
    """What each input is called on the line, in changes.csv and changes.html: its file as
    the run's manifest records it (input_path): its name (Plan.csv, plan.csv: their folders
    plan/ and plan-3f9a1c/ would read alike), or its path where two inputs share a name
    (x/plan.csv, y/plan.csv); a run without a recorded input, its folder's name. `entries`:
    (the input file or None, the folder's name, added, removed or None: paired). A name
    still shared is told apart by its role, then by its folder."""
    short = [folder if f is None else Path(f).name for f, folder, _how in entries]
    seen = Counter(short)
    names = [s if seen[s] == 1 or f is None else f
             for s, (f, _folder, _how) in zip(short, entries, strict=True)]  # fmt: skip
    seen = Counter(names)
    names = [_("{input} (baseline)", input=n) if seen[n] > 1 and how == "removed" else n
             for n, (_f, _folder, how) in zip(names, entries, strict=True)]  # fmt: skip
    seen = Counter(names)
    return [f"{n} ({folder}/)" if seen[n] > 1 else n
            for n, (_f, folder, _how) in zip(names, entries, strict=True)]  # fmt: skip


def _paired(old: dict[str, str | None], new: dict[str, str | None]) -> dict[str, str | None]:
    """Each new input's folder name -> its baseline's (None: the baseline has none), paired
    by the input's own name as the manifests record it (run.earlier.pair_runs), not by the
    folder's name: Plan.csv's folder may be plan one night and plan-3f9a1c the next.
    `old`, `new`: folder name -> its input file (None: not recorded)."""
    there = {Path(name): f for name, f in old.items()}
    runs = pair_runs([(f, name) for name, f in new.items()], there)
    return {name: None if run is None else run.name for name, run in zip(new, runs, strict=True)}


def _one_sided(path: Path, how: str, threshold: float) -> Comparison:
    """An input only one run has: every scenario of it added (or removed)."""
    frame = read_results_file(path, "new" if how == "added" else "baseline")
    none = frame.iloc[:0]
    old, new = (none, frame) if how == "added" else (frame, none)
    changes: Changes = compare_results(old, new, threshold)
    label = printable(os.fspath(path.parent))
    labels = ("(none)", label) if how == "added" else (label, "(none)")
    return Comparison(*labels, changes, (("baseline" if how == "removed" else "new",
                                          Path(os.path.abspath(path.parent))),))  # fmt: skip


__all__ = ["Comparison", "OutputError", "RunsComparison", "compare", "compare_runs", "load_results"]
