"""One message catalog for every user-visible string (DESIGN.md §14, docs/languages.md).

The English text is the key, as in gettext: code writes `_("Findings")` or, with values,
`_("The first {shown} of {total} series", shown=..., total=...)` (never an f-string: the
catalog could not hold it), templates `{{ _("Findings") }}`. Each language other than
English has its texts in `pipeline/data/i18n/<lang>/*.toml`, one file per area (the report,
the workbook, the charts, the terminal, the terms), read once; a text with none falls back to
English, and `tests/test_i18n.py` fails on any such text. We chose a plain data file over
gettext (Babel): the English texts stay in the code, readable where they are used, with no
.po/.mo compile step in the build, and TOML is read by the standard library.

The language is process-wide: `use_lang("ko")` around a write (the chart workers forked
during it inherit it), else `PIPELINE_LANG`, else English."""

from __future__ import annotations

import functools
import os
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources

LANGS = ("en", "ko")
NAMES = {"en": "English", "ko": "한국어"}  # what the languages call themselves
_lang: str | None = None  # use_lang's, while it lasts


def check_lang(lang: object) -> str:
    """`lang` as a language code of LANGS; ValueError naming them otherwise."""
    text = str(lang).strip().lower() if isinstance(lang, str) else lang
    if text not in LANGS:
        raise ValueError(f"unknown language {lang!r}: one of {', '.join(LANGS)}")
    return text


def current_lang() -> str:
    """The language texts are in now: use_lang's, else PIPELINE_LANG's, else English."""
    if _lang is not None:
        return _lang
    return check_lang(os.environ.get("PIPELINE_LANG") or "en")


def set_lang(lang: str | None) -> None:
    """Texts in `lang` from now on, in this process (the command line's --lang); None: as
    PIPELINE_LANG says."""
    global _lang
    _lang = None if lang is None else check_lang(lang)


@contextmanager
def use_lang(lang: str | None) -> Iterator[str]:
    """Texts in `lang` (None: as they are) while the block runs."""
    global _lang
    before = _lang
    _lang = before if lang is None else check_lang(lang)
    try:
        yield current_lang()
    finally:
        _lang = before


@functools.cache
def catalog(lang: str) -> dict[str, str]:
    """The texts of `lang`, English text -> its own, from every file of its folder."""
    if lang == "en":
        return {}
    folder = resources.files("pipeline") / "data" / "i18n" / lang
    texts: dict[str, str] = {}
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            texts.update(tomllib.loads(entry.read_text(encoding="utf-8")))
    return texts


def _(text: str, /, **values) -> str:
    """`text` in the current language, its {fields} filled from `values`."""
    lang = current_lang()
    out = text if lang == "en" else catalog(lang).get(text, text)
    return out.format(**values) if values else out


def html_lang() -> str:
    """The report's <html lang>."""
    return current_lang()
