"""The chip a trace ran on: its `deviceProperties` names (`NVIDIA H100 80GB HBM3`, `AMD Instinct
MI300X VF`) matched to the catalog's names and aliases (pipeline/catalogs/spellings.py) by the
longest run of their words that is one: `nvidia-h100-80gb-hbm3`, ..., `h100` -> h100."""

from __future__ import annotations

import re

from pipeline.catalogs.hardware import Catalog
from pipeline.errors import UnknownHardware, printable

OTHER_FORMS = {"pcie", "nvl"}  # words naming a variant the catalog's SXM/OAM parts are not


def chip_of(name: str, catalog: Catalog) -> str | None:
    """The catalog chip a device name is, or None: also None when the name's other words say
    it is another variant of that chip (`NVIDIA H100 PCIe`, `A100-SXM4-40GB` against an 80 GB
    catalog part), whose rates differ."""
    words = re.findall(r"[a-z0-9]+", name.lower())
    for size in range(len(words), 0, -1):
        for start in range(len(words) - size + 1):
            part = words[start : start + size]
            for spelled in ("-".join(part), "".join(part), " ".join(part)):
                if (chip := catalog.resolve(spelled)) is not None:
                    rest = words[:start] + words[start + size :]
                    return None if _another_variant(rest, catalog, chip) else chip
    return None


def _another_variant(words: list[str], catalog: Catalog, chip: str) -> bool:
    """Whether words beside a chip's name make it another part: a form factor the catalog's
    is not, or a memory size other than the catalog part's HBM capacity."""
    if OTHER_FORMS & set(words):
        return True
    capacity = catalog.chips.loc[chip, "hbm_capacity"]
    sizes = [int(w[:-2]) for w in words if re.fullmatch(r"\d+gb", w)]
    return bool(sizes) and capacity == capacity and round(capacity / 1e9) not in sizes


def trace_chip(devices: list[tuple[object, str]], used: set, catalog: Catalog) -> str:
    """The one chip of the devices the kernels ran on (all when their ids are not among
    `deviceProperties`' ids, as ROCm's are not); UnknownHardware otherwise."""
    mine = [name for did, name in devices if did in used] or [name for _, name in devices]
    names = sorted(set(mine))
    chips = {chip_of(name, catalog) for name in names}
    if len(chips) == 1 and None not in chips:
        return chips.pop()
    shown = ", ".join(repr(printable(n)) for n in names)
    if not names:
        why = "the trace names no device (no deviceProperties)"
    elif len(names) == 1:
        why = f"the trace's device {shown} is not a chip of the catalog"
    else:
        why = f"the trace's devices {shown} are not one chip of the catalog"
    raise UnknownHardware(f"{why}; give the chip with --hardware (hardware= in Python; "
                          "`pipeline hardware` lists them)")  # fmt: skip
