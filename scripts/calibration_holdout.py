"""The held-out error of `pipeline calibrate` on NVIDIA AIConfigurator's published tables:
fit one half, estimate the other (issue 41; the table in docs/model.md#calibration).

    .venv/bin/python scripts/calibration_holdout.py AIC_CHECKOUT [--per-group 4000]

The rows are scripts/published_tables.py's (TensorRT-LLM GEMMs bf16 and fp8, PER_GROUP per
chip and dtype by a hash of the shape, and every NCCL collective) of the chips the issue
names; each row's `holdout_half` (a or b, from a SHA-256 hash of its shape: the same for
every dtype and chip) splits them. `pipeline calibrate` fits half a; `pipeline.analyze` with
that calibration estimates half b; per chip x dtype (GEMMs) and chip x collective, the
median and p90 of the symmetric error max(t / measured, measured / t) - 1 of the floor and
of the estimate are printed, against the targets (GEMMs median <= 10 % and p90 <= 30 %,
collectives median <= 20 %).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pipeline  # noqa: E402
from pipeline.calibration.estimate import error_figures, symmetric_errors  # noqa: E402
from scripts import published_tables  # noqa: E402

CHIPS = "h100_sxm,h200_sxm,b200_sxm,a100_sxm,gb200"


def halves(rows: Path, folder: Path) -> tuple[Path, Path]:
    """`rows` split into half_a.csv and half_b.csv by its holdout_half, headers kept."""
    header = [line for line in rows.read_text().splitlines(keepends=True) if line[0] == "#"]
    table = pd.read_csv(rows, comment="#", low_memory=False)
    out = []
    for half in "ab":
        path = folder / f"half_{half}.csv"
        with path.open("w", encoding="utf-8", newline="") as f:
            f.writelines(header)
            table[table["holdout_half"] == half].to_csv(f, index=False)
        out.append(path)
    return out[0], out[1]


def figures(results: pd.DataFrame) -> pd.DataFrame:
    """Per chip and dtype (GEMMs) or collective: rows, the floor's and the estimate's median
    and p90 error, and whether the issue's target is met."""
    measured = results["measured_seconds"].to_numpy(dtype=float)
    estimate = symmetric_errors(results["t_estimate"].to_numpy(dtype=float), measured)
    floor = symmetric_errors(results["t_lower"].to_numpy(dtype=float), measured)
    gemm = (results["op"].astype(str) == "matmul").to_numpy()
    what = np.where(gemm, results["compute_dtype"].astype(str), results["collective"].astype(str))
    keys = pd.DataFrame({"chip": results["hardware"].astype(str).to_numpy(), "what": what})
    out = []
    for (chip, kind), at in keys.groupby(["chip", "what"]).indices.items():
        median, p90 = error_figures(estimate[at])
        met = (median <= 0.10 and p90 <= 0.30) if gemm[at[0]] else median <= 0.20
        f_median, f_p90 = error_figures(floor[at])
        out.append({"chip": chip, "what": kind, "rows": len(at),
                    "floor": f"{f_median:.0%} / {f_p90:.0%}",
                    "held out": f"{median:.1%} / {p90:.1%}",
                    "target": "met" if met else "MISSED"})  # fmt: skip
    return pd.DataFrame(out)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("source", type=Path, help="AIConfigurator checkout: a git dir or a folder")
    p.add_argument("--commit", help="the commit to read (a git dir; default HEAD)")
    p.add_argument("--per-group", type=int, default=4000, help="GEMMs per chip and dtype")
    p.add_argument("--chips", default=CHIPS, help="AIC system folders, comma-separated")
    a = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        rows = folder / "rows.csv"
        published_tables.main(
            [str(a.source), "-o", str(rows), "--per-group", str(a.per_group), "--chips",
             a.chips, "--gemm-dtypes", "bfloat16,fp8"]
            + (["--commit", a.commit] if a.commit else [])
        )  # fmt: skip
        half_a, half_b = halves(rows, folder)
        fitted = pipeline.calibrate(half_a).calibration
        results = pipeline.analyze(half_b, calibration=fitted).results
    print(figures(results).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
