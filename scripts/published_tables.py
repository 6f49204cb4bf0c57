"""Turn NVIDIA AIConfigurator's published measured tables into one measured scenario file.

AIConfigurator (github.com/ai-dynamo/aiconfigurator, Apache-2.0) publishes kernel times
measured on real GPUs under

    aic-core/src/aiconfigurator_core/systems/data/<chip>/gemm/trtllm/<version>/gemm_perf.parquet
    aic-core/src/aiconfigurator_core/systems/data/<chip>/comm/nccl/<version>/nccl_perf.parquet
    aic-core/src/aiconfigurator_core/systems/data/<chip>/comm/trtllm/<version>/custom_allreduce_perf.parquet

This script reads them from a checkout (a git directory, bare or not, at a commit; or a plain
folder holding the files) and writes a CSV in the tool's scenario format (docs/input.md) with
`measured_seconds`, ready for `pipeline calibrate` / `pipeline run`. The derived file may be
shared under Apache-2.0 terms; the raw tables are not copied.

Per chip it takes the newest version present (PEP 440 order: 1.3.0rc20 > 1.3.0rc17 > 1.2.0rc5)
of the TensorRT-LLM GEMM table and of the NCCL table (and, with --custom-allreduce, of the
TensorRT-LLM custom all-reduce table).

The mapping (docs/input.md):

- GEMM `x[m, k] @ W[n, k]^T` -> `op = matmul` (`BD,DF->BF`) with B = m, D = k, F = n:
  FLOPs 2·m·n·k, bytes m·k·|x| + k·n·|W| + m·n·|out|. `latency` (ms) / 1000 ->
  `measured_seconds`, `count` = 1. The gemm_dtype to the tool's dtypes (GEMM_DTYPES below):
  TensorRT-LLM's quantized Linear layers take bf16 activations and quantize them inside the
  op, so x stays bf16, the weight is the quantized dtype, the output bf16, and
  `compute_dtype` names the tensor-core precision.
- NCCL `op_name` -> `all_gather`, `all_reduce`, `reduce_scatter`, `all_to_all` (alltoall);
  `bytes` = message_size (elements) × the dtype's bytes (half 2, int8 1): nccl-tests' `-b`
  size, each rank's buffer: the whole array V for all_gather, reduce_scatter and all_reduce,
  V / N for all_to_all, whose `bytes` is therefore N × that; `chips` = num_gpus; `link` = the chip's
  NVLink (PCIe on the L40S, which has none).

Every row carries its provenance (`src_repository`, `src_path`, `src_commit`, `src_date`,
`src_framework`, `src_version`), the source's own values (`aic_dtype`, `aic_shape`), and
`holdout_half` (`a` or `b`): a deterministic split by a SHA-256 hash of the shape (m,n,k for a
GEMM, whatever its dtype and chip; op,chips,bytes for a collective), for held-out studies.

Usage:

    python scripts/published_tables.py /path/to/aiconfigurator [--commit REV] -o published.csv
    python scripts/published_tables.py REPO --per-group 500 -o sample.csv  # 500 per chip x dtype
    pipeline validate published.csv
"""

from __future__ import annotations

import argparse
import hashlib
import io
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

DATA = "aic-core/src/aiconfigurator_core/systems/data"
REPOSITORY = "https://github.com/ai-dynamo/aiconfigurator"
# AIConfigurator's system folder -> the tool's catalog name (`pipeline hardware`)
CHIPS = {
    "h100_sxm": "h100",
    "h200_sxm": "h200",
    "b200_sxm": "b200",
    "b300_sxm": "b300",
    "gb200": "gb200",
    "gb300": "gb300",
    "a100_sxm": "a100",
    "l40s": "l40s",
}
# the link NCCL uses inside one node of each chip
LINKS = {"l40s": "pcie"}  # the rest: nvlink
# gemm_dtype -> (x_dtype, y_dtype, out_dtype, compute_dtype, the short name used in row names)
GEMM_DTYPES = {
    "bfloat16": ("bf16", "bf16", "bf16", "bf16"),
    "fp8": ("bf16", "fp8", "bf16", "fp8"),  # per-tensor fp8, activations quantized in the op
    "fp8_block": ("bf16", "fp8", "bf16", "fp8"),  # 1x128 / 128x128 block scales
    "fp8_static": ("fp8", "fp8", "bf16", "fp8"),  # static activation scale (older tables)
    "nvfp4": ("bf16", "fp4", "bf16", "fp4"),  # 16-element blocks, fp8 scales
    "int8_wo": ("bf16", "int8", "bf16", "bf16"),  # weight-only int8, bf16 math
    "int4_wo": ("bf16", "int4", "bf16", "bf16"),  # weight-only int4, bf16 math
    "sq": ("int8", "int8", "bf16", "int8"),  # SmoothQuant W8A8
}
DEFAULT_GEMM_DTYPES = ("bfloat16", "fp8", "fp8_block", "nvfp4", "int8_wo", "int4_wo", "sq")
NCCL_OPS = {
    "all_gather": "all_gather",
    "all_reduce": "all_reduce",
    "reduce_scatter": "reduce_scatter",
    "alltoall": "all_to_all",
}
NCCL_DTYPES = {"half": ("fp16", 2), "int8": ("int8", 1), "bfloat16": ("bf16", 2)}
COLUMNS = [
    "name", "op", "B", "D", "F", "hardware", "dtype", "x_dtype", "y_dtype", "out_dtype",
    "compute_dtype", "chips", "link", "bytes", "measured_seconds", "count",
    "aic_table", "aic_dtype", "aic_shape", "holdout_half",
    "src_repository", "src_path", "src_commit", "src_date", "src_framework", "src_version",
]  # fmt: skip


