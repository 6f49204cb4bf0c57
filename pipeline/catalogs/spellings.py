"""How a chip is named: by its catalog name or any of its aliases, in any case, blanks around
it ignored; a catalog row keeps its aliases in one ';'-separated cell
(docs/model.md#the-hardware-catalog)."""

from __future__ import annotations

from collections.abc import Iterable


def spelling(text: str) -> str:
    """The form a chip name or alias is looked up by: ' TPU-v5e' -> 'tpu-v5e'."""
    return str(text).strip().lower()


def split_aliases(cell) -> list[str]:
    """An aliases cell as spellings, in order: 'v5e; TPU v5e' -> ['v5e', 'tpu v5e']."""
    return [a for a in (spelling(part) for part in str(cell or "").split(";")) if a]


def shown_aliases(cell) -> list[str]:
    """An aliases cell as written, for people: 'v5e; TPU v5e' -> ['v5e', 'TPU v5e']."""
    return [a for a in (part.strip() for part in str(cell or "").split(";")) if a]


def union_aliases(old: str, new: str) -> str:
    """Both alias cells as one, in order, each spelling once (case-insensitively)."""
    kept: dict[str, str] = {}
    for part in f"{old};{new}".split(";"):
        kept.setdefault(spelling(part), part.strip())
    return ";".join(text for low, text in kept.items() if low)


def alias_map(names: Iterable, aliases: Iterable) -> dict[str, str]:
    """Every spelling of each chip -> its name, from the chips' names and their aliases cells
    (a name before any alias; clashes were refused when the catalog was read)."""
    names, aliases = [str(n) for n in names], list(aliases)
    mapping = {spelling(name): name for name in names}
    for name, cell in zip(names, aliases, strict=True):
        for alias in split_aliases(cell):
            mapping.setdefault(alias, name)
    return mapping
