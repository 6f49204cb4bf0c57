"""Chips side by side (`pipeline.chips`, `pipeline hardware --compare`): the chosen chips'
fields as rows, one column per chip, SI units, with each dtype's ridge point (book: "All About
Rooflines", the critical intensity peak FLOP/s / HBM bandwidth, in FLOP/byte) and the default
link's one-way bandwidth, latency and reach."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from pipeline.catalogs.hardware import Catalog, Hardware, catalog_from, did_you_mean, load_catalog
from pipeline.errors import UnknownHardware, described, quoted, text_list
from pipeline.model.dtypes import PEAK_FAMILIES, canonical_dtype, known_dtype_names, peak_family
from pipeline.model.roofs import ridge_point

TEXT_ROWS = ("vendor", "architecture")
LINK_ROWS = ("default_link", "link_bandwidth", "link_topology", "link_latency", "link_reach")


def chips(names: str | Iterable[str], hardware: Hardware = None) -> pd.DataFrame:
    """The chosen chips side by side: fields as rows (vendor, architecture, HBM, board power
    (tdp, W) when any of them has one, peak_<dtype> and ridge_<dtype> for every dtype any of
    them has, the default link), a column per chip (its catalog name, in the order given), SI
    units, NaN where a chip has no value.
    `hardware`: files, frames or a Catalog adding or overriding chips, as for analyze()."""
    catalog = catalog_from(hardware)
    return chip_table(catalog, resolve_chips(catalog, names))


def resolve_chips(catalog: Catalog, names: str | Iterable[str]) -> list[str]:
    """The catalog names of `names` (any alias, any case), in order, each once; one
    UnknownHardware naming every unknown one, with a did-you-mean where one is close."""
    given = text_list(names, "names must be chip names", "a chip name")
    if not given:
        raise ValueError("give at least one chip name, e.g. ['h100', 'tpu-v6e']")
    unknown = [name for name in given if catalog.resolve(name) is None]
    if unknown:
        raise UnknownHardware("; ".join(unknown_reason(catalog, name) for name in unknown))
    return list(dict.fromkeys(catalog.resolve(name) for name in given))


def unknown_reason(catalog: Catalog, name: str) -> str:
    """What is said of a chip name the catalog does not know (as a scenario row says it)."""
    hint = catalog.suggest(name)
    return f"unknown hardware {quoted(name)}" + (
        f" (did you mean '{hint}'?)" if hint else "; see `pipeline hardware` for the list"
    )


def chip_table(catalog: Catalog, names: list[str]) -> pd.DataFrame:
    """The side-by-side table of catalog chips `names` (canonical names): see chips()."""
    rows = catalog.chips.loc[names]
    peaks = [f for f in PEAK_FAMILIES if rows[f"peak_{f}"].notna().any()]
    bandwidth = rows["hbm_bandwidth"].to_numpy(dtype=float)
    link = rows["default_link"].to_numpy(dtype=object)
    fields: dict[str, np.ndarray] = {k: rows[k].to_numpy(dtype=object) for k in TEXT_ROWS}
    fields["hbm_capacity"] = rows["hbm_capacity"].to_numpy(dtype=float)
    fields["hbm_bandwidth"] = bandwidth
    if rows["tdp"].notna().any():  # board power (W), where a chosen chip's vendor prints one
        fields["tdp"] = rows["tdp"].to_numpy(dtype=float)
    for f in peaks:
        fields[f"peak_{f}"] = rows[f"peak_{f}"].to_numpy(dtype=float)
    for f in peaks:  # the book's critical intensity: where the HBM slope meets the peak
        fields[f"ridge_{f}"] = ridge_point(fields[f"peak_{f}"], bandwidth)
    fields["default_link"] = link
    for part in LINK_ROWS[1:]:
        fields[part] = _link_field(rows, link, part.removeprefix("link_"))
    fields["as_of"] = rows["as_of"].to_numpy(dtype=object)
    table = pd.DataFrame.from_dict(fields, orient="index", columns=names).astype(object)
    table.index.name, table.columns.name = "field", "chip"
    return table.where(table != "", np.nan)  # a blank text field is missing, as a number is


def _link_field(rows: pd.DataFrame, link: np.ndarray, part: str) -> np.ndarray:
    """Each chip's `<default link>_<part>` (NaN where it has no default link)."""
    out = np.full(len(rows), np.nan, dtype=object)
    for i, name in enumerate(link):  # a column lookup per chip: a handful of chips
        if name:
            out[i] = rows[f"{name}_{part}"].iat[i]
    return out


def peak_dtype(dtype: str) -> str:
    """The catalog peak family (bf16, fp8, ...) of a dtype spelling ('bfloat16', 'fp8_e4m3');
    ValueError naming the valid ones for any other."""
    if not isinstance(dtype, str):
        raise TypeError(f"dtype must be a dtype's name (str), not {described(dtype)}")
    canonical = canonical_dtype(dtype)
    if canonical is None:
        hint = did_you_mean(dtype.strip().lower(), known_dtype_names())
        raise ValueError(
            f"unknown dtype {quoted(dtype)}"
            + (f" (did you mean '{hint}'?)" if hint else f"; use one of {', '.join(PEAK_FAMILIES)}")
        )
    return peak_family(canonical)


def overridden_fields(catalog: Catalog, name: str) -> frozenset[str]:
    """The fields of chip `name` whose value a user's file changed from the shipped catalog's
    (none for a chip the shipped catalog lacks): their shipped sources no longer apply."""
    shipped = load_catalog().chips
    if name not in shipped.index:
        return frozenset()
    old, new = shipped.loc[name], catalog.chips.loc[name]
    same = (old == new) | (old.isna() & new.isna())
    return frozenset(str(f) for f in same.index[~same] if f not in ("aliases", "source"))
