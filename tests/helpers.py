"""Small helpers for building scenario files inside tests."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

import pipeline
from pipeline.model.catalog import Catalog
from pipeline.scenarios import Loaded, load_scenarios


def write_scenarios(tmp_path: Path, text: str, name: str = "s.csv") -> Path:
    path = tmp_path / name
    path.write_text(text.lstrip("\n"), encoding="utf-8")
    return path


def load_text(tmp_path: Path, catalog: Catalog, text: str, **kw) -> Loaded:
    return load_scenarios(write_scenarios(tmp_path, text), catalog, **kw)


def compute_text(tmp_path: Path, catalog: Catalog, text: str) -> pd.DataFrame:
    """The results of a scenario text that must have no problems, indexed by name."""
    analysis = pipeline.analyze(write_scenarios(tmp_path, text), hardware=catalog)
    assert not analysis.problem_list, [str(p) for p in analysis.problem_list]
    return analysis.results.set_index("name", drop=False)
