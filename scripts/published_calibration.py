"""Rebuild the calibration that ships (pipeline/data/calibrations/published.toml) from a
checkout of NVIDIA AIConfigurator's published measured tables (Apache-2.0; the derived
numbers ship, never the tables):

    .venv/bin/python scripts/published_calibration.py AIC_CHECKOUT [--commit C] [-o OUT]

AIC_CHECKOUT is a git dir (read with `git show`, no work tree needed) or a plain folder of
github.com/ai-dynamo/aiconfigurator. The rows are scripts/published_tables.py's, per chip
of the catalog it covers (h100, h200, b200, b300, gb200, gb300, a100, l40s): PER_GROUP
TensorRT-LLM GEMMs per chip x recipe, chosen by a hash of the shape, and every NCCL
collective. The recipes kept are those whose compute dtype is theirs alone on a chip
(RECIPES); the others would share a group with one of them and bend its fit (fp8_block's
1x128 scales share fp8's dtypes; A100's weight-only int8/int4 share bf16's compute), so they
are left out, as is TensorRT-LLM's own all-reduce (it would share NCCL's all_reduce groups).
Then `pipeline.calibrate` fits them (the groups, forms and held-out errors of
docs/model.md#calibration), and the file records the source: the repository, commit and
date in [calibration], each group's table path, framework and version in its `source`.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pipeline  # noqa: E402
from pipeline.calibration.file import PUBLISHED_PATH, write_calibration  # noqa: E402
from scripts import published_tables  # noqa: E402

PER_GROUP = 3000  # GEMMs per chip x recipe: the shape form wants 200, the held-out folds more
RECIPES = ("bfloat16", "fp8", "nvfp4", "sq")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("source", type=Path, help="AIConfigurator checkout: a git dir or a folder")
    p.add_argument("--commit", help="the commit to read (a git dir; default HEAD)")
    p.add_argument("-o", "--output", type=Path, default=PUBLISHED_PATH)
    a = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        rows = Path(tmp) / "published-rows.csv"
        extract = [str(a.source), "-o", str(rows), "--per-group", str(PER_GROUP),
                   "--gemm-dtypes", ",".join(RECIPES)]  # fmt: skip
        published_tables.main(extract + (["--commit", a.commit] if a.commit else []))
        fitted = pipeline.calibrate(rows).calibration
        table = pd.read_csv(rows, comment="#", usecols=["hardware", "op", "src_path",
                            "src_framework", "src_version", "src_commit", "src_date"])  # fmt: skip
    commit, date = table["src_commit"].iloc[0], table["src_date"].iloc[0]
    gemm = table["op"] == "matmul"
    where = {
        (hw, is_gemm): f"{r.src_path} ({r.src_framework} {r.src_version})"
        for (hw, is_gemm), r in table.assign(g=gemm).groupby(["hardware", "g"]).first().iterrows()
    }
    groups = fitted.groups.copy()
    groups["source"] = [
        where.get((hw, kind == "matmul"), "")
        for hw, kind in groups[["hardware", "kind"]].itertuples(index=False)
    ]
    cal = replace(
        fitted,
        groups=groups,
        source=f"{published_tables.REPOSITORY} commit {commit} ({date}): TensorRT-LLM GEMMs "
        f"({', '.join(RECIPES)}; {PER_GROUP:,} a chip and recipe, by a hash of the shape) "
        "and NCCL collectives, by scripts/published_calibration.py",
    )
    write_calibration(cal, a.output)
    used = int(groups["used"].sum())
    print(f"{a.output}: {len(groups)} groups, {used} used; held-out median "
          f"{cal.heldout_median:.1%}, p90 {cal.heldout_p90:.1%}", file=sys.stderr)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
