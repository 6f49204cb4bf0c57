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


# names Windows refuses as a file or folder, with or without an extension (CON, con.txt)
RESERVED = frozenset(
    {"con", "prn", "aux", "nul"} | {f"{dev}{n}" for dev in ("com", "lpt") for n in range(10)}
)  # (COM¹ is com1 once NFKC-normalized)
FOLDER_BYTES = 250  # a folder name's most, in UTF-8 (file systems take 255 bytes a name)


def folder_name(text: object, *, limit: int = FOLDER_BYTES) -> str:
    """An output folder's name from untrusted text (a file stem) in any script, safe on every
    OS: one spelling (NFKC) in lower case (casefold); letters, marks and digits of any script
    kept with '.', '_' and '-'; every other run of characters (separators, path separators,
    controls, bidi and other format characters, symbols) one '-'; never a dot-file, '..',
    a name ending in '.', nor one Windows reserves ('CON' -> '_con'); at most `limit` bytes
    of UTF-8 (with the '_'), cut between characters. 'run' when nothing is left."""
    text = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", str(text)).casefold())
    kept = "".join(ch if _kept(ch) else "\0" for ch in text)
    name = fit_bytes(re.sub("\0+", "-", kept).strip("-."), limit - 1).rstrip("-.")
    if name.split(".")[0] in RESERVED:
        name = f"_{name}"
    return name or "run"


def fit_bytes(name: str, limit: int = FOLDER_BYTES) -> str:
    """`name` cut between characters to at most `limit` bytes of UTF-8."""
    name = name[:limit]  # a character is 1 byte or more
    while len(name.encode("utf-8")) > limit:
        name = name[:-1]
    return name


def _kept(ch: str) -> bool:
    """A character a folder name keeps: a letter, mark or digit of any script, '.', '_', '-'."""
    return (
        ch in "._-"
        or (ch.isascii() and ch.isalnum())
        or (not ch.isascii() and unicodedata.category(ch)[0] in "LMN")
    )
