"""Regenerate the documentation's chart images from the book scenarios.

    .venv/bin/python scripts/readme_images.py

Writes docs/img/roofline-tpu-v5e.png (the v5e roofline of scenarios/q1-q5.csv) and
docs/img/sweep-q3.png (the chapter's Q3 figure: attainable FLOP/s against B for D = F = 4096
and 1024), with the library's chart functions, so the pictures match a run.
"""

from __future__ import annotations

from pathlib import Path

import pipeline
from pipeline.render.charts.style import DPI

ROOT = Path(__file__).resolve().parent.parent
IMAGES = ROOT / "docs" / "img"


def main() -> None:
    a = pipeline.analyze(ROOT / "scenarios" / "q1-q5.csv")
    IMAGES.mkdir(parents=True, exist_ok=True)
    for name, fig in (
        ("roofline-tpu-v5e.png", pipeline.charts.roofline(a, "tpu-v5e")),
        ("sweep-q3.png", pipeline.charts.sweep(a, "tpu-v5e", "B")),
    ):
        fig.savefig(IMAGES / name, dpi=DPI)
        print((IMAGES / name).relative_to(ROOT))


if __name__ == "__main__":
    main()
