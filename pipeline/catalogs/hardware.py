"""The hardware catalog: a data file shipped in the package (pipeline/data/hardware.csv), extended
or overridden by the user's CSV or TOML files or DataFrames (docs/model.md#the-hardware-catalog)."""

from __future__ import annotations

import difflib
import functools
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from pipeline.catalogs.checks import user_chip_warnings
from pipeline.catalogs.hardware_file import HARDWARE, clash_problems, control_problems
from pipeline.catalogs.spellings import alias_map, spelling, split_aliases, union_aliases
from pipeline.catalogs.table_file import read_file, read_given
from pipeline.errors import BrokenInstall, InvalidHardwareFile, printable, quoted
from pipeline.model.dtypes import PEAK_FAMILIES
from pipeline.textfile import read_bytes

# ici: TPU inter-chip interconnect; nvlink: NVIDIA's; xgmi: AMD Infinity Fabric between GPUs;
# roce: Intel Gaudi's on-chip RoCE Ethernet ports used for scale-up; pcie: to the host;
# dcn: the data-center network between hosts (docs/model.md#the-hardware-catalog)
LINKS = ("ici", "nvlink", "xgmi", "roce", "pcie", "dcn")
TOPOLOGIES = ("ring", "switch")
PEAK_COLUMNS = tuple(f"peak_{f}" for f in PEAK_FAMILIES)
# a link's reach: the largest group of chips it connects (blank: no limit known)
LINK_FIELDS = ("bandwidth", "topology", "latency", "reach")
LINK_COLUMNS = tuple(f"{link}_{field}" for link in LINKS for field in LINK_FIELDS)
# fractions of a nominal rate a chip's kernels reach (0 < e <= 1, blank: 1), docs/model.md
EFFICIENCY_COLUMNS = ("compute_efficiency", "hbm_efficiency", "network_efficiency")
# the efficiency each catalog rate is timed at (docs/model.md#efficiency)
RATE_EFFICIENCY = {
    **{c: "compute_efficiency" for c in PEAK_COLUMNS},
    "hbm_bandwidth": "hbm_efficiency",
    **{f"{link}_bandwidth": "network_efficiency" for link in LINKS},
}
EFFICIENCY_RANGE = (
    "an efficiency is the fraction of the nominal rate reached, 0 < e <= 1 (e.g. 0.9)"
)
NUMERIC_COLUMNS = (
    *PEAK_COLUMNS,
    "hbm_capacity",
    "hbm_bandwidth",
    "tdp",
    *(f"{link}_{f}" for link in LINKS for f in ("bandwidth", "latency", "reach")),
    *EFFICIENCY_COLUMNS,
)
TEXT_COLUMNS = (
    "aliases",
    "vendor",
    "architecture",
    "default_link",
    *(f"{link}_topology" for link in LINKS),
    "source",
    "as_of",
)
COLUMNS = (
    "name",
    "aliases",
    "vendor",
    "architecture",  # the chip's generation (hopper, cdna3, ...): which dtypes it has units for
    *PEAK_COLUMNS,
    "hbm_capacity",
    "hbm_bandwidth",
    # board power (W) of the form factor the entry is (SXM, OAM, ...), as its vendor prints
    # it; blank where none is printed (docs/model.md#the-hardware-catalog)
    "tdp",
    "default_link",
    *LINK_COLUMNS,
    *EFFICIENCY_COLUMNS,
    "source",
    "as_of",
)


class Named:
    """A catalog's lookups by name or alias, through its `aliases` (lower-case spelling ->
    canonical name): the hardware catalog's and the model catalog's."""

    def resolve(self, text: str) -> str | None:
        """The canonical name for a case-insensitive name or alias, or None."""
        return self.aliases.get(spelling(text))

    def suggest(self, text: str) -> str | None:
        """The closest known name or alias, for did-you-mean messages."""
        return did_you_mean(spelling(text), list(self.aliases))


