"""run/summary_file.py: summary.json, one schema for both engines: the Summary's counts in
full, the per-series tables listed up to LISTED with their totals, plain JSON values."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pandas as pd

import pipeline
from pipeline.run import summary_file
from pipeline.run.summary_file import _plain, summary_document, write_summary
from tests.helpers import serving_frames, write_scenarios


def test_the_book_run_in_json(book, tmp_path):
    path = write_summary(tmp_path, book)
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc == summary_document(book)  # what is written reads back the same
    assert doc["schema"] == summary_file.SCHEMA
    assert (doc["scenarios"], doc["source_rows"], doc["rejected_rows"]) == (1035, 13, 0)
    assert doc["bounds"] == {"compute": 669, "memory": 365, "network": 1}
    assert doc["per_hardware"]["tpu-v5e"] == {"compute": 666, "memory": 365, "network": 1,
                                              "not_fitting": 0, "total": 1032}  # fmt: skip
    assert doc["overrides"]["tpu-v5e"] == 1
    assert doc["series_total"] == len(doc["series"]) == 13
    q3 = next(s for s in doc["series"] if s["series"] == "q3_D4096")
    assert (q3["scenarios"], q3["change_at"]) == (512, 137)
    assert doc["slowest"][0]["name"] == "q2_int8_weights_bf16"  # the report's Slowest list
    assert [r["name"] for r in doc["slowest"]] == list(book.summary.findings["slowest"]["name"])
    assert doc["findings"]["comm_total"] == 366
    assert doc["bottom_line"]["series"] == 13
    assert doc["fleet_series_total"] == 0 and doc["fleet"] == []  # no fleet series


def test_the_fleet_answer_is_listed_by_series_up_to_the_cap(tmp_path, monkeypatch):
    monkeypatch.setattr(summary_file, "LISTED", 1)
    text = "name,op,hardware,dtype,B,D,F\n" + "".join(
        f"f{k},matmul,h100|b200,bf16|fp8,1..64*4,8192,8192\n" for k in range(3)
    )
    analysis = pipeline.analyze(write_scenarios(tmp_path, text))
    doc = summary_document(analysis)
    assert doc["fleet_series_total"] == 3
    assert {r["series"] for r in doc["fleet"]} == {"f0"}
    fleet = analysis.summary.fleet
    # first and last (B = 64, the swept B nearest its critical batch too) x 4 fleet points
    assert len(doc["fleet"]) == (fleet["series"] == "f0").sum() == 2 * 4
    first = doc["fleet"][0]
    assert (first["point"], first["at"], first["rank"], first["ratio"]) == ("first", "B=1", 1, 1)


def test_long_tables_are_listed_up_to_the_cap_with_their_totals(tmp_path, monkeypatch):
    monkeypatch.setattr(summary_file, "LISTED", 2)
    text = "name,op,hardware,B,D,F\n" + "".join(f"s{k},matmul,h100,{k + 1},8192,8192\n"
                                                 for k in range(5))  # fmt: skip
    analysis = pipeline.analyze(write_scenarios(tmp_path, text))
    doc = summary_document(analysis)
    assert doc["series_total"] == 5 and [s["series"] for s in doc["series"]] == ["s0", "s1"]
    assert doc["critical_batches_total"] == 5 and len(doc["critical_batches"]) == 2


def test_values_are_plain_json():
    assert _plain(np.int64(3)) == 3 and isinstance(_plain(np.int64(3)), int)
    assert _plain(2.0) == 2 and _plain(2.5) == 2.5 and _plain(np.bool_(True)) is True
    assert _plain(math.nan) is None and _plain(pd.NA) is None and _plain(None) is None
    assert _plain({"a": np.float64(1.5)}) == {"a": 1.5} and _plain("x") == "x"
    assert _plain(1e300) == 1e300  # a whole float past 2**53 stays a float


def test_the_serving_answer_per_series_ranked_the_first_the_best(book, tmp_path, monkeypatch):
    serving, curves = serving_frames(prices={"h100": 2.0, "h200": 3.0, "b200": 6.0, "mi300x": 2.0})
    record = dataclasses.replace(
        book,
        summary=dataclasses.replace(book.summary._summary, serving=serving, serving_curves=curves),
    )
    doc = json.loads(write_summary(tmp_path, record).read_text(encoding="utf-8"))
    assert doc["serving_series_total"] == 2
    assert list(doc["serving"]) == ["llama3-70b", "mixtral-8x7b"]
    llama = doc["serving"]["llama3-70b"]
    assert len(llama) == (serving["series"] == "llama3-70b").sum() == 16
    best = llama[0]
    assert (best["rank"], best["config"], best["meets_target"], best["miss"]) == (
        1, "b200 fp8 ×4", True, ""
    )  # fmt: skip
    first = serving.iloc[0]
    assert best["B"] == int(first["B"]) and best["tpot"] == float(first["tpot"])
    assert best["cost_rank"] == 6 and best["energy_rank"] == 1
    assert [r["rank"] for r in llama[-2:]] == [None, None]  # the misses last, unranked
    assert [r["miss"] for r in llama[-2:]] == ["ttft", "ttft"]
    monkeypatch.setattr(summary_file, "LISTED", 1)
    assert list(summary_document(record)["serving"]) == ["llama3-70b"]
    assert summary_document(book)["serving"] == {}  # a run without serve rows
    assert summary_document(book)["serving_series_total"] == 0


def test_the_training_answer_per_series_the_fewest_days_first(training, book, tmp_path):
    doc = json.loads(write_summary(tmp_path, training).read_text(encoding="utf-8"))
    assert doc["training_series_total"] == 2
    assert list(doc["training"]) == ["fsdp", "tp"]
    fsdp = doc["training"]["fsdp"]
    assert len(fsdp) == 6
    best = fsdp[0]
    assert (best["rank"], best["config"], best["fits"], best["miss"]) == (
        1, "h100 bf16 ×4096 fsdp=4096", True, ""
    )  # fmt: skip
    # the book's LLaMA-3 70B on 15 T tokens at 45 % MFU on 4096 H100: about 40 days
    assert 38 < best["days"] < 42 and abs(best["mfu"] - 0.45) < 1e-9
    assert [r["rank"] for r in fsdp[-2:]] == [None, None]  # those not fitting last, unranked
    assert [r["miss"] for r in fsdp[-2:]] == ["memory", "memory"]
    assert summary_document(book)["training"] == {}  # a run without train rows
    assert summary_document(book)["training_series_total"] == 0
