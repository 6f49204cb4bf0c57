"""How a chip is named: a name or alias in any case, blanks ignored; aliases in one cell."""

from __future__ import annotations

from pipeline.catalogs.spellings import (
    alias_map,
    shown_aliases,
    spelling,
    split_aliases,
    union_aliases,
)


def test_a_spelling_ignores_case_and_surrounding_blanks():
    assert spelling(" TPU-v5e\t") == "tpu-v5e"


def test_an_aliases_cell_splits_on_semicolons_empty_parts_dropped():
    assert split_aliases("v5e; TPU v5e;;") == ["v5e", "tpu v5e"]
    assert split_aliases("") == split_aliases(None) == []
    assert shown_aliases("v5e; TPU v5e;") == ["v5e", "TPU v5e"]
    assert shown_aliases(None) == []


def test_union_keeps_the_order_and_each_spelling_once():
    assert union_aliases("a;B", "b; c") == "a;B;c"


def test_every_spelling_maps_to_its_chip_a_name_before_an_alias():
    found = alias_map(["h100", "V5e"], ["hopper;H100-SXM", "v5e;tpu-v5e"])
    assert found == {"h100": "h100", "v5e": "V5e", "hopper": "h100", "h100-sxm": "h100",
                     "tpu-v5e": "V5e"}  # fmt: skip
