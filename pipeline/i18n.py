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
_lang: str | None = None  # use_lang's, while it lasts


SPELLINGS = "any case; a locale such as ko_KR.UTF-8 names its language"
ENGLISH_LOCALES = ("c", "posix")  # the POSIX locales, in English


def lang_code(lang: str) -> str | None:
    """The language code of LANGS `lang` names, or None: a code in any case (`KO`), or a
    POSIX locale (`ko_KR.UTF-8`, `ko-KR`, `C.UTF-8`): its language, before the territory,
    codeset and modifier."""
    text = lang.strip().lower().partition("@")[0].partition(".")[0]
    code = text.replace("-", "_").partition("_")[0]
    code = "en" if code in ENGLISH_LOCALES else code
    return code if code in LANGS else None


def check_lang(lang: object) -> str:
    """`lang` as a language code of LANGS (lang_code's spellings); ValueError naming them
    otherwise."""
    code = lang_code(lang) if isinstance(lang, str) else None
    if code is None:
        raise ValueError(f"unknown language {lang!r}: one of {', '.join(LANGS)} ({SPELLINGS})")
    return code


def environment_lang() -> str:
    """PIPELINE_LANG's language (English when it is unset or empty); ValueError naming the
    variable and the languages when it names none."""
    value = os.environ.get("PIPELINE_LANG") or "en"
    code = lang_code(value)
    if code is None:
        raise ValueError(
            f"PIPELINE_LANG is {value!r}, not a language of this tool: give "
            f"{' or '.join(LANGS)} ({SPELLINGS}), or unset it"
        )
    return code


def current_lang() -> str:
    """The language texts are in now: use_lang's, else PIPELINE_LANG's, else English."""
    if _lang is not None:
        return _lang
    return environment_lang()


def chosen_lang() -> str | None:
    """The language set_lang or use_lang chose, None when PIPELINE_LANG decides."""
    return _lang


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
