"""Safe names from untrusted text: the one slug rule, and the three names made with it (output
folders, chart file names, the report's chip ids), each kept as it was."""

from __future__ import annotations

import random
import re
import unicodedata

import pytest

from pipeline.names import folder_name, slug
from pipeline.render.charts.plan import safe_stem
from pipeline.render.report.page import _anchor


@pytest.mark.parametrize(
    ("text", "options", "name"),
    [
        ("TPU v5e", {}, "tpu-v5e"),
        ("a..b/c_d", {}, "a-b-c-d"),  # only a-z and 0-9 by default
        ("a..b/c_d", {"keep": "._-"}, "a..b-c_d"),
        ("a..b", {"keep": ".", "one_dot": True}, "a.b"),
        ("-.a.-", {"keep": ".-"}, ".a."),  # strip: '-' by default
        ("-.a.-", {"keep": ".-", "strip": "-."}, "a"),
        ("Ünïcode", {}, "n-code"),
        ("Ünïcode", {"ascii_fold": True}, "unicode"),
        ("abcdef-gh", {"limit": 7}, "abcdef"),  # cut, then stripped again
        ("", {}, ""),
        ("$$$", {}, ""),
        (42, {}, "42"),
    ],
)
def test_slug_options(text, options, name):
    assert slug(text, **options) == name


@pytest.mark.parametrize(
    ("text", "folder", "stem", "anchor"),
    [
        ("q1-q5", "q1-q5", "q1-q5", "hw-1-q1-q5"),
        ("../../etc/passwd", "etc-passwd", "etc-passwd", "hw-1-etc-passwd"),
        ("..", "run", "x", "hw-1"),
        ("", "run", "x", "hw-1"),
        ("Ünïcode Chip", "ünïcode-chip", "unicode-chip", "hw-1-n-code-chip"),  # any script
        ("a..b_c", "a..b_c", "a.b_c", "hw-1-a-b-c"),
        ("_x_", "_x_", "x", "hw-1-x"),
        ("CON\n", "_con", "con", "hw-1-con"),  # a folder never takes a name Windows reserves
    ],
)
def test_each_caller_keeps_its_own_rule(text, folder, stem, anchor):
    """Output folders, chart files and HTML ids differ (accents, dots, underscores, the empty
    name); a folder keeps the letters of any script (names.folder_name, issue 39)."""
    assert folder_name(text) == folder
    assert safe_stem(text) == stem
    assert _anchor(0, text) == anchor


def test_names_from_any_text_are_safe():
    rng = random.Random(17)
    alphabet = "aZ09._- /\\\u00dc\u00e9\u0130\n\t$\u0000\ufb01"
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 70)))
        folder = folder_name(text)
        assert folder == folder.casefold(), folder
        assert all(c in "._-" or unicodedata.category(c)[0] in "LMN" for c in folder), folder
        assert folder not in {".", ".."} and not folder.startswith(".")
        stem = safe_stem(text)
        assert re.fullmatch(r"[a-z0-9]([a-z0-9._-]{0,58}[a-z0-9])?", stem), stem
        assert ".." not in stem
        assert re.fullmatch(r"hw-1(-[a-z0-9]+)*", _anchor(0, text))
