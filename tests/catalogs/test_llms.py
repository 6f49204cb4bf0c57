"""The model catalog (pipeline/catalogs/llms.py): the shipped file, names and aliases,
user files and DataFrames that add or override models, and the rows they get refused."""

from __future__ import annotations

import re
import warnings

import pandas as pd
import pytest

import pipeline
from pipeline.catalogs.llms import COLUMNS, load_models, models, models_from
from pipeline.errors import InvalidModelFile, UnknownModel

SHIPPED = ("llama2-7b", "llama2-13b", "llama3-8b", "llama3-70b", "llama3.1-405b", "mistral-7b",
           "gemma2-27b", "qwen2.5-72b", "mixtral-8x7b", "qwen3-30b-a3b")  # fmt: skip


def _file(tmp_path, text: str, name: str = "mine.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_the_shipped_catalog_has_each_model_with_its_config_url_and_date():
    catalog = load_models()
    assert set(SHIPPED) <= set(catalog.models.index)
    assert list(catalog.models.columns) == list(COLUMNS[1:])
    for name, row in catalog.models.iterrows():
        assert re.search(r"https://huggingface\.co/\S+/config\.json", row["source"]), name
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", row["as_of"]), name
        assert row["params"] > 0
    assert catalog.problems == ()


def test_real_configs_not_d_over_n():
    m = load_models().models
    assert m.loc["qwen2.5-72b", ["D", "F", "N", "K", "H", "L", "V"]].tolist() == [
        8192, 29568, 64, 8, 128, 80, 152064]  # fmt: skip
    assert not m.loc["qwen2.5-72b", "tied"] and m.loc["qwen2.5-72b", "qkv_bias"]
    assert m.loc["gemma2-27b", "H"] == 128 and m.loc["gemma2-27b", "tied"]
    assert m.loc["qwen3-30b-a3b", ["E", "k", "F_expert", "K"]].tolist() == [128, 8, 768, 4]
    assert pd.isna(m.loc["mixtral-8x7b", "F"]) and m.loc["mixtral-8x7b", "F_expert"] == 14336


def test_names_and_aliases_resolve_in_any_case_and_unknown_ones_suggest():
    catalog = load_models()
    assert catalog.resolve(" Meta-Llama/Meta-Llama-3-8B ") == "llama3-8b"
    assert catalog.resolve("LLAMA3-405B") == "llama3.1-405b"
    assert catalog.model("mixtral")["E"] == 8
    with pytest.raises(UnknownModel, match=re.escape("unknown model 'llama3-8' (did you mean")):
        catalog.model("llama3-8")
    with pytest.raises(UnknownModel, match="see `pipeline models` for the list"):
        catalog.model("zzzz")


def test_a_bad_row_is_left_out_and_said_with_file_line_column_and_what_is_valid(tmp_path):
    path = _file(tmp_path, "name,D,F,N,K,H,L,V\n"
                 "tiny,512,2048,8,2,64,4,1000\n"
                 "neg,-512,2048,8,2,64,4,1000\n"
                 "frac,512,2048.5,8,2,64,4,1000\n"
                 "odd,512,2048,8,3,64,4,1000\n"
                 "llama3-8b,,,,3,,,\n"
                 "nohead,512,2048,8,2,,4,1000\n")  # fmt: skip
    catalog = load_models([path], strict=False)
    assert catalog.problems == (
        f"{path}:3: column D: '-512' is below 1; D (hidden size) is a whole number from 1 to "
        "2^53, e.g. 4096",
        f"{path}:4: column F: '2048.5' is not a whole number; F (dense MLP width) is a whole "
        "number from 1 to 2^53, e.g. 14336",
        f"{path}:5: column K: model 'odd': 3 does not divide N = 8; K (KV heads) divides N "
        "(query heads): one of 1, 2, 4, 8",
        f"{path}:6: column K: model 'llama3-8b': 3 does not divide N = 32; K (KV heads) "
        "divides N (query heads): one of 1, 2, 4, 8, 16, 32",
        f"{path}:7: column H: model 'nohead': missing; every model needs H (head dim, e.g. 128)",
    )
    m = catalog.models
    assert "tiny" in m.index and not {"neg", "frac", "odd", "nohead"} & set(m.index)
    assert m.loc["llama3-8b", "K"] == 8  # the refused override changed nothing
    assert set(SHIPPED) <= set(m.index)
    with pytest.raises(InvalidModelFile, match=r"^5 model row\(s\) refused:") as caught:
        load_models([path])
    assert len(caught.value.problems) == 5


def test_a_toml_file_adds_a_moe_model_and_overrides_a_field(tmp_path):
    path = _file(tmp_path, '[mymoe]\naliases = ["moe1"]\nD = 1024\nN = 16\nK = 4\nH = 64\n'
                 "L = 8\nV = 32000\nE = 16\nk = 2\nF_expert = 512\ntied = true\n\n"
                 "[Llama3-8B]\nV = 130000\n", "mine.toml")  # fmt: skip
    catalog = load_models([path])
    assert catalog.resolve("MOE1") == "mymoe"
    row = catalog.models.loc["mymoe"]
    assert (row["E"], row["k"], row["F_expert"], row["tied"]) == (16, 2, 512, True)
    assert row["source"] == str(path)
    assert catalog.models.loc["llama3-8b", "V"] == 130000
    assert catalog.models.loc["llama3-8b", "source"].endswith(f"; overridden by {path}")
    assert catalog.files == (path.resolve(),)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            "name,D,N,K,H,L,V,E,k,F_expert\nm,64,4,2,16,2,100,4,8,32\n",
            "column k: model 'm': 8 is more than E = 4; k (active experts per token) is at most E",
        ),
        (
            "name,D,N,K,H,L,V,E,F_expert\nm,64,4,2,16,2,100,4,32\n",
            "column k: model 'm': missing; an MoE model (E given) needs k",
        ),
        (
            "name,D,N,K,H,L,V\nm,64,4,2,16,2,100\n",
            "column F: model 'm': missing; a dense model needs F (dense MLP width, e.g. 14336)",
        ),
        (
            "name,D,F,N,K,H,L,V,k\nm,64,8,4,2,16,2,100,2\n",
            "column k: model 'm': k is for MoE models: give E",
        ),
        (
            "name,D,F,N,K,H,L,V,tied\nm,64,8,4,2,16,2,100,maybe\n",
            "column tied: 'maybe' is not true or false",
        ),
        ("name,D,F,N,K,H,L,V\nm,64,8,4,2,16,2,1e300\n", "column V: '1e300' is too large"),
        ("name,D,F,N,K,H,L,V\nm,64,8,four,2,16,2,100\n", "column N: 'four' is not a number"),
        (
            "name,D,F,N,K,H,L,V,params\nm,64,8,4,2,16,2,100,-3\n",
            "column params: '-3' is not a positive number",
        ),
        (
            "name,D,F,N,K,H,L,V\nm,64,8,4,2,16,2,100\nM,64,8,4,2,16,2,100\n",
            ":3: column name: model 'm' again (first at ",
        ),
        (
            "name,aliases,D,F,N,K,H,L,V\nm,mixtral,64,8,4,2,16,2,100\n",
            "column aliases: 'mixtral' is already model 'mixtral-8x7b'; choose another alias",
        ),
    ],
)
def test_each_wrong_value_is_refused_with_what_would_be_valid(tmp_path, text, problem):
    path = _file(tmp_path, text)
    catalog = load_models([path], strict=False)
    assert len(catalog.problems) == 1 and problem in catalog.problems[0], catalog.problems
    assert catalog.problems[0].startswith(f"{path}:")


