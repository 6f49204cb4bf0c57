"""scripts/published_tables.py: AIConfigurator's measured tables (here a plain folder made in
the test, laid out as the repository is) become scenario rows the tool reads, mapped as
docs/input.md says (a GEMM x[m,k] @ W[n,k]^T is matmul B=m, D=k, F=n; ms to seconds; an
AllToAll's bytes the whole array, N x nccl-tests' size)."""

from __future__ import annotations

import pandas as pd
import pytest

import pipeline
from scripts import published_tables

DATA = "aic-core/src/aiconfigurator_core/systems/data/h100_sxm"


def _table(root, path: str, rows: list[dict]) -> None:
    where = root / DATA / path
    where.parent.mkdir(parents=True)
    pd.DataFrame(rows).to_parquet(where)


def test_a_folder_of_tables_becomes_rows_the_tool_reads(tmp_path):
    gemm = {"framework": "TRTLLM", "version": "1.0.0", "device": "NVIDIA H100 80GB HBM3",
            "op_name": "gemm", "kernel_source": "x"}  # fmt: skip
    _table(tmp_path, "gemm/trtllm/1.0.0/gemm_perf.parquet", [
        {**gemm, "gemm_dtype": "bfloat16", "m": 8, "n": 4096, "k": 1024, "latency": 0.012},
        {**gemm, "gemm_dtype": "fp8", "m": 8, "n": 4096, "k": 1024, "latency": 0.02},
        {**gemm, "gemm_dtype": "fp8_block", "m": 8, "n": 4096, "k": 1024, "latency": 0.03},
    ])  # fmt: skip
    _table(tmp_path, "gemm/trtllm/0.9.0/gemm_perf.parquet", [  # older: not read
        {**gemm, "gemm_dtype": "bfloat16", "m": 1, "n": 1, "k": 1, "latency": 1.0},
    ])  # fmt: skip
    nccl = {"nccl_dtype": "half", "num_gpus": 8, "message_size": 1 << 20}
    _table(tmp_path, "comm/nccl/2.27.3/nccl_perf.parquet", [
        {**nccl, "op_name": "all_reduce", "latency": 0.05},
        {**nccl, "op_name": "alltoall", "latency": 0.04},
    ])  # fmt: skip
    out = tmp_path / "rows.csv"
    args = [str(tmp_path), "-o", str(out), "--chips", "h100_sxm", "--gemm-dtypes", "bfloat16,fp8"]
    assert published_tables.main(args) == 0
    rows = pd.read_csv(out, comment="#").set_index("name")
    bf16 = rows.loc["h100/gemm/bfloat16/m8_n4096_k1024"]
    assert (bf16["op"], bf16["B"], bf16["D"], bf16["F"]) == ("matmul", 8, 1024, 4096)
    assert bf16["measured_seconds"] == pytest.approx(12e-6)
    fp8 = rows.loc["h100/gemm/fp8/m8_n4096_k1024"]
    assert (fp8["x_dtype"], fp8["y_dtype"], fp8["compute_dtype"]) == ("bf16", "fp8", "fp8")
    assert not rows.index.str.contains("fp8_block|m1_n1").any()  # not asked for; older
    a2a = rows[rows["op"] == "all_to_all"].iloc[0]
    ar = rows[rows["op"] == "all_reduce"].iloc[0]
    assert ar["bytes"] == 2 << 20 and a2a["bytes"] == 8 * (2 << 20)
    assert (ar["chips"], ar["link"]) == (8, "nvlink")
    assert set(rows["src_path"]) == {
        f"{DATA}/gemm/trtllm/1.0.0/gemm_perf.parquet",
        f"{DATA}/comm/nccl/2.27.3/nccl_perf.parquet",
    }
    analysis = pipeline.analyze(out)  # every row valid, each measured above its floor here
    assert not analysis.problems.size
    assert (analysis.results["measured_seconds"] > analysis.results["t_lower"]).all()