@dataclass(frozen=True)
class Catalog(Named):
    """Chips by canonical name, the alias lookup and a version string for manifests."""

    chips: pd.DataFrame  # index: canonical name, columns: COLUMNS minus name
    aliases: dict[str, str]  # lower-case spelling -> canonical name
    version: str
    sources: tuple[str, ...]
    files: tuple[Path, ...] = ()  # the user hardware files read, resolved when read
    warnings: tuple[str, ...] = ()  # doubts about the user's numbers (catalogs/checks.py)

    def links_of(self, name: str) -> list[str]:
        """Links this chip has a bandwidth for."""
        row = self.chips.loc[name]
        return [link for link in LINKS if pd.notna(row[f"{link}_bandwidth"])]


Given = str | Path | pd.DataFrame | Catalog
Hardware = Given | Sequence[Given] | None  # `hardware=` of analyze(), catalog(), run_dask(), ...


def catalog_from(hardware: Hardware) -> Catalog:
    """The catalog `hardware=` asks for: a Catalog as it is, else the built-in one with each
    file, frame or catalog given (one, or a list) added; load_catalog() refuses an item it
    cannot read (a dict, bytes)."""
    if isinstance(hardware, Catalog):
        return hardware
    if hardware is None:
        return load_catalog()
    return load_catalog(list(hardware) if isinstance(hardware, list | tuple) else [hardware])


def did_you_mean(text: str, choices: list[str]) -> str | None:
    """The closest choice to `text`, or None when nothing is close."""
    found = difflib.get_close_matches(text, choices, n=1, cutoff=0.6)
    return found[0] if found else None


def builtin_catalog_path() -> Path:
    """Path of the catalog file shipped in the package."""
    return Path(str(resources.files("pipeline") / "data" / "hardware.csv"))


def load_catalog(user_files: Sequence[Given] = ()) -> Catalog:
    """The built-in catalog, with each user file (CSV or TOML, as --hardware), DataFrame (the
    catalog's columns) or Catalog adding or overriding chips, in order."""
    base_path = builtin_catalog_path()
    base_bytes, base = _builtin()
    base = base.copy()
    digest = hashlib.sha256(base_bytes)
    sources, files, warnings = [str(base_path)], [], []
    for number, given in enumerate(user_files, start=1):
        if isinstance(given, Catalog):  # its chips are whole: they override every field
            label = f"<catalog {number}>"
            digest.update(given.version.encode())
            where = {str(n): label for n in given.chips.index}
            base = _merge(base, given.chips, where, Path(label))
            sources.extend(given.sources[1:])
            files.extend(given.files)
            warnings.extend(given.warnings)
            continue
        path, (cells, lines), data, file = read_given(given, number, HARDWARE)
        digest.update(data)
        files.extend([file] if file else [])  # for Analysis.write(), which never writes over one
        known = alias_map(base.index, base["aliases"])
        user, where = _normalize(cells, path, lines, known, toml=path.suffix.lower() == ".toml")
        warnings += user_chip_warnings(user, base, where)  # the shipped catalog's: its tests
        base = _merge(base, user, where, path)
        sources.append(str(path))
    _check_complete(base, sources[-1] if len(sources) > 1 else str(base_path))
    return Catalog(
        chips=base,
        aliases=alias_map(base.index, base["aliases"]),
        version=f"{base['as_of'].max()}+{digest.hexdigest()[:10]}",
        sources=tuple(sources),
        files=tuple(files),
        warnings=tuple(warnings),
    )


@functools.cache
def _builtin() -> tuple[bytes, pd.DataFrame]:
    """The shipped catalog's bytes and chips, read once per process."""
    path = builtin_catalog_path()
    data = read_bytes(path, BrokenInstall, "hardware catalog")  # missing: never a traceback
    cells, lines = read_file(path, data, HARDWARE)
    return data, _normalize(cells, path, lines, {}, toml=False)[0]


