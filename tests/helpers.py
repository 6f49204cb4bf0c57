"""Small helpers for building scenario files inside tests."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from pipeline.hardware import Catalog
from pipeline.roofline import compute_roofline
from pipeline.scenarios import Loaded, load_scenarios


def write_scenarios(tmp_path: Path, text: str, name: str = "s.csv") -> Path:
    path = tmp_path / name
    path.write_text(text.lstrip("\n"), encoding="utf-8")
    return path


def load_text(tmp_path: Path, catalog: Catalog, text: str, **kw) -> Loaded:
    return load_scenarios(write_scenarios(tmp_path, text), catalog, **kw)


def compute_text(tmp_path: Path, catalog: Catalog, text: str) -> pd.DataFrame:
    loaded = load_text(tmp_path, catalog, text)
    assert not loaded.problems, [str(p) for p in loaded.problems]
    return compute_roofline(loaded.frame).set_index("name", drop=False)