class Source:
    """The files of an AIConfigurator checkout: a git directory at a commit, or a folder."""

    def __init__(self, path: Path, commit: str | None):
        self.path = path
        self.git = _is_git(path)
        if commit and not self.git:
            raise SystemExit(f"{path}: --commit given, but it is not a git directory")
        if self.git:
            self.commit = _git(path, "rev-parse", "--verify", f"{commit or 'HEAD'}^{{commit}}")
            self.commit = self.commit.decode().strip()
            self.date = _git(path, "show", "-s", "--format=%cI", self.commit).decode().strip()
            listing = _git(path, "ls-tree", "-r", "--name-only", self.commit, "--", DATA)
            self.files = listing.decode().split("\n")
            self.prefix = ""
        else:
            root = path / DATA if (path / DATA).is_dir() else path
            self.prefix = str(root.relative_to(path)) + "/" if root != path else ""
            self.files = [str(p.relative_to(path)) for p in root.rglob("*.parquet")]
            self.commit = ""
            self.date = ""

    def read(self, name: str) -> pd.DataFrame:
        if self.git:
            return pd.read_parquet(io.BytesIO(_git(self.path, "show", f"{self.commit}:{name}")))
        return pd.read_parquet(self.path / name)

    def date_of(self, name: str) -> str:
        """The commit's date, else the file's modification time (a plain folder)."""
        if self.date:
            return self.date
        stamp = (self.path / name).stat().st_mtime
        return datetime.fromtimestamp(stamp, UTC).isoformat(timespec="seconds")

    def newest(self, chip: str, kind: str, framework: str, table: str) -> str | None:
        """The path of the newest version of `table` for chip/kind/framework, or None."""
        found = {}
        for f in self.files:
            parts = f.split("/")
            if len(parts) < 5 or parts[-1] != table:
                continue
            c, k, fw, version = parts[-5], parts[-4], parts[-3], parts[-2]
            if (c, k, fw) == (chip, kind, framework):
                found[version] = f
        if not found:
            return None
        return found[max(found, key=_version_key)]


def _is_git(path: Path) -> bool:
    if (path / ".git").exists():
        return True
    try:
        out = subprocess.run(
            ["git", "-C", str(path), "rev-parse", "--is-bare-repository"],
            capture_output=True, check=True,
        )  # fmt: skip
    except (subprocess.CalledProcessError, FileNotFoundError):
        return False
    return out.stdout.strip() == b"true"


def _git(path: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(path), *args], capture_output=True, check=True).stdout


def _version_key(version: str):
    from packaging.version import InvalidVersion, Version

    try:
        return (1, Version(version), ())
    except InvalidVersion:
        parts = tuple(int(p) if p.isdigit() else p for p in version.replace("-", ".").split("."))
        return (0, Version("0"), tuple(str(p).zfill(12) for p in parts))


def half_of(text: str) -> str:
    """'a' or 'b', from the first byte of the SHA-256 of `text`: a stable split."""
    return "ab"[hashlib.sha256(text.encode()).digest()[0] & 1]


def _hash_rank(text: str) -> int:
    return int.from_bytes(hashlib.sha256(("rank:" + text).encode()).digest()[:8], "big")


def provenance(src: Source, path: str, table: pd.DataFrame, framework: str) -> dict:
    version = path.split("/")[-2]
    return {
        "src_repository": REPOSITORY,
        "src_path": path,
        "src_commit": src.commit,
        "src_date": src.date_of(path),
        "src_framework": framework,
        "src_version": version,
    }


