"""The Serving table's records (render.text.serving_table): per serve series its lines in the
summary's order, numbers SI beside their words, the verdict naming each miss, cost columns
only when priced, the caps counted, Korean words."""

from __future__ import annotations

import pandas as pd
import pytest

from pipeline.i18n import use_lang
from pipeline.render.text.serving_table import (
    JOULES,
    USD,
    has,
    serving_tables,
    targets_text,
    usd,
    verdict,
)
from tests.helpers import serving_frames


@pytest.fixture(scope="module")
def serving():
    return serving_frames()[0]


def test_a_series_per_serve_series_its_lines_in_the_summary_order(serving):
    table = serving_tables(serving)
    assert [s["series"] for s in table["series"]] == ["llama3-70b", "mixtral-8x7b"]
    llama = table["series"][0]
    assert (llama["isl"], llama["osl"], llama["request"]) == (2048, 256, "2,048 in / 256 out")
    assert llama["targets"] == "TTFT ≤ 60.0 ms, TPOT ≤ 15.0 ms"
    assert llama["tpot_target"] == pytest.approx(0.015)
    ranks = [r["rank"] for r in llama["rows"]]
    assert ranks == [*range(1, 15), None, None]  # meeting by rank, then the misses
    assert llama["meeting"] == 14 and llama["more"] == 0
    first = llama["rows"][0]
    assert (first["config"], first["hardware"], first["dtype"], first["chips"], first["B"]) == (
        "b200 fp8 ×4", "b200", "fp8", 4, 512
    )  # fmt: skip
    # the book's decode bound: 70.6 GB of fp8 weights + 512 × 163,840 × 2,176 bytes of KV
    # cache over 4 × 8 TB/s
    tpot = (70.6e9 + 512 * 163_840 * 2176) / (4 * 8e12)
    assert first["tpot"] == pytest.approx(tpot, rel=1e-12)
    assert first["per_chip"] == pytest.approx(512 / (tpot * 4), rel=1e-12)
    assert (first["tpot_text"], first["per_chip_text"]) == ("7.91 ms", "16,181")
    assert first["ttft_text"] == "16.1 ms" and first["latency_text"] == "2.03 s"
    assert first["verdict"] == "yes" and first["meets"] is True and first["miss"] == []
    missed = llama["rows"][-1]
    assert missed["verdict"] == "no: TTFT over target" and missed["miss"] == ["ttft"]
    assert table["cost"] is False and "usd_text" not in first
    assert table["energy"] is False and "joule_text" not in first


@pytest.mark.parametrize(
    ("meets", "miss", "said"),
    [
        (True, "", "yes"),
        (False, "ttft, tpot, memory",
         "no: TTFT over target, TPOT over target, does not fit in HBM"),
        (pd.NA, "memory", "no: does not fit in HBM"),  # no target, and it does not fit
        (pd.NA, "", "no target"),
        (False, None, "no"),
    ],
)  # fmt: skip
def test_the_verdict_names_every_miss_in_order(meets, miss, said):
    assert verdict(meets, miss) == said


def test_the_verdict_and_targets_in_korean():
    with use_lang("ko"):
        assert verdict(False, "tpot, memory") == "아니요: TPOT 목표 초과, HBM에 맞지 않음"
        assert targets_text(0.2, float("nan")) == "TTFT ≤ 200 ms"


@pytest.mark.parametrize(
    ("value", "said"), [(0.0858, "$0.0858"), (1.234, "$1.23"), (1234.5, "$1,234"), (None, "—")]
)
def test_dollars_as_a_planner_reads_them(value, said):
    assert usd(value) == said


def test_cost_columns_only_when_priced():
    prices = {"h100": 2.5, "h200": 3.5, "b200": 5.0, "mi300x": 3.0}
    serving = serving_frames(prices=prices)[0]
    assert has(serving, USD) and has(serving, JOULES)
    table = serving_tables(serving)
    first = table["series"][0]["rows"][0]
    assert table["cost"] is True and table["energy"] is True
    # $5 an hour over 16,181 tokens/s per chip
    assert first["usd_per_million_tokens"] == pytest.approx(5 / 3600 / first["per_chip"] * 1e6)
    assert first["usd_text"] == "$0.0858" and first["joule_text"] == "16.2"
    assert (first["cost_rank"], first["energy_rank"]) == (3, 1)
    # tokens per joule without prices (the chips' TDP): energy alone
    unpriced = serving.drop(columns=[USD, "cost_rank"])
    assert not has(unpriced, USD) and not has(serving.assign(**{USD: float("nan")}), USD)
    table = serving_tables(unpriced)
    first = table["series"][0]["rows"][0]
    assert (table["cost"], table["energy"]) == (False, True)
    assert "usd_text" not in first and first["joule_text"] == "16.2"


def test_the_caps_count_what_they_leave_out(serving):
    table = serving_tables(serving, limit=1, rows=5)
    assert (table["total"], table["more"]) == (2, 1)
    (llama,) = table["series"]
    assert len(llama["rows"]) == 5 and llama["more"] == 11 and llama["meeting"] == 5


def test_no_serve_series_no_table(serving):
    assert serving_tables(serving.iloc[:0]) == {"series": [], "total": 0, "more": 0,
                                                "cost": False, "energy": False}  # fmt: skip