def test_k_and_K_are_different_columns_and_other_names_match_in_any_case(tmp_path):
    path = _file(tmp_path, "NAME,d,f,n,K,h,l,v\nsmall,64,8,4,2,16,2,100\n")
    assert load_models([path]).models.loc["small", ["D", "K", "H"]].tolist() == [64, 2, 16]
    lower = _file(tmp_path, "name,D,F,N,k,H,L,V\nsmall,64,8,4,2,16,2,100\n", "lower.csv")
    problems = load_models([lower], strict=False).problems
    assert any("column K: model 'small': missing" in p for p in problems)


def test_a_file_that_cannot_be_trusted_is_an_error_naming_it(tmp_path):
    with pytest.raises(InvalidModelFile, match=r"unknown column 'heads'; the columns are name,"):
        load_models([_file(tmp_path, "name,heads\nm,4\n")])
    with pytest.raises(InvalidModelFile, match=r"unknown column 'F_exprt' \(did you mean "
                       "'F_expert'\\?\\)"):  # fmt: skip
        load_models([_file(tmp_path, "name,F_exprt\nm,4\n")])
    with pytest.raises(InvalidModelFile, match="missing column 'name'"):
        load_models([_file(tmp_path, "D,F\n1,2\n")])
    with pytest.raises(InvalidModelFile, match="must end in .csv or .toml"):
        load_models([_file(tmp_path, "name\n", "mine.txt")])
    with pytest.raises(InvalidModelFile, match="models file is empty"):
        load_models([_file(tmp_path, "")])
    with pytest.raises(InvalidModelFile):
        load_models([tmp_path / "absent.csv"])
    with pytest.raises(TypeError, match="models= takes"):
        load_models([{"name": "x"}])


def test_the_frame_round_trips_and_a_changed_copy_overrides():
    frame = pipeline.models()
    again = models(frame)
    pd.testing.assert_frame_equal(again, frame)
    changed = frame.loc[["llama3-8b"]].assign(L=40)
    assert models(changed).loc["llama3-8b", "L"] == 40
    catalog = load_models([changed])
    assert models_from(catalog) is catalog and models_from([catalog]).models.equals(catalog.models)


def test_pipeline_models_warns_and_keeps_the_rest(tmp_path):
    path = _file(tmp_path, "name,D,F,N,K,H,L,V\nok,64,8,4,2,16,2,100\nbad,64,8,4,3,16,2,100\n")
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        frame = pipeline.models(path)
    assert "ok" in frame.index and "bad" not in frame.index
    assert len(said) == 1 and "model rows left out" in str(said[0].message)
    assert frame.attrs["problems"][0].startswith(f"{path}:3: column K:")
    with pytest.raises(pipeline.InvalidModelFile):
        pipeline.models(path, strict=True)


def test_the_catalog_carries_what_each_models_dims_give():
    """Parameters counted (all, and per token for MoE), bf16 weights, KV cache per token at
    bf16 (2·L·K·H·2 bytes): what `pipeline models` shows, a row per model."""
    catalog = load_models()
    sizes = catalog.sizes()
    assert list(sizes.index) == list(catalog.models.index)
    dense, moe = sizes.loc["llama3-8b"], sizes.loc["mixtral-8x7b"]
    assert dense["params"] == dense["active_params"] == 8_030_261_248
    assert (moe["params"], moe["active_params"]) == (46_702_792_704, 12_879_925_248)
    assert moe["weight_bytes"] == 2 * 46_702_792_704
    assert dense["kv_token_bytes"] == 2 * 32 * 8 * 128 * 2  # 131 kB
