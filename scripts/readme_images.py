"""Regenerate the README's chart images from the book scenarios (issue 3).

    .venv/bin/python scripts/readme_images.py

Writes docs/img/roofline-tpu-v5e.png (the v5e roofline of scenarios/q1-q5.csv) and
docs/img/sweep-q3.png (the chapter's Q3 figure: attainable FLOP/s against B for D = F = 4096
and 1024), with the same functions `pipeline run` uses, so the pictures match a run.
"""

from __future__ import annotations

from pathlib import Path

from pipeline.hardware import catalog_records, load_catalog
from pipeline.plots import plot_roofline, plot_sweep, roofline_data, sweep_data
from pipeline.roofline import compute_roofline
from pipeline.scenarios import load_scenarios

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "scenarios" / "q1-q5.csv"
IMAGES = ROOT / "docs" / "img"


def main() -> None:
    catalog = load_catalog()
    results = compute_roofline(load_scenarios(SCENARIOS, catalog).frame)
    (v5e,) = catalog_records(catalog, ["tpu-v5e"])
    IMAGES.mkdir(parents=True, exist_ok=True)
    written = [plot_roofline(roofline_data(results, v5e), IMAGES / "roofline-tpu-v5e.png")]
    (q3,) = [d for d in sweep_data(results, v5e) if d["dim"] == "B"]
    written.append(plot_sweep(q3, IMAGES / "sweep-q3.png"))
    for path in written:
        print(path.relative_to(ROOT))


if __name__ == "__main__":
    main()
