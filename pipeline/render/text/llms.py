"""The model catalog as terminal text (`pipeline models [NAME]`): the list, one model a line;
one model's every field, then what its dims give (model/params.py: parameters, bf16 weights,
KV cache per token) and its source."""

from __future__ import annotations

import textwrap
import unicodedata

import pandas as pd

from pipeline.errors import printable
from pipeline.i18n import _
from pipeline.model.params import kv_cache_bytes, param_counts
from pipeline.render import format as fmt
from pipeline.render.text.catalog import SOURCE_WIDTH

DIMS = ("D", "F", "N", "K", "H", "L", "V")
KEY_WIDTH = 22  # the field column: 'params (published)' and a space or two


def model_list_lines(models: pd.DataFrame, version: str) -> list[str]:
    """The catalog, one model a line: its dims, experts (E/k), published parameters and KV
    cache per token at bf16."""
    width = max([13, *(len(printable(n)) for n in models.index)])
    head = "  ".join(f"{c:>6}" for c in DIMS)
    lines = [f"{'name':<{width}}  {head}  {'E/k':>7}  {'params':>10}  {'KV/token bf16':>13}"]
    kv = kv_cache_bytes(models)
    for (name, row), per_token in zip(models.iterrows(), kv, strict=True):
        dims = "  ".join(f"{_whole(row[c]):>6}" for c in DIMS)
        experts = "-" if pd.isna(row["E"]) else f"{row['E']}/{row['k']}"
        params = _parameters(row["params"])
        lines.append(
            f"{printable(name):<{width}}  {dims}  {experts:>7}  {params:>10}  "
            f"{fmt.size(per_token):>13}"
        )
    lines.append(
        _(
            "model catalog version {version}; `pipeline models NAME` shows its source",
            version=version,
        )
    )
    return lines


def model_lines(name: str, row: pd.Series) -> list[str]:
    """Every field of one model that has a value, a line each, then its parameters counted
    from its dims (and per token, for MoE), its weights at bf16, its KV cache per token at
    bf16, and its source wrapped below."""
    frame = row.to_frame().T
    counted = param_counts(frame).iloc[0]
    lines = [f"{'name':<{KEY_WIDTH}} {printable(name)}"]
    for key, value in row.items():
        if key == "source" or fmt.missing(value) or value == "":
            continue
        shown = value.replace(";", ", ") if key == "aliases" else value
        if key == "params":
            key, shown = _("params (published)"), _parameters(value)
        lines.append(f"{_padded(key)} {printable(shown)}")
    lines.append(f"{_padded(_('params (counted)'))} {fmt.count(counted['params'])}")
    if not pd.isna(row["E"]):
        lines.append(f"{_padded(_('params per token'))} {fmt.count(counted['active_params'])}")
    weights = counted["params"] * 2
    lines.append(f"{_padded(_('weights at bf16'))} {fmt.size(weights)}")
    per_token = kv_cache_bytes(frame).iat[0]
    lines.append(f"{_padded(_('KV cache/token bf16'))} {fmt.size(per_token)} (2·L·K·H·2 bytes)")
    if row["source"]:
        lines.append(_("source"))
        lines += textwrap.wrap(
            printable(row["source"]),
            SOURCE_WIDTH,
            initial_indent="  ",
            subsequent_indent="  ",
            break_long_words=False,  # a URL stays whole, to copy
            break_on_hyphens=False,
        )
    return lines


def _parameters(value) -> str:
    """A parameter count as people say it (render.format.parameters): 6.74e9 -> '6.74B'."""
    return "-" if fmt.missing(value) else fmt.parameters(value)


def _padded(key: str) -> str:
    """A field's name padded to KEY_WIDTH terminal columns (a Hangul letter takes two)."""
    wide = sum(unicodedata.east_asian_width(c) in "WF" for c in key)
    return f"{key:<{KEY_WIDTH - wide}}"


def _whole(value) -> str:
    return "-" if pd.isna(value) else str(int(value))
