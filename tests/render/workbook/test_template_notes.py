"""The starter workbook's header notes (render/workbook/template_notes.py): one per input column, its
meaning, unit and default, in the run's language."""

from __future__ import annotations

from pipeline.i18n import use_lang
from pipeline.render.workbook.template_notes import dim_note, note, notes
from pipeline.scenarios.header import KNOWN


def test_every_known_column_has_a_note_with_its_unit_and_default():
    assert set(notes()) == set(KNOWN)
    assert note("dtype").splitlines() == [
        "dtype: " + notes()["dtype"][0], f"Unit: {notes()['dtype'][1]}", "Default: bf16"
    ]  # fmt: skip
    assert dim_note("B")[1:] == ("elements", "none")


def test_the_notes_speak_korean_when_asked():
    with use_lang("ko"):
        assert note("B").splitlines()[1].startswith("단위") or "단위" in note("B")
        assert notes()["name"][0] != "The scenario's label, unique in the sheet."