def _normalize(
    frame: pd.DataFrame,
    path: Path,
    lines: list[int | None],
    known: dict[str, str],
    toml: bool,
) -> tuple[pd.DataFrame, dict[str, str]]:
    """Check columns and values; numbers become floats, blanks NaN. All problems at once.
    Returns the chips by name and where each is defined (FILE:LINE, or FILE [name] for a
    TOML table), for messages. `known`: the catalog's spellings so far, for chips given twice."""
    if frame.empty:
        raise InvalidHardwareFile(
            f"{printable(path)}: the hardware file defines no chip; give a CSV row per chip "
            "under a header with name and the fields to set, or a TOML table [name]"
        )
    problems: list[str] = []
    unknown = [c for c in frame.columns if c not in COLUMNS]
    for col in unknown:
        hint = did_you_mean(col, list(COLUMNS))
        problems.append(
            f"unknown column {quoted(col)}" + (f" (did you mean '{hint}'?)" if hint else "")
        )
    if "name" not in frame.columns:
        problems.append("missing column 'name'")
    if problems:
        raise InvalidHardwareFile(f"{printable(path)}: " + "; ".join(problems))
    out = frame.reindex(columns=list(COLUMNS)).astype(object).fillna("")
    out = out.astype(str).apply(lambda s: s.str.strip())
    written = list(out["name"])  # as the user wrote them, for messages
    out["name"] = out["name"].str.lower()

    def where(i: int) -> str:
        if not toml:
            return f"{printable(path)}:{lines[i]}"
        return f"{printable(path)} [{printable(out['name'].iat[i])}]"

    def at(i: int) -> str:  # a TOML table's line too, where it was found
        if toml and lines[i] is not None:
            return f"{printable(path)}:{lines[i]} [{printable(written[i])}]"
        return where(i)

    problems += control_problems(out, where)
    for i, name in enumerate(out["name"]):
        if not name:
            problems.append(f"{where(i)}: column name: empty chip name")
    for col in NUMERIC_COLUMNS:
        text = out[col]
        nums = pd.to_numeric(text.where(text != ""), errors="coerce")
        bad = (text != "") & ~((nums > 0) & np.isfinite(nums))
        # a number written out (1e400, 1 and 400 zeros) that float64 cannot hold, unlike inf
        huge = (nums == np.inf) & ~text.str.lower().str.lstrip("+").isin(("inf", "infinity"))
        for i in np.flatnonzero(bad.to_numpy()):
            reason = (
                "is too large: past float64's range (about 1.8e308)"
                if huge.iat[i]
                else "is not a positive number (SI units)"
            )
            problems.append(f"{where(i)}: column {col}: {quoted(text.iat[i])} {reason}")
        out[col] = nums.astype(float)
    for col in EFFICIENCY_COLUMNS:
        for i in np.flatnonzero((out[col] > 1).to_numpy()):
            problems.append(
                f"{where(i)}: column {col}: {out[col].iat[i]:g} is above 1; {EFFICIENCY_RANGE}"
            )
    for link in LINKS:
        col = f"{link}_topology"
        bad = ~out[col].str.lower().isin(("", *TOPOLOGIES))
        for i in np.flatnonzero(bad.to_numpy()):
            problems.append(
                f"{where(i)}: column {col}: {quoted(out[col].iat[i])} must be ring or switch"
            )
        out[col] = out[col].str.lower()
    out["default_link"] = out["default_link"].str.lower()
    bad = ~out["default_link"].isin(("", *LINKS))
    for i in np.flatnonzero(bad.to_numpy()):
        problems.append(
            f"{where(i)}: column default_link: {quoted(out['default_link'].iat[i])} is not one of "
            + ", ".join(LINKS)
        )
    aliases = [split_aliases(a) for a in out["aliases"]]
    problems += clash_problems(written, aliases, known, at)
    if problems:
        raise InvalidHardwareFile("invalid hardware file:\n  " + "\n  ".join(problems))
    places = {name: where(i) for i, name in enumerate(out["name"])}
    return out.set_index("name"), places


