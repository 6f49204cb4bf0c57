"""The charts' fonts (render/charts/fonts.py): English in matplotlib's DejaVu Sans as ever,
Korean with NanumGothic behind it, from the koreanize-matplotlib package's files (never a
system font, never that package's import); a chart's untrusted Hangul kept in Korean."""

from __future__ import annotations

import os
import warnings

import matplotlib
from matplotlib.font_manager import FontProperties, findfont

import pipeline
from pipeline.i18n import use_lang
from pipeline.render.charts.fonts import (
    HANGUL_FONT,
    LATIN_FONT,
    chart_rc,
    font_glyphs,
    hangul_font_files,
)
from pipeline.render.charts.labels import MISSING_GLYPH, chart_text
from pipeline.render.charts.style import png_bytes
from tests.helpers import analyze_rows, assert_png


def test_hangul_comes_from_the_packaged_font_never_a_system_one():
    files = hangul_font_files()
    assert {f.name for f in files} >= {"NanumGothic.ttf", "NanumGothicBold.ttf"}
    assert all("site-packages" in str(f) or "dist-packages" in str(f) for f in files)
    rc = chart_rc("ko")
    assert rc["font.family"] == ["DejaVu Sans", HANGUL_FONT]
    found = findfont(FontProperties(family=HANGUL_FONT), fallback_to_default=False)
    assert any(os.path.samefile(found, f) for f in files), found


def test_a_hangul_name_is_drawn_in_korean_and_boxed_in_english():
    with use_lang("ko"):
        assert chart_text("행렬곱 B=8") == "행렬곱 B=8"
    with use_lang("en"):
        assert chart_text("행렬곱") == MISSING_GLYPH * 3
    a = analyze_rows([{"name": "행렬곱", "op": "matmul", "B": 8, "D": 1024, "F": 1024,
                       "hardware": "h100"}])  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no missing glyph
        fig = pipeline.charts.roofline(a, "h100", lang="ko")
        assert_png(png_bytes(fig))
    assert "행렬곱" in [t.get_text() for t in fig.axes[0].texts]


def test_english_touches_nothing_korean_adds_the_fallback_not_the_packages_rcparams():
    before = dict(matplotlib.rcParams)
    assert chart_rc("en") == {}
    assert chart_rc("ko") == {"font.family": [LATIN_FONT, HANGUL_FONT]}
    assert dict(matplotlib.rcParams) == before  # koreanize_matplotlib would set font.family
    assert ord("가") in font_glyphs("ko") and ord("가") not in font_glyphs("en")
    assert ord("µ") in font_glyphs("en")
