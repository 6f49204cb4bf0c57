"""Generate a large mixed scenario CSV for benchmarks (not a test)."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

CHIPS = [
    "tpu-v3",
    "tpu-v4p",
    "v5e",
    "tpu-v5p",
    "v6e",
    "tpu7x",
    "a100",
    "h100",
    "h200",
    "b200",
    "gb200",
    "v5p",
]
OPS = ["matmul", "matmul", "matmul", "dot", "batched_matmul", "BSD,DF->BSF", "custom"]
DTYPES = ["bf16", "bf16", "int8", "fp32", "fp16"]


def generate(rows: int, seed: int = 0) -> pd.DataFrame:
    """A frame of `rows` valid scenarios: several ops, dtypes, sharded rows, a dozen chips."""
    rng = np.random.default_rng(seed)
    pow2 = lambda lo, hi: 2 ** rng.integers(lo, hi, rows)  # noqa: E731
    op = rng.choice(OPS, rows)
    hw = rng.choice(CHIPS, rows)
    gpu = np.isin(hw, ["a100", "h100", "h200", "b200", "gb200"])
    dtype = rng.choice(DTYPES, rows)
    dtype = np.where((dtype == "fp32") & ~gpu, "bf16", dtype)  # TPUs have no fp32 MXU peak here
    dtype = np.where((dtype == "fp16") & ~gpu, "bf16", dtype)
    chips = np.where(rng.random(rows) < 0.3, rng.choice([2, 4, 8, 16], rows), 1)
    sharded = (chips > 1) & (op != "custom")
    shard = np.where(sharded, rng.choice(["D", "F"], rows), "")
    shard = np.where(sharded & (op == "dot"), "N", shard)
    shard = np.where(sharded & (op == "batched_matmul"), "D", shard)
    chips = np.where(op == "custom", 1, chips)
    frame = pd.DataFrame(
        {
            "name": [f"s{i}" for i in range(rows)],
            "op": op,
            "B": pow2(0, 12),
            "S": pow2(0, 6),
            "D": pow2(8, 15),
            "F": pow2(8, 15),
            "N": pow2(10, 24),
            "hardware": hw,
            "dtype": dtype,
            "chips": chips,
            "shard": shard,
            "flops": np.where(op == "custom", 1e12, np.nan),
            "bytes": np.where(op == "custom", 1e9, np.nan),
            "notes": np.where(rng.random(rows) < 0.1, "nightly sweep, batch A", ""),
        }
    )
    return frame


def write(rows: int, path: Path) -> Path:
    generate(rows).to_csv(path, index=False)
    return path


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("rows", type=int)
    parser.add_argument("path", type=Path)
    args = parser.parse_args()
    write(args.rows, args.path)
