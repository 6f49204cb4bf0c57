"""The charts' fonts (DESIGN.md §14): English charts draw in matplotlib's own DejaVu Sans,
as always; Korean charts add NanumGothic behind it, so Latin text and numbers look the same
and Hangul falls back to it glyph by glyph (matplotlib >= 3.6).

NanumGothic comes from the koreanize-matplotlib package, a dependency: a fresh machine draws
the same glyphs, never a system font. That package is never imported (importing it changes
matplotlib's global rcParams, and it needs distutils, gone in Python 3.12): its font files
are found by its import spec and added to matplotlib's font manager, once, when a Korean
chart is first drawn."""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

from pipeline.i18n import current_lang

LATIN_FONT = "DejaVu Sans"  # matplotlib's default font, the one English charts use
HANGUL_FONT = "NanumGothic"
HANGUL_PACKAGE = "koreanize_matplotlib"


@functools.cache
def hangul_font_files() -> tuple[Path, ...]:
    """The NanumGothic TTFs (regular, light, bold, extra bold) the font package ships."""
    spec = importlib.util.find_spec(HANGUL_PACKAGE)  # finds it without running it
    folders = list(spec.submodule_search_locations or []) if spec else []
    files = tuple(sorted(p for f in folders for p in (Path(f) / "fonts").glob("NanumGothic*.ttf")))
    if not files:
        raise RuntimeError(
            f"no {HANGUL_FONT} font files: Korean charts need the koreanize-matplotlib "
            "package (pip install koreanize-matplotlib)"
        )
    return files


@functools.cache
def register_hangul_font() -> None:
    """Add NanumGothic to matplotlib's font manager (once a process)."""
    from matplotlib import font_manager

    for path in hangul_font_files():
        font_manager.fontManager.addfont(str(path))


def chart_rc(lang: str | None = None) -> dict:
    """The rcParams a chart in `lang` (None: the current language) is built and drawn with:
    none for English (its PNGs stay as they were), the Hangul fallback otherwise."""
    if (lang or current_lang()) == "en":
        return {}
    register_hangul_font()
    return {"font.family": [LATIN_FONT, HANGUL_FONT]}


@functools.cache
def font_glyphs(lang: str) -> frozenset[int]:
    """Code points the charts' fonts in `lang` can draw."""
    from matplotlib import font_manager, ft2font

    names = [LATIN_FONT] if lang == "en" else [LATIN_FONT, HANGUL_FONT]
    if lang != "en":
        register_hangul_font()
    glyphs: set[int] = set()
    for name in names:
        path = font_manager.findfont(name, fallback_to_default=False)
        glyphs.update(ft2font.FT2Font(path).get_charmap())
    return frozenset(glyphs)