def gemm_rows(src: Source, folder: str, chip: str, dtypes, per_group: int | None, notes: list):
    path = src.newest(folder, "gemm", "trtllm", "gemm_perf.parquet")
    if path is None:
        notes.append(f"{folder}: no TensorRT-LLM GEMM table")
        return None
    t = src.read(path)
    present = sorted(t["gemm_dtype"].unique())
    notes.append(
        f"{folder} -> {chip}: {path} ({len(t):,} rows; gemm_dtype: "
        + ", ".join(f"{d} {int((t['gemm_dtype'] == d).sum()):,}" for d in present)
        + ")"
    )
    unknown = [d for d in present if d in dtypes and d not in GEMM_DTYPES]
    if unknown:
        notes.append(f"{folder}: gemm_dtype without a mapping, left out: {', '.join(unknown)}")
    t = t[t["gemm_dtype"].isin([d for d in dtypes if d in GEMM_DTYPES])]
    t = t[(t["latency"] > 0) & t["latency"].notna()]
    # one row per (dtype, m, n, k): a repeated measurement keeps its median
    t = t.groupby(["gemm_dtype", "m", "n", "k"], as_index=False, sort=True)["latency"].median()
    shape = t["m"].astype(str) + "," + t["n"].astype(str) + "," + t["k"].astype(str)
    if per_group:
        rank = shape.map(_hash_rank)
        keep = rank.groupby(t["gemm_dtype"]).rank(method="first") <= per_group
        t, shape = t[keep], shape[keep]
    mapped = t["gemm_dtype"].map(GEMM_DTYPES)
    out = pd.DataFrame(
        {
            "name": chip + "/gemm/" + t["gemm_dtype"] + "/m" + t["m"].astype(str) + "_n"
            + t["n"].astype(str) + "_k" + t["k"].astype(str),
            "op": "matmul",
            "B": t["m"].to_numpy(),
            "D": t["k"].to_numpy(),
            "F": t["n"].to_numpy(),
            "hardware": chip,
            "dtype": "",
            "x_dtype": mapped.str[0],
            "y_dtype": mapped.str[1],
            "out_dtype": mapped.str[2],
            "compute_dtype": mapped.str[3],
            "measured_seconds": t["latency"].to_numpy() / 1e3,
            "count": 1,
            "aic_table": "gemm_perf",
            "aic_dtype": t["gemm_dtype"],
            "aic_shape": "m=" + t["m"].astype(str) + " n=" + t["n"].astype(str) + " k="
            + t["k"].astype(str),
            "holdout_half": shape.map(half_of),
            **provenance(src, path, t, "trtllm"),
        }
    )  # fmt: skip
    return out


