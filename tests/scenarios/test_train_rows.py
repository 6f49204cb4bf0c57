"""scenarios/train_rows.py: a train row's parallelism, tokens, remat, optimizer and
microbatches, each problem said with its column and what would be valid."""

from __future__ import annotations

import pandas as pd

import pipeline
from pipeline.scenarios.train_rows import parse_degrees

ROW = {"name": "t", "op": "train", "model": "llama2-13b", "hardware": "tpu-v5p", "chips": 4096,
       "tokens": 3e6}  # fmt: skip


def reasons(**row) -> list[tuple[str, str]]:
    a = pipeline.analyze(pd.DataFrame([{**ROW, **row}]))
    return [(p.column, p.reason) for p in a.problem_list]


def test_degrees_are_read_with_spaces_semicolons_or_commas_between():
    assert parse_degrees("fsdp=1024 tp=4") == {"fsdp": 1024, "tp": 4}
    assert parse_degrees("dp=2; fsdp=512 ;tp=4") == {"dp": 2, "fsdp": 512, "tp": 4}
    assert "did you mean 'fsdp'" in parse_degrees("fsd=4")
    assert "twice" in parse_degrees("tp=2 tp=4")
    assert "whole number" in parse_degrees("tp=two")


def test_degrees_that_do_not_multiply_to_the_chips_are_refused_with_the_product():
    ((column, reason),) = reasons(parallel="fsdp=1024 tp=8")
    assert column == "parallel"
    assert "'fsdp=1024 tp=8' multiplies to 8192 chips but chips = 4096" in reason


def test_a_blank_parallel_is_fsdp_over_every_chip_and_said_so():
    r = pipeline.analyze([ROW]).results.iloc[0]
    assert r["parallel"] == "fsdp=4096" and r["remat"] == "save-matmuls"
    assert r["optimizer"] == "adam"


def test_the_train_rows_own_words_are_checked():
    assert reasons(remat="full") == [
        ("remat", "unknown remat 'full'; use none, block, save-matmuls")
    ]
    assert reasons(optimizer="lion")[0][0] == "optimizer"
    assert reasons(tokens="")[0] == (
        "tokens",
        "a train row needs tokens, the global batch in tokens a step (e.g. 4e6)",
    )
    ((column, reason),) = reasons(parallel="fsdp=512 pp=8")
    assert column == "microbatches" and "pp=8 needs microbatches" in reason
    assert reasons(shard="D")[0][0] == "shard"
    assert reasons(remat="Save_Matmuls") == []


def test_a_train_row_in_a_file_reports_its_line_and_column(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("name,op,model,hardware,chips,tokens,parallel\n"
                    "a,train,llama2-13b,tpu-v5p,4096,3e6,fsdp=1024 tp=4\n"
                    "b,train,llama2-13b,tpu-v5p,4096,3e6,fsdp=1024 tp=2\n")  # fmt: skip
    a = pipeline.analyze(path)
    (p,) = a.problem_list
    assert (p.line, p.column) == (3, "parallel") and "multiplies to 2048" in p.reason


def test_expert_parallelism_needs_an_moe_model():
    ((column, reason),) = reasons(parallel="fsdp=1024 ep=4")
    assert column == "parallel" and "ep (expert parallelism) splits an MoE model" in reason
    assert reasons(model="mixtral-8x7b", parallel="fsdp=1024 ep=4") == []
