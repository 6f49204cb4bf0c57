"""A small run start to exit against importing the tool's dependencies.

    .venv/bin/python benchmarks/bench_startup.py [--repeat 5]

In turn, `--repeat` times, each a fresh process:
- floor: `python -c "import pandas, pyarrow, matplotlib, jinja2, rvgsrust_xlsxwriter"`;
- imports: `python -c "import pipeline.cli"` (what the command imports before it starts:
  the floor's modules plus matplotlib's Figure, axes and text machinery, click and our own);
- run: `python -m pipeline run scenarios/q1-q5.csv --verbose` (every output).
The fastest of each is compared. Target: run <= 2 x floor. Where the rest of the run goes is
taken from its manifest (its own seconds per stage) and the difference to the imports.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "scenarios" / "q1-q5.csv"
FLOOR = "import pandas, pyarrow, matplotlib, jinja2, rvgsrust_xlsxwriter"


def timed(args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(args, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs of each, taken in turn")
    args = parser.parse_args()
    runs: dict[str, list[float]] = {"floor": [], "imports": [], "run": []}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        for _ in range(args.repeat):
            runs["floor"].append(timed([sys.executable, "-c", FLOOR]))
            runs["imports"].append(timed([sys.executable, "-c", "import pipeline.cli"]))
            command = [sys.executable, "-m", "pipeline", "run", str(SCENARIOS), "-o", str(out)]
            runs["run"].append(timed([*command, "--verbose"]))
        manifest = json.loads((out / SCENARIOS.stem / "manifest.json").read_text())
        timings = manifest["timings_seconds"]
    best = {k: min(v) for k, v in runs.items()}
    print(
        f"{SCENARIOS.name}, every output; {args.repeat} run(s) of each, in turn (fastest, [each])"
    )
    labels = {
        "floor": f'python -c "{FLOOR}"',
        "imports": 'python -c "import pipeline.cli"',
        "run": "python -m pipeline run scenarios/q1-q5.csv",
    }
    for k, v in runs.items():
        print(f"  {labels[k]:<84} {best[k]:5.2f} s  [{', '.join(f'{x:.2f}' for x in v)}]")
    print(f"run / floor: {best['run'] / best['floor']:.2f} x (target <= 2 x)")
    work = best["run"] - best["imports"]
    print(f"where the run goes: imports {best['imports']:.2f} s (the floor {best['floor']:.2f} s "
          f"+ {best['imports'] - best['floor']:.2f} s), then {work:.2f} s:")  # fmt: skip
    for stage, seconds in timings.items():
        print(f"  {stage:<10} {seconds:5.2f} s")
    print("  (load and compute run one after the other; the output jobs overlap on the workers, "
          "their sum is not wall time; 'total' is the outputs' wall time)")  # fmt: skip


if __name__ == "__main__":
    main()
