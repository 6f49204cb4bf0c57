"""Ops of a trace as scenario rows (docs/input.md#from-a-profiler-trace): a GEMM call's recorded
shapes and dtypes as a `matmul` row (x[m,k] @ W[k,n]: B=m, D=k, F=n) or, batched, the einsum
`BMK,BKN->BMN`; a scaled dot-product attention as a `custom` row of its FLOPs and bytes. Calls
alike (op, shapes, dtypes) are one row with `count` and their kernels' summed time."""

from __future__ import annotations

import json
import math

import pandas as pd

from pipeline.model.dtypes import dtype_bytes

GEMMS = ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::matmul", "aten::linear")
# scaled dot-product attention, public and per backend ([B, H, S, E] shapes): where is_causal is
ATTENTION = {
    "aten::scaled_dot_product_attention": 5,
    "aten::_scaled_dot_product_flash_attention": 4,
    "aten::_scaled_dot_product_efficient_attention": 6,
    "aten::_scaled_dot_product_cudnn_attention": 6,
}
DIMS = ("B", "D", "F", "M", "K", "N")
COLUMNS = ("name", "op", *DIMS, "flops", "bytes", "x_dtype", "y_dtype", "out_dtype", "count",
           "measured_seconds", "notes")  # fmt: skip
# PyTorch's scalar type names (c10/core/ScalarType.h, as the profiler writes them) -> ours
TORCH_DTYPES = {
    "c10::BFloat16": "bf16", "float": "fp32", "c10::Half": "fp16", "c10::Float8_e4m3fn": "fp8_e4m3",
    "c10::Float8_e4m3fnuz": "fp8_e4m3", "c10::Float8_e5m2": "fp8_e5m2",
    "c10::Float8_e5m2fnuz": "fp8_e5m2", "signed char": "int8", "c10::Float4_e2m1fn_x2": "fp4",
}  # fmt: skip


def _shape(entry) -> list[int] | None:
    """A tensor's recorded dims, or None (a Scalar's [], a nested list of a tensor list)."""
    if isinstance(entry, list) and entry and all(isinstance(d, int) for d in entry):
        return entry
    return None


def _gemm(name: str, dims: list, types: list) -> dict | None:
    """The row of one GEMM call's shapes, or None when they are not a GEMM the tool models."""
    first = 1 if name in ("aten::addmm", "aten::baddbmm") else 0  # the bias comes first
    if len(dims) < first + 2 or len(types) < first + 2:
        return None  # a torch.compile out= shape and Scalars (beta, alpha) after: ignored
    x, y = _shape(dims[first]), _shape(dims[first + 1])
    x_dtype, y_dtype = TORCH_DTYPES.get(types[first]), TORCH_DTYPES.get(types[first + 1])
    if x is None or y is None or x_dtype is None or y_dtype is None or len(x) < 2 or len(y) < 2:
        return None
    if name == "aten::linear":  # x[..., k] @ W[n, k]^T
        if len(y) != 2 or x[-1] != y[1]:
            return None
        y = [y[1], y[0]]
    if x[-1] != y[-2]:
        return None
    row = {"x_dtype": x_dtype, "y_dtype": y_dtype, "out_dtype": x_dtype}
    if len(y) == 2:  # one weight: the rows of x (every leading dim) @ W
        return {**row, "op": "matmul", "B": math.prod(x[:-1]), "D": x[-1], "F": y[1]}
    if len(x) == 2 and name != "aten::matmul":
        return None
    width = max(len(x), len(y)) - 2
    xb, yb = [1] * (width - len(x) + 2) + x[:-2], [1] * (width - len(y) + 2) + y[:-2]
    batch = [max(a, b) for a, b in zip(xb, yb, strict=True)]  # broadcast
    return {**row, "op": "BMK,BKN->BMN", "B": math.prod(batch), "M": x[-2], "K": x[-1],
            "N": y[-1]}  # fmt: skip


