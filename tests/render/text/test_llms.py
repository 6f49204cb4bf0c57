"""`pipeline models` as text (pipeline/render/text/llms.py): the list and one model."""

from __future__ import annotations

from pipeline.catalogs.llms import load_models
from pipeline.render.text.llms import model_lines, model_list_lines


def test_the_list_has_a_line_per_model_with_dims_experts_params_and_kv_per_token():
    catalog = load_models()
    lines = model_list_lines(catalog)
    assert lines[0].split() == ["name", *"DFNKHLV", "E/k", "params", "KV/token", "bf16"]
    rows = {line.split()[0]: line.split()[1:] for line in lines[1:-1]}
    assert rows["llama3-8b"] == ["4096", "14336", "32", "8", "128", "32", "128256", "-",
                                 "8.03B", "131", "kB"]  # fmt: skip
    assert rows["qwen3-30b-a3b"][1] == "-" and rows["qwen3-30b-a3b"][7] == "128/8"
    assert lines[-1].startswith(f"model catalog version {catalog.version};")


def test_one_model_shows_its_fields_what_they_give_and_its_source():
    catalog = load_models()
    lines = model_lines(catalog, "Mixtral")  # an alias, in any case
    text = "\n".join(lines)
    assert lines[0].split() == ["name", "mixtral-8x7b"]
    assert "params (published)     46.7B" in text
    assert "params (counted)       46,702,792,704" in text
    assert "params per token       12,879,925,248" in text
    assert "weights at bf16        93.4 GB" in text
    assert "KV cache/token bf16    131 kB" in text
    assert "\nF " not in text  # blank fields are left out
    assert lines[lines.index("source") + 1].startswith("  config.json of mistralai/Mixtral")