def _merge(
    base: pd.DataFrame, user: pd.DataFrame, where: dict[str, str], path: Path
) -> pd.DataFrame:
    """User rows override non-empty fields of known chips (by name or alias) and add new chips.
    An alias already taken by another chip is an error at the user's line that gave it.
    The rows are merged as dicts and the table built once: growing it a row at a time copies
    it each time (4,000 chips took over a minute)."""
    aliases = alias_map(base.index, base["aliases"])
    known = set(base.index)
    changed: dict[str, dict] = {}  # chip -> its fields after this file, in the order met
    for name, fields in zip(user.index, user.to_dict("records"), strict=True):
        target = aliases.get(str(name), str(name))
        given = {k: v for k, v in fields.items() if not (pd.isna(v) or v == "")}
        for alias in split_aliases(given.get("aliases", "")):
            owner = aliases.get(alias)
            if owner is not None and owner != target:
                raise InvalidHardwareFile(
                    f"{where[str(name)]}: column aliases: alias {quoted(alias)} of chip "
                    f"{quoted(target)} is already a name or alias of chip {quoted(owner)}; "
                    "choose another alias"
                )
            aliases[alias] = target
        aliases[target] = target
        if target in changed or target in known:
            row = changed.get(target) or base.loc[target].to_dict()
            if "aliases" in given:  # a user's aliases add to the catalog's, never drop one
                given["aliases"] = union_aliases(row["aliases"], given["aliases"])
            if "source" not in given:
                given["source"] = f"{row['source']}; overridden by {path}"
            changed[target] = {**row, **given}
        else:
            changed[target] = {"source": str(path), **given}
    if not changed:
        return base.copy()
    rows = pd.DataFrame.from_dict(changed, orient="index", columns=base.columns, dtype=object)
    kept = base.drop(index=[t for t in changed if t in known]).astype(object)
    order = [*base.index, *(t for t in changed if t not in known)]  # new chips last, in order
    merged = pd.concat([kept, rows]).reindex(order)
    merged.index.name = base.index.name
    for col in NUMERIC_COLUMNS:
        merged[col] = merged[col].astype(float)
    for col in TEXT_COLUMNS:
        merged[col] = merged[col].fillna("").astype(str)
    return merged


def _check_complete(chips: pd.DataFrame, origin: str) -> None:
    """Every chip has an HBM bandwidth, a peak, its default link's bandwidth and a topology
    for each link bandwidth; the problems in the catalog's order, checked a column at a time."""
    link = chips["default_link"]
    unlinked = pd.Series(False, index=chips.index)
    for lk in LINKS:
        unlinked |= (link == lk) & chips[f"{lk}_bandwidth"].isna()
    untyped = {
        lk: chips[f"{lk}_bandwidth"].notna() & (chips[f"{lk}_topology"] == "") for lk in LINKS
    }
    no_hbm = chips["hbm_bandwidth"].isna()
    no_peak = chips[list(PEAK_COLUMNS)].isna().all(axis=1)
    bad = no_hbm | no_peak | unlinked
    for flags in untyped.values():
        bad |= flags
    problems = []
    for i in np.flatnonzero(bad.to_numpy()):
        name = chips.index[i]
        if no_hbm.iat[i]:
            problems.append(f"chip '{name}': hbm_bandwidth is required")
        if no_peak.iat[i]:
            problems.append(f"chip '{name}': needs at least one peak_<dtype> (e.g. peak_bf16)")
        if unlinked.iat[i]:
            lk = link.iat[i]
            problems.append(f"chip '{name}': default_link '{lk}' has no {lk}_bandwidth")
        for lk in LINKS:
            if untyped[lk].iat[i]:
                problems.append(
                    f"chip '{name}': {lk}_bandwidth needs {lk}_topology (ring or switch)"
                )
    if problems:
        raise InvalidHardwareFile(
            f"hardware catalog incomplete ({origin}):\n  " + "\n  ".join(problems)
        )


def catalog_records(catalog: Catalog, names: list[str] | None = None) -> list[dict]:
    """Catalog rows as plain dicts (for `pipeline hardware`, the workbook and the report)."""
    chips = catalog.chips if names is None else catalog.chips.loc[names]
    records = []
    for name, row in chips.iterrows():
        rec = {"name": name}
        rec.update(
            {k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in row.items()}
        )
        records.append(rec)
    return records


def catalog_frame(catalog: Catalog) -> pd.DataFrame:
    """The catalog as a DataFrame, one row per chip (index: name), every field with `source`
    and `as_of`; SI units (FLOP/s, bytes, bytes/s, seconds)."""
    frame = catalog.chips.copy()
    frame.index.name = "name"
    return frame
