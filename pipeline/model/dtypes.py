"""Dtype names, aliases and sizes in bytes (docs/input.md#dtypes)."""

from __future__ import annotations

# canonical name -> (bytes per element, is float, catalog peak column family)
DTYPES: dict[str, tuple[float, bool, str]] = {
    "fp32": (4.0, True, "fp32"),
    "tf32": (4.0, True, "tf32"),
    "bf16": (2.0, True, "bf16"),
    "fp16": (2.0, True, "fp16"),
    "fp8": (1.0, True, "fp8"),
    "fp8_e4m3": (1.0, True, "fp8"),
    "fp8_e5m2": (1.0, True, "fp8"),
    "int8": (1.0, False, "int8"),
    "int4": (0.5, False, "int4"),
    "fp4": (0.5, True, "fp4"),
}

ALIASES: dict[str, str] = {
    "float32": "fp32",
    "bfloat16": "bf16",
    "float16": "fp16",
    "half": "fp16",
    "float": "fp32",
}

# a scenario's dtypes, a column each: X's, Y's and the output's (they size the bytes), and
# the one the math runs in (it picks the peak)
TENSOR_DTYPES = ("x_dtype", "y_dtype", "out_dtype")
DTYPE_COLUMNS = (*TENSOR_DTYPES, "compute_dtype")

PEAK_FAMILIES = ("fp32", "tf32", "bf16", "fp16", "fp8", "int8", "int4", "fp4")


def canonical_dtype(text: str) -> str | None:
    """Canonical dtype name for a user spelling, or None when unknown."""
    key = text.strip().lower()
    key = ALIASES.get(key, key)
    return key if key in DTYPES else None


def dtype_bytes(name: str) -> float:
    """Bytes per element of a canonical dtype."""
    return DTYPES[name][0]


def peak_family(name: str) -> str:
    """The catalog peak column (peak_<family>) that applies to a canonical compute dtype."""
    return DTYPES[name][2]


def wider_dtype(x: str, y: str) -> str:
    """The wider of two dtypes: more bytes; on a tie float beats int; two floats: x's."""
    bx, fx, _ = DTYPES[x]
    by, fy, _ = DTYPES[y]
    if bx != by:
        return x if bx > by else y
    if fx != fy:
        return x if fx else y
    return x


def known_dtype_names() -> list[str]:
    """Every accepted spelling, for did-you-mean messages."""
    return sorted(set(DTYPES) | set(ALIASES))
