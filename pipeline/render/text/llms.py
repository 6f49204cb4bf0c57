"""The model catalog as terminal text (`pipeline models [NAME]`): the list, one model a line;
one model's every field, then what its dims give (ModelCatalog.sizes: parameters, bf16
weights, KV cache per token) and its source."""

from __future__ import annotations

import textwrap
import unicodedata

import pandas as pd

from pipeline.catalogs.llms import ModelCatalog
from pipeline.errors import printable
from pipeline.i18n import _
from pipeline.render import format as fmt
from pipeline.render.text.catalog import SOURCE_WIDTH

DIMS = ("D", "F", "N", "K", "H", "L", "V")
KEY_WIDTH = 22  # the field column: 'params (published)' and a space or two


def model_list_lines(catalog: ModelCatalog) -> list[str]:
    """The catalog, one model a line: its dims, experts (E/k), published parameters and KV
    cache per token at bf16."""
    models = catalog.models
    width = max([13, *(len(printable(n)) for n in models.index)])
    head = "  ".join(f"{c:>6}" for c in DIMS)
    lines = [f"{'name':<{width}}  {head}  {'E/k':>7}  {'params':>10}  {'KV/token bf16':>13}"]
    kv = catalog.sizes()["kv_token_bytes"]
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
            version=catalog.version,
        )
    )
    return lines


def model_lines(catalog: ModelCatalog, text: str) -> list[str]:
    """Every field of model `text` (a name or alias; UnknownModel if none) that has a value,
    a line each, then its parameters counted from its dims (and per token, for MoE), its
    weights at bf16, its KV cache per token at bf16, and its source wrapped below."""
    row = catalog.model(text)
    name = catalog.resolve(text)
    counted = catalog.sizes().loc[name]
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
    lines.append(f"{_padded(_('weights at bf16'))} {fmt.size(counted['weight_bytes'])}")
    per_token = fmt.size(counted["kv_token_bytes"])
    lines.append(f"{_padded(_('KV cache/token bf16'))} {per_token} (2·L·K·H·2 bytes)")
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
