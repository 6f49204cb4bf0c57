"""Safe names from untrusted text (a file stem, a chip name): output folders, chart file names
and the report's HTML ids all come from `slug`, each with its own options."""

from __future__ import annotations

import re
import unicodedata


def slug(
    text: object,
    *,
    keep: str = "",
    ascii_fold: bool = False,
    one_dot: bool = False,
    strip: str = "-",
    limit: int | None = None,
) -> str:
    """`text` lower-cased with every run of characters other than a-z, 0-9 and `keep` made one
    '-', then `strip` taken off both ends; may be empty. `ascii_fold`: accents dropped first
    ('Ü' -> 'u'); `one_dot`: '..' becomes '.'; `limit`: at most that many characters."""
    text = str(text)
    if ascii_fold:
        text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    name = re.sub(f"[^a-z0-9{re.escape(keep)}]+", "-", text.lower())
    if one_dot:
        name = re.sub(r"\.{2,}", ".", name)
    name = name.strip(strip)
    if limit is not None:
        name = name[:limit].strip(strip)
    return name
