"""Calls as rows: the operands found where each op records them, dims as the tool reads them."""

import json

import pandas as pd
import pytest

from pipeline.traces.rows import op_rows

BF16 = "c10::BFloat16"


def rows_of(*calls):
    frame = pd.DataFrame(
        [{"name": n, "dims": json.dumps(d), "types": json.dumps(t),
          "inputs": json.dumps(i), "gpu_seconds": s}
         for n, d, t, i, s in calls]
    )  # fmt: skip
    return op_rows(frame)


def one(name, dims, types=None, inputs=None):
    rows, modelled = rows_of((name, dims, types or [BF16] * len(dims), inputs, 1e-3))
    return rows.iloc[0].to_dict() if len(rows) else None


def test_mm_is_a_matmul_of_m_k_n():
    row = one("aten::mm", [[8944, 1024], [1024, 2816]])
    assert (row["op"], row["B"], row["D"], row["F"]) == ("matmul", 8944, 1024, 2816)
    assert (row["x_dtype"], row["y_dtype"], row["out_dtype"]) == ("bf16", "bf16", "bf16")


def test_addmm_reads_past_the_bias_listed_first_and_its_scalars():
    row = one("aten::addmm", [[1024], [8944, 1024], [1024, 4096], [], []],
              [BF16, BF16, BF16, "Scalar", "Scalar"])  # fmt: skip
    assert (row["B"], row["D"], row["F"]) == (8944, 1024, 4096)


def test_torch_compiles_extra_output_shape_is_ignored():
    row = one("aten::mm", [[64, 128], [128, 256], [64, 256]])
    assert (row["B"], row["D"], row["F"]) == (64, 128, 256)


def test_linear_weight_is_n_by_k_and_leading_dims_are_rows():
    row = one("aten::linear", [[4, 16, 1024], [3072, 1024], [3072]])
    assert (row["op"], row["B"], row["D"], row["F"]) == ("matmul", 64, 1024, 3072)


def test_bmm_and_broadcast_matmul_are_einsums():
    row = one("aten::bmm", [[8, 32, 64], [8, 64, 16]], ["float", "float"])
    assert (row["op"], row["B"], row["M"], row["K"], row["N"]) == ("BMK,BKN->BMN", 8, 32, 64, 16)
    assert row["x_dtype"] == "fp32" and pd.isna(row["D"])
    row = one("aten::matmul", [[2, 1, 32, 64], [5, 64, 16]])
    assert (row["B"], row["M"], row["K"], row["N"]) == (10, 32, 64, 16)
    row = one("aten::baddbmm", [[8, 32, 16], [8, 32, 64], [8, 64, 16], [], []])
    assert (row["B"], row["M"], row["K"], row["N"]) == (8, 32, 64, 16)


@pytest.mark.parametrize("dims, types", [
    ([[[2, 3], [3, 4]], [3, 4]], [BF16, BF16]),  # a nested shape list: not a tensor's
    ([[], [3, 4]], ["Scalar", BF16]),
    ([[2, 3], [3, 4]], ["", BF16]),  # an empty type
    ([[2, 3], [4, 5]], [BF16, BF16]),  # k does not match
    ([[2, 3], [3, 4]], ["double", "double"]),  # a dtype the tool has not
    ([[2, 3]], [BF16]),
])  # fmt: skip
def test_shapes_that_are_no_gemm_make_no_row(dims, types):
    rows, modelled = rows_of(("aten::mm", dims, types, None, 1e-3))
    assert rows.empty and not modelled.any()


def test_identical_calls_are_one_row_with_count_and_summed_time():
    call = ("aten::mm", [[64, 128], [128, 256]], [BF16, BF16], None, 2e-3)
    other = ("aten::mm", [[64, 128], [128, 256]], ["c10::Half", "c10::Half"], None, 1e-3)
    rows, modelled = rows_of(call, call, other, call)
    assert rows["count"].tolist() == [3, 1] and modelled.all()
    assert rows["measured_seconds"].tolist() == pytest.approx([6e-3, 1e-3])
    assert rows["name"].tolist() == ["mm_64x128x256_bf16", "mm_64x128x256_fp16"]


def test_attention_is_a_custom_row_of_its_flops_and_bytes():
    q = [2, 8, 100, 64]
    kv = [2, 2, 100, 64]  # grouped-query: 2 key/value heads
    row = one("aten::scaled_dot_product_attention", [q, kv, kv, [], []],
              [BF16, BF16, BF16, "", "Scalar"], ["", "", "", "", "0.", "True"])  # fmt: skip
    assert row["op"] == "custom"
    assert row["flops"] == 2 * 16 * 100 * 100 * 128 // 2  # QKᵀ and PV, causal: half
    assert row["bytes"] == (16 * 100 * 128 + 4 * 100 * 128) * 2
    assert "is_causal" in row["notes"]
    full = one(
        "aten::scaled_dot_product_attention", [q, kv, kv], None, ["", "", "", "", "0.", "False"]
    )
    assert full["flops"] == 2 * row["flops"]


def test_a_backends_attention_op_reads_is_causal_where_it_records_it():
    q = [2, 8, 100, 64]
    flash = one("aten::_scaled_dot_product_flash_attention", [q, q, q, [], [], [], []],
                [BF16] * 3 + ["Scalar"] * 4, ["", "", "", "0.", "True", "False", ""])  # fmt: skip
    assert flash["flops"] == 2 * 16 * 100 * 100 * 128 // 2
    assert flash["name"] == "scaled_dot_product_flash_attention_2x8x100x64_bf16"