def _attention(dims: list, types: list, causal: bool) -> dict | None:
    """q[..., S, E], k[..., L, E], v[..., L, Ev] -> custom: QKᵀ and PV, 2·S·L·(E + Ev) FLOPs a
    head (half when is_causal), bytes of q, k, v and the output once (a fused kernel)."""
    q, k, v = (_shape(d) for d in (dims + [None] * 3)[:3])
    dtype = TORCH_DTYPES.get(types[0]) if types else None
    if None in (q, k, v, dtype) or min(len(q), len(k), len(v)) < 2:
        return None
    heads, kv_heads = math.prod(q[:-2]), math.prod(k[:-2])  # batch x heads
    s, e, length, ev = q[-2], q[-1], k[-2], v[-1]
    flops = 2 * heads * s * length * (e + ev) // (2 if causal else 1)
    elements = heads * s * (e + ev) + kv_heads * length * (e + ev)
    return {"op": "custom", "flops": flops, "bytes": int(elements * dtype_bytes(dtype)),
            "x_dtype": dtype, "y_dtype": dtype, "out_dtype": dtype, "causal": causal,
            "shape": q}  # fmt: skip


def _label(name: str, row: dict) -> str:
    """The start of a row's name: `mm_8944x1024x2816`, `scaled_dot_product_attention`."""
    sizes = "x".join(str(n) for n in row.pop("shape", [row[d] for d in DIMS if d in row]))
    return name.removeprefix("aten::").lstrip("_") + f"_{sizes}"


def op_rows(calls: pd.DataFrame) -> tuple[pd.DataFrame, pd.Series]:
    """Rows of `calls` (name, gpu_seconds and as JSON dims, types and inputs: `Input Dims`,
    `Input type`, `Concrete Inputs`; the lowest-level GEMM and attention calls) and, per call,
    whether it became a row."""
    text = calls[["name", "dims", "types", "inputs"]].astype(str)  # an empty frame's: float
    key = text["name"] + "|" + text["dims"] + "|" + text["types"] + "|" + text["inputs"]
    first = calls.groupby(key, sort=False).head(1)
    made = {}
    for index, call in first.iterrows():  # one per distinct signature, not per call
        dims, types = json.loads(call["dims"]), json.loads(call["types"])
        if not isinstance(dims, list) or not isinstance(types, list):
            continue
        inputs = json.loads(call["inputs"])
        at = ATTENTION.get(call["name"], -1)
        causal = isinstance(inputs, list) and 0 <= at < len(inputs) and inputs[at] == "True"
        row = (_attention(dims, types, causal) if call["name"] in ATTENTION
               else _gemm(call["name"], dims, types))  # fmt: skip
        if row is not None:
            causal = " is_causal: FLOPs halved" if row.pop("causal", False) else ""
            short = _label(call["name"], row)
            made[key[index]] = {**row, "notes": f"{call['name']} {json.dumps(dims)}{causal}",
                                "short": short}  # fmt: skip
    modelled = key.isin(made)
    sums = calls[modelled].groupby(key[modelled], sort=False)["gpu_seconds"].agg(["size", "sum"])
    rows = pd.DataFrame([made[k] for k in sums.index], columns=[*COLUMNS, "short"])
    rows["count"], rows["measured_seconds"] = sums["size"].to_numpy(), sums["sum"].to_numpy()
    rows["name"] = rows["short"] + "_"
    rows["name"] += rows["x_dtype"].where(rows["x_dtype"] == rows["y_dtype"],
                                          rows["x_dtype"] + "_" + rows["y_dtype"])  # fmt: skip
    again = rows.groupby("name").cumcount()
    rows["name"] = rows["name"].where(again == 0, rows["name"] + "_" + (again + 1).astype(str))
    for column in (*DIMS, "flops", "bytes"):
        rows[column] = rows[column].astype("Int64")
    rows = rows.drop(columns="short").sort_values("measured_seconds", ascending=False,
                                                  kind="stable")  # fmt: skip
    return rows.reset_index(drop=True), modelled
