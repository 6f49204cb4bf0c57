"""catalogs/table_file.py: one reader for the hardware and the LLM catalogs' tables, each
catalog's errors and words its own."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from pipeline.catalogs.hardware_file import HARDWARE
from pipeline.catalogs.llms import MODELS
from pipeline.catalogs.table_file import file_text, read_file, read_given
from pipeline.errors import InvalidHardwareFile, InvalidModelFile


@pytest.mark.parametrize(("kind", "error"), [(HARDWARE, InvalidHardwareFile),
                                             (MODELS, InvalidModelFile)])  # fmt: skip
def test_either_catalogs_file_is_checked_alike_and_says_its_own_words(kind, error):
    path = Path("mine.csv")
    with pytest.raises(error, match=f"^mine.csv: the {kind.noun} is empty; it needs "):
        file_text(path, b" \n", kind)
    with pytest.raises(error, match=rf"^mine.csv:2: NUL byte at character 2; .*{kind.noun}"):
        file_text(path, b"name\na\x00\n", kind)
    with pytest.raises(error, match=f"^{kind.noun} mine.txt must end in .csv or .toml"):
        read_file(Path("mine.txt"), b"name\nx\n", kind)
    with pytest.raises(error, match=r"^mine.csv:3: 3 fields but the header has 2"):
        read_file(path, b"# a note\nname,D\nx,1,2\n", kind)


def test_models_cells_are_stripped_hardware_cells_kept_as_written():
    data = b"name,source\nx , a b \n"
    assert read_file(Path("m.csv"), data, MODELS)[0].to_dict("list") == {
        "name": ["x"], "source": ["a b"]
    }  # fmt: skip
    assert read_file(Path("h.csv"), data, HARDWARE)[0].to_dict("list") == {
        "name": ["x "], "source": [" a b "]
    }  # fmt: skip


def test_read_given_takes_a_frame_or_a_path_and_refuses_anything_else(tmp_path):
    path, (cells, lines), data, file = read_given(pd.DataFrame({"name": ["x"]}), 2, MODELS)
    assert (str(path), cells["name"].tolist(), lines, file) == ("<model rows 2>", ["x"], [2], None)
    assert data == b"name\nx\n"  # what the catalog's version hashes
    written = tmp_path / "h.toml"
    written.write_bytes(b"[mine]\npeak_bf16 = 1\n")
    path, (cells, lines), data, file = read_given(str(written), 1, HARDWARE)
    assert (cells["name"].tolist(), lines, file) == (["mine"], [1], written.resolve())
    assert data == written.read_bytes()
    with pytest.raises(TypeError, match="^hardware= takes a CSV or TOML path.*; got "):
        read_given(3, 1, HARDWARE)
