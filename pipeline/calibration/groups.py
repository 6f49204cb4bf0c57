"""A calibration's groups (issue 41): which group each row belongs to and which used group
estimates it.

A row's kind (KINDS) and group key: matmul and custom rows per hardware x kind x compute
dtype (`dtype`, its canonical name; "" = every dtype, the wider group), a collective per
hardware x op x `link` x `chips` N (0 = pooled over N, the wider group). A row is estimated by
its own group when that is used, else by the wider group when that is used; a custom row of a
transformer step with neither borrows its chip's used matmul group of its dtype (else of
every dtype): only that group's HBM efficiency and overhead (BORROWED)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.model.dtypes import DTYPES

# the op kinds a calibration tells apart: einsums (matmul, dot, any einsum string), custom
# ops (given FLOPs and bytes) and each collective row
KINDS = ("matmul", "custom", "all_gather", "reduce_scatter", "all_reduce", "all_to_all")
MATMUL, CUSTOM = 0, 1
KEYS = ("hardware", "kind", "dtype", "chips", "link")  # a group's key columns


def op_kinds(results: pd.DataFrame) -> np.ndarray:
    """Each row's kind (an object array of KINDS' names): a row with an einsum is "matmul"
    (a sharded one that ends in an AllReduce too: roofline.compute_record gives it
    collective all_reduce but t_math and t_hbm of its own), a row without one is the
    collective its `collective` column names, else "custom"."""
    return np.asarray(KINDS, dtype=object)[kind_codes(results)]


def kind_codes(results: pd.DataFrame) -> np.ndarray:
    """op_kinds() as codes into KINDS (int8), worked out per distinct value, not per row."""
    n = len(results)
    einsum = codes_and_values(results["einsum"]) if "einsum" in results else None
    if einsum is None:
        has_einsum = np.zeros(n, dtype=bool)
    else:
        codes, values = einsum
        named = np.array([isinstance(v, str) and v.strip() != "" for v in values], dtype=bool)
        has_einsum = np.append(named, False)[codes]  # code -1 (missing): no einsum
    codes, values = codes_and_values(results["collective"])
    # a collective's code into KINDS; "" (no collective) and anything unknown: custom
    table = np.array(
        [KINDS.index(v) if v in KINDS[2:] else CUSTOM for v in values] + [CUSTOM],
        dtype=np.int8,
    )
    return np.where(has_einsum, MATMUL, table[codes]).astype(np.int8)


def codes_and_values(column: pd.Series) -> tuple[np.ndarray, list]:
    """Codes (-1: missing) and the distinct values of a column, categorical or not."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return column.cat.codes.to_numpy(), list(column.cat.categories)
    codes, uniques = pd.factorize(column, use_na_sentinel=True)
    return codes, list(uniques)


def _text(results: pd.DataFrame, column: str) -> tuple[np.ndarray, list]:
    """A text column's codes and values ("" for missing, or for no such column)."""
    if column not in results.columns:
        return np.zeros(len(results), dtype=np.int64), [""]
    codes, values = codes_and_values(results[column])
    values = [v if isinstance(v, str) else "" for v in values] + [""]
    return np.where(codes < 0, len(values) - 1, codes).astype(np.int64), values


def _families(codes: np.ndarray, values: list[str]) -> tuple[np.ndarray, list[str]]:
    """Compute dtypes as the group key has them: each dtype's peak family (`fp8_e4m3` and
    `fp8_e5m2` are fp8: one tensor-core rate), "" still last."""
    family = [DTYPES[v][2] if v in DTYPES else v for v in values[:-1]]
    named = list(dict.fromkeys(family))
    at = np.array([named.index(f) for f in family] + [len(named)], dtype=np.int64)
    return at[codes], [*named, ""]


def row_keys(results: pd.DataFrame) -> tuple[np.ndarray, pd.DataFrame]:
    """Each row's group (codes into the frame returned: one row per distinct key, KEYS'
    columns, `kind` as KINDS' names)."""
    kind = kind_codes(results).astype(np.int64)
    collective = kind >= 2
    parts = [_text(results, c) for c in ("hardware", "compute_dtype", "link")]
    parts[1] = _families(*parts[1])
    chips = (
        results["chips"].to_numpy(dtype=float, na_value=0.0)
        if "chips" in results.columns
        else np.zeros(len(results))
    )
    dtype_codes = np.where(collective, len(parts[1][1]) - 1, parts[1][0])  # collectives: ""
    link_codes = np.where(collective, parts[2][0], len(parts[2][1]) - 1)  # the rest: ""
    chip_codes, chip_values = pd.factorize(np.where(collective, chips, 0).astype(np.int64))
    columns = (parts[0][0], kind, dtype_codes, chip_codes, link_codes)
    sizes = (len(parts[0][1]), len(KINDS), len(parts[1][1]), len(chip_values), len(parts[2][1]))
    code = np.zeros(len(results), dtype=np.int64)
    for column, size in zip(columns, sizes, strict=True):  # one mixed-radix code per row
        code = code * size + column
    inverse, unique = pd.factorize(code)
    digits = []
    for size in sizes[::-1]:
        unique, digit = np.divmod(unique, size)
        digits.append(digit)
    hw, kinds, dtypes, chip, link = digits[::-1]
    keys = pd.DataFrame(
        {
            "hardware": [parts[0][1][c] for c in hw],
            "kind": [KINDS[c] for c in kinds],
            "dtype": [parts[1][1][c] for c in dtypes],
            "chips": chip_values[chip].astype(np.int64),
            "link": [parts[2][1][c] for c in link],
        }
    )
    # two codes of one text (a missing value and ""): one key
    again = pd.MultiIndex.from_frame(keys).factorize()[0]
    first = np.unique(again, return_index=True)[1]  # codes 0, 1, ...: each one's first key
    return again[inverse], keys.iloc[first].reset_index(drop=True)


def wider(key: tuple) -> tuple:
    """The wider group of a group's key: every dtype (matmul, custom), any N (collectives)."""
    hardware, kind, dtype, chips, link = key
    return (hardware, kind, "", 0, link)


def group_name(key: tuple) -> str:
    """How calibrate's lines and a row's `calibration` name a group: "h100 matmul bf16",
    "h100 matmul (every dtype)", "h100 all_reduce nvlink 8", "h100 all_reduce nvlink (any N)"."""
    hardware, kind, dtype, chips, link = key
    if kind in KINDS[2:]:
        return f"{hardware} {kind} {link or 'link'} {chips if chips else '(any N)'}".strip()
    return f"{hardware} {kind} {dtype or '(every dtype)'}"


def resolve(keys: pd.DataFrame, groups: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """For each key (row_keys' frame): the position in `groups` of the used group that
    estimates it (-1: none) and, for a custom key without one, of the matmul group its rows
    borrow when they are a transformer step's (-1: none)."""
    used = groups["used"].to_numpy(dtype=bool)
    at = {
        tuple(k): i
        for i, k in enumerate(groups[list(KEYS)].itertuples(index=False, name=None))
        if used[i]
    }  # a few groups
    own, borrowed = np.full(len(keys), -1), np.full(len(keys), -1)
    for i, key in enumerate(keys[list(KEYS)].itertuples(index=False, name=None)):
        key = (str(key[0]), key[1], key[2], int(key[3]), key[4])
        own[i] = at.get(key, at.get(wider(key), -1))
        if own[i] < 0 and key[1] == KINDS[CUSTOM]:
            matmul = (key[0], KINDS[MATMUL], key[2], 0, "")
            borrowed[i] = at.get(matmul, at.get(wider(matmul), -1))
    return own, borrowed
