"""`pipeline compare` of two whole runs (README "What changed since last night"): two folders
`run -o` wrote for several inputs, their inputs (the <stem>/ sub-folders) paired by the
input's own name as each run's manifest records it (run.earlier.pair_runs), and named by
its file (input_names), never by its folder; an input only one run has is `added` or
`removed` as a whole (every scenario of it). One
changes.csv (an `input` column first), one changes.html (the changes of every input grouped
first, then a section per input) and one exit status for the night."""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from pipeline.compare import Comparison, changes_text, compare, write_changes_folder
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
        """One line for the night: how many inputs, how many scenarios compared by name,
        changes per kind, the inputs that changed, and those one run lacks (each input named
        by its file: input_names)."""
        compared = sum(c.changes.compared for _name, c in self.inputs)
        text = _(
            "{inputs}, {scenarios} compared: {changes}",
            inputs=counted(len(self.inputs), _("{n} input"), _("{n} inputs")),
            scenarios=counted(compared, _("{n} scenario"), _("{n} scenarios")),
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
    return RunsComparison(printable(os.fspath(old)), printable(os.fspath(new)), tuple(inputs),
                          whole, runs)  # fmt: skip


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


def counted(n: int, one: str, many: str) -> str:
    """`n` with its noun, one or many (texts of the catalog: '1 input', '2 inputs')."""
    return (one if n == 1 else many).format(n=fmt.count(n))


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