def comm_rows(src: Source, folder: str, chip: str, kind: str, notes: list):
    framework, table = {
        "nccl": ("nccl", "nccl_perf.parquet"),
        "custom": ("trtllm", "custom_allreduce_perf.parquet"),
    }[kind]
    path = src.newest(folder, "comm", framework, table)
    if path is None:
        notes.append(f"{folder}: no {table}")
        return None
    t = src.read(path)
    dcol = "nccl_dtype" if "nccl_dtype" in t.columns else "allreduce_dtype"
    notes.append(
        f"{folder} -> {chip}: {path} ({len(t):,} rows; ops "
        + ", ".join(sorted(t["op_name"].unique()))
        + f"; {dcol} " + ", ".join(sorted(t[dcol].unique()))
        + "; num_gpus " + ", ".join(str(g) for g in sorted(t["num_gpus"].unique())) + ")"
    )  # fmt: skip
    t = t[t["op_name"].isin(NCCL_OPS) & t[dcol].isin(NCCL_DTYPES) & (t["num_gpus"] >= 2)]
    t = t[(t["latency"] > 0) & t["latency"].notna()]
    keys = ["op_name", dcol, "num_gpus", "message_size"]
    t = t.groupby(keys, as_index=False, sort=True)["latency"].median()
    op = t["op_name"].map(NCCL_OPS)
    dtype = t[dcol].map(lambda d: NCCL_DTYPES[d][0])
    nbytes = t["message_size"] * t[dcol].map(lambda d: NCCL_DTYPES[d][1])
    # nccl-tests' size is each rank's buffer: the whole array for AllGather (its output),
    # ReduceScatter (its input) and AllReduce, but 1/N of it for AllToAll (each rank sends
    # size/N to each peer), whose V, the array over all ranks, is N x the size
    nbytes = nbytes * t["num_gpus"].where(op == "all_to_all", 1)
    tag = "nccl" if kind == "nccl" else "trtllm_ar"
    shape = op + "," + t["num_gpus"].astype(str) + "," + nbytes.astype(str)
    return pd.DataFrame(
        {
            "name": chip + "/" + tag + "/" + op + "/" + t[dcol] + "/g" + t["num_gpus"].astype(str)
            + "/e" + t["message_size"].astype(str),
            "op": op,
            "hardware": chip,
            "dtype": dtype,
            "chips": t["num_gpus"].to_numpy(),
            "link": LINKS.get(chip, "nvlink"),
            "bytes": nbytes.to_numpy(),
            "measured_seconds": t["latency"].to_numpy() / 1e3,
            "count": 1,
            "aic_table": table.removesuffix(".parquet"),
            "aic_dtype": t[dcol],
            "aic_shape": "num_gpus=" + t["num_gpus"].astype(str) + " message_size="
            + t["message_size"].astype(str),
            "holdout_half": shape.map(half_of),
            **provenance(src, path, t, framework),
        }
    )  # fmt: skip


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("source", type=Path, help="AIConfigurator checkout: a git dir or a folder")
    p.add_argument("--commit", help="the commit to read (a git dir; default HEAD)")
    p.add_argument("-o", "--output", type=Path, required=True, help="the CSV to write")
    p.add_argument("--chips", default=",".join(CHIPS), help="AIC system folders, comma-separated")
    p.add_argument("--gemm-dtypes", default=",".join(DEFAULT_GEMM_DTYPES),
                   help="gemm_dtype values to keep, comma-separated")  # fmt: skip
    p.add_argument("--per-group", type=int, default=None,
                   help="keep at most N GEMMs per chip x gemm_dtype, chosen by a hash of the "
                   "shape (deterministic); default: all")  # fmt: skip
    p.add_argument("--no-gemm", action="store_true")
    p.add_argument("--no-nccl", action="store_true")
    p.add_argument(
        "--custom-allreduce",
        action="store_true",
        help="add TensorRT-LLM's custom all-reduce table (rows named */trtllm_ar/*)",
    )
    p.add_argument("--force", action="store_true", help="replace the output if it exists")
    a = p.parse_args(argv)
    if a.output.exists() and not a.force:
        raise SystemExit(f"{a.output} exists: give --force to replace it")
    src = Source(a.source, a.commit)
    dtypes = [d.strip() for d in a.gemm_dtypes.split(",") if d.strip()]
    notes: list[str] = []
    parts = []
    for folder in [c.strip() for c in a.chips.split(",") if c.strip()]:
        chip = CHIPS.get(folder)
        if chip is None:
            notes.append(f"{folder}: not in the tool's catalog, left out")
            continue
        if not a.no_gemm:
            parts.append(gemm_rows(src, folder, chip, dtypes, a.per_group, notes))
        if not a.no_nccl:
            parts.append(comm_rows(src, folder, chip, "nccl", notes))
        if a.custom_allreduce:
            parts.append(comm_rows(src, folder, chip, "custom", notes))
    rows = pd.concat([x for x in parts if x is not None and len(x)], ignore_index=True)
    rows = rows.reindex(columns=COLUMNS)
    for c in ("B", "D", "F", "chips", "bytes", "count"):  # whole numbers, written exactly
        rows[c] = rows[c].astype("Int64")
    header = [
        "# Measured kernel times from NVIDIA AIConfigurator's published tables (Apache-2.0),",
        f"# {REPOSITORY}, commit {src.commit or '(a plain folder: no commit)'}"
        + (f", {src.date}" if src.date else ""),
        f"# made by scripts/published_tables.py on {datetime.now(UTC).date().isoformat()}; "
        "latency (ms) / 1000 = measured_seconds; GEMM x[m,k] @ W[n,k]^T = matmul B=m D=k F=n;",
        "# NCCL bytes = message_size x dtype bytes (the whole array V; x num_gpus for all_to_all). "
        "Tables read:",
        *(f"#   {n}" for n in notes),
    ]
    with open(a.output, "w", encoding="utf-8", newline="") as f:
        f.write("\n".join(header) + "\n")
        rows.to_csv(f, index=False, float_format="%.6g")
    counts = rows.groupby(["hardware", "aic_table", "aic_dtype"]).size()
    print("\n".join(notes), file=sys.stderr)
    print(f"{a.output}: {len(rows):,} rows", file=sys.stderr)
    print(counts.to_string(), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
