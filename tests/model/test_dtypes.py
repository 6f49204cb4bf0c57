"""Dtype spellings, sizes and the 'wider' rule (docs/input.md#dtypes)."""

from __future__ import annotations

import pytest

from pipeline.model.dtypes import canonical_dtype, dtype_bytes, wider_dtype


@pytest.mark.parametrize(
    ("text", "name", "size"),
    [
        ("fp32", "fp32", 4),
        ("float32", "fp32", 4),
        ("TF32", "tf32", 4),
        ("bfloat16", "bf16", 2),
        ("float16", "fp16", 2),
        ("fp8_e4m3", "fp8_e4m3", 1),
        ("fp8_e5m2", "fp8_e5m2", 1),
        ("int8", "int8", 1),
        ("int4", "int4", 0.5),
        ("fp4", "fp4", 0.5),
    ],
)
def test_sizes(text, name, size):
    assert canonical_dtype(text) == name
    assert dtype_bytes(name) == size


def test_unknown():
    assert canonical_dtype("bf61") is None


@pytest.mark.parametrize(
    ("x", "y", "wider"),
    [
        ("int8", "bf16", "bf16"),  # more bytes
        ("fp8", "int8", "fp8"),  # tie: float beats int
        ("int8", "fp8", "fp8"),
        ("fp16", "bf16", "fp16"),  # two floats of one size: X's
        ("int4", "fp4", "fp4"),
    ],
)
def test_wider(x, y, wider):
    assert wider_dtype(x, y) == wider
