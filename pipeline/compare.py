"""`pipeline.compare(old, new)`: what changed between two runs (DESIGN.md §9), each run an
Analysis, an output folder (its results.parquet, else results.csv), one of those files, or a
results frame; `Comparison.write(DIR)` writes changes.csv and changes.html atomically."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from pipeline.errors import InvalidResults, OutputError, printable
from pipeline.i18n import _
from pipeline.model.changes import (
    DEFAULT_THRESHOLD,
    KINDS,
    Changes,
    check_threshold,
    compare_results,
)
from pipeline.record import Record
from pipeline.render import format as fmt
from pipeline.render.changes import render_changes_html, write_changes_csv
from pipeline.run.baseline import NO_RESULTS, read_results_file, results_in
from pipeline.run.folder import OutputFolder
from pipeline.run.manifest import TOOL, file_entries, read_manifest

Run = Record | str | Path | pd.DataFrame


@dataclass(frozen=True)
class Comparison:
    """The changes between two runs (`changes`: pipeline.model.changes.Changes)."""

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
        bound flips (pipeline.render.notebook_changes)."""
        from pipeline.render.notebook_changes import render_comparison_html

        return render_comparison_html(self.changes, *self.labels)

    def write(self, out_dir: str | Path, *, force: bool = False) -> tuple[Path, Path]:
        """Write out_dir/changes.csv and out_dir/changes.html, replacing out_dir as a whole
        only when it is missing, empty or a folder this tool wrote, and never when it is,
        holds or lies inside a compared run (OutputError); returns the two paths."""
        html = render_changes_html(self.changes, self.old_label, self.new_label)
        about = {"counts": dict(self.changes.counts), "compared": self.changes.compared,
                 "skipped": list(self.changes.skipped)}  # fmt: skip
        return write_changes_folder(
            Path(out_dir), self.runs, force, lambda path: write_changes_csv(self.changes, path),
            html, {"baseline": self.old_label, "new": self.new_label, **about},
        )  # fmt: skip


def write_changes_folder(
    out_dir: Path, runs, force: bool, write_csv_to, html: str, about: dict
) -> tuple[Path, Path]:
    """Write out_dir/changes.csv (`write_csv_to(path)`), changes.html and a manifest.json
    (`about`, then the files), replacing out_dir as a whole only when it is missing, empty or
    a folder this tool wrote, and never when it is, holds or lies inside one of `runs`
    ((role, path) pairs: OutputError); returns the CSV's and the page's paths."""
    check_apart(out_dir, runs)
    with OutputFolder(out_dir, inputs=[path for _, path in runs], force=force) as tmp:
        csv_path = write_csv_to(tmp / "changes.csv")
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


__all__ = ["Comparison", "OutputError", "compare", "load_results"]
