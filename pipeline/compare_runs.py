"""`pipeline compare` of two whole runs (README "What changed since last night"): two folders
`run -o` wrote for several inputs, their inputs (the <stem>/ sub-folders) paired by the
input's own name as each run's manifest records it (run.earlier.pair_runs); an input only
one run has is `added` or `removed` as a whole (every scenario of it). One
changes.csv (an `input` column first), one changes.html (the changes of every input grouped
first, then a section per input) and one exit status for the night."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from pipeline.compare import Comparison, compare, write_changes_folder
from pipeline.errors import InvalidResults, printable
from pipeline.i18n import _
from pipeline.model.changes import COLUMNS, DEFAULT_THRESHOLD, KINDS, Changes, compare_results
from pipeline.render import format as fmt
from pipeline.render.changes import render_changes_sections
from pipeline.render.tables import write_csv
from pipeline.run.baseline import read_results_file, results_in
from pipeline.run.earlier import input_file, pair_runs
from pipeline.run.manifest import read_manifest


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
    has), and which inputs one run lacks (`whole`: name -> added or removed)."""

    old_label: str
    new_label: str
    inputs: tuple[tuple[str, Comparison], ...]
    whole: dict[str, str]
    runs: tuple[tuple[str, Path], ...] = ()  # (role, absolute path) of the two folders

    @property
    def counts(self) -> dict[str, int]:
        """Changes per kind over every input."""
        return {k: sum(c.changes.counts[k] for _, c in self.inputs) for k in KINDS}

    def failing(self, kinds=None) -> bool:
        """Whether an input has a change of one of `kinds` (None: any)."""
        return any(c.changes.failing(kinds) for _, c in self.inputs)

    def summary(self) -> str:
        """One line for the night: inputs, scenarios compared, changes per kind, and the
        inputs one run lacks."""
        counts = self.counts
        total = sum(counts.values())
        compared = sum(c.changes.compared for _name, c in self.inputs)
        found = ", ".join(f"{k} {fmt.count(counts[k])}" for k in KINDS if counts[k])
        changes = _("{n} change ({kinds})") if total == 1 else _("{n} changes ({kinds})")
        n, compared = fmt.count(len(self.inputs)), fmt.count(compared)
        changes = changes.format(n=fmt.count(total), kinds=found) if total else _("no changes")
        values = {"n": n, "compared": compared, "changes": changes}
        if len(self.inputs) == 1:
            text = _("{n} input, {compared} compared: {changes}", **values)
        else:
            text = _("{n} inputs, {compared} compared: {changes}", **values)
        changed = [n for n, c in self.inputs if sum(c.changes.counts.values())]
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
        html = render_changes_sections(sections, title, (self.old_label, self.new_label))
        tables = [c.changes.table.loc[:, list(COLUMNS)].assign(input=name)
                  for name, c in self.inputs]  # fmt: skip
        columns = ["input", *COLUMNS]
        table = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(columns=columns)
        table = table[columns].astype({c: object for c in columns if c != "ratio"})
        inputs = {n: {"counts": dict(c.changes.counts), "compared": c.changes.compared,
                      **({"whole": self.whole[n]} if n in self.whole else {})}
                  for n, c in self.inputs}  # fmt: skip
        about = {"baseline": self.old_label, "new": self.new_label, "inputs": inputs,
                 "counts": self.counts}  # fmt: skip
        return write_changes_folder(Path(out_dir), runs, force,
                                    lambda path: write_csv(table, path), html, about)  # fmt: skip


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
    pairs = _paired(old_inputs, new_inputs)
    inputs, whole = [], {}
    for name, old_name in pairs.items():
        if old_name is not None:
            old_run, new_run = old_inputs[old_name].parent, new_inputs[name].parent
            inputs.append((name, compare(old_run, new_run, threshold)))
    gone = set(old_inputs) - set(pairs.values())
    for name, path, how in [
        *((n, p, "added") for n, p in new_inputs.items() if pairs[n] is None),
        *((n, p, "removed") for n, p in old_inputs.items() if n in gone),
    ]:
        if name in new_inputs and how == "removed":  # another input's folder name tonight
            name = _("{input} (baseline)", input=name)
        inputs.append((name, _one_sided(path, how, threshold)))
        whole[name] = how
    runs = (("baseline", Path(os.path.abspath(old))), ("new", Path(os.path.abspath(new))))
    return RunsComparison(printable(os.fspath(old)), printable(os.fspath(new)), tuple(inputs),
                          whole, runs)  # fmt: skip


def _paired(old: dict[str, Path], new: dict[str, Path]) -> dict[str, str | None]:
    """Each new input's folder name -> its baseline's (None: the baseline has none), paired
    by the input's own name as the manifests record it (run.earlier.pair_runs), not by the
    folder's name: Plan.csv's folder may be plan one night and plan-3f9a1c the next."""
    there = {path.parent: input_file(read_manifest(path.parent)) for path in old.values()}
    wanted = [(input_file(read_manifest(path.parent)), name) for name, path in new.items()]
    runs = pair_runs(wanted, there)
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
