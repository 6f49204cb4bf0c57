"""render/text/training.py: the training answer in one sentence per train series, from
Summary.training alone (the fastest configuration that fits, its days at its MFU and bound;
ties; how many fit; the tokens a chip it lacks; the cheapest; none fitting: the nearest), and
the Training table's records."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.i18n import use_lang
from pipeline.render.text.training import training_sentences, training_tables
from pipeline.summary.training import TRAINING_COLUMNS


def line(config, days, *, rank=1, series="llama", mfu=0.45, bound="compute", fits=True,
         compute_bound=True, tokens=4e6, chips=4096, train_tokens=15e12, cost=None,
         cost_rank=None, basis="floor", strategy="fsdp"):  # fmt: skip
    hardware = config.split()[0]
    row = {
        "series": series, "rank": rank if fits else pd.NA, "config": config,
        "name": f"{series}[{hardware}]", "model": "llama3-70b", "hardware": hardware,
        "dtype": "bf16", "chips": chips, "parallel": config.split()[-1], "scheme": "fsdp",
        "tokens": tokens, "train_tokens": train_tokens,
        "step_time": days * 86400 * tokens / train_tokens if train_tokens == train_tokens
        else 1.5, "time_basis": basis, "t_lower": 1.0, "days": days, "mfu": mfu,
        "bound": bound, "collective": "all_gather", "comm_strategy": strategy,
        "critical_tokens_per_chip": 1110.45, "compute_bound_batch": compute_bound,
        "memory_footprint": 41.2e9 if fits else 165e9, "hbm_capacity": 80e9, "fits": fits,
        "miss": "" if fits else "memory",
    }  # fmt: skip
    if cost is not None:
        row.update({"usd_per_chip_hour": 2.0, "train_cost": cost, "cost_rank": cost_rank})
    return row


def table(rows) -> pd.DataFrame:
    t = pd.DataFrame(rows)
    t["rank"] = t["rank"].astype("Int64")
    t["compute_bound_batch"] = t["compute_bound_batch"].astype("boolean")
    if "cost_rank" in t.columns:
        t["cost_rank"] = t["cost_rank"].astype("Int64")
    assert list(t.columns[: len(TRAINING_COLUMNS)]) == list(TRAINING_COLUMNS)
    return t


def test_the_issue_s_sentence():
    said = training_sentences(table([line("h100 bf16 ×4096 fsdp=1024 tp=4", 39.6)]))
    assert said == [
        "llama3-70b on 15.0T tokens (llama): h100 bf16 ×4096 fsdp=1024 tp=4, 39.6 days at "
        "45.0% MFU, compute-bound."
    ]


def test_a_comms_bound_best_says_its_strategy_and_the_tokens_a_chip_it_lacks():
    said = training_sentences(table([
        line("h100 bf16 ×4096 fsdp=4096", 45.8, mfu=0.396, bound="network", compute_bound=False),
        line("b200 bf16 ×1024 fsdp=1024", 70.9, rank=2),
        line("b200 bf16 ×256 fsdp=256", 300.0, fits=False),
    ]))[0]  # fmt: skip
    assert "45.8 days at 39.6% MFU, network-bound (FSDP AllGather)" in said
    assert "compute-bound from 1,110 tokens a chip, it has 977" in said  # 4 M / 4096
    assert said.endswith("; 2 of 3 configurations fit in HBM.")


def test_a_tie_is_named_with_the_best():
    said = training_sentences(table([line("h100 bf16 ×8 fsdp=8", 9.0),
                                     line("b200 bf16 ×8 fsdp=8", 9.0)]))[0]  # fmt: skip
    assert "(tied with b200 bf16 ×8 fsdp=8)" in said


def test_none_fitting_says_the_nearest_and_what_it_needs():
    said = training_sentences(table([line("h100 bf16 ×256 fsdp=256", 600.0, fits=False)]))[0]
    assert said.endswith(": no configuration fits in HBM; the nearest, h100 bf16 ×256 "
                         "fsdp=256, needs 165 GB a chip of 80.0 GB.")  # fmt: skip


def test_without_train_tokens_the_step_time():
    said = training_sentences(table([line("h100 bf16 ×8 fsdp=8", np.nan, train_tokens=np.nan)]))
    assert said == ["llama3-70b, 4.00M tokens a step (llama): h100 bf16 ×8 fsdp=8, 1.50 s a "
                    "step at 45.0% MFU, compute-bound."]  # fmt: skip


def test_the_cheapest_beside_the_fastest_and_estimates_said():
    said = training_sentences(table([
        line("b200 bf16 ×4096 fsdp=4096", 17.7, cost=9.9e6, cost_rank=2, basis="estimate"),
        line("h100 bf16 ×4096 fsdp=4096", 40.3, rank=2, cost=8.1e6, cost_rank=1),
    ]))[0]  # fmt: skip
    assert "compute-bound (calibrated estimates)" in said
    assert said.endswith("; cheapest: h100 bf16 ×4096 fsdp=4096, $8.10M.")
    alone = training_sentences(table([line("b200 bf16 ×8 fsdp=8", 1.0, cost=5e3, cost_rank=1)]))
    assert alone[0].endswith("; also the cheapest, $5.00K.")


def test_one_sentence_per_series_in_order_and_tokens_said_when_the_series_sweeps_them():
    said = training_sentences(table([
        line("h100 bf16 ×8 fsdp=8", 9.0, series="b", tokens=8e6),
        line("h100 bf16 ×8 fsdp=8", 12.0, series="b", tokens=4e6, rank=2),
        line("h100 bf16 ×8 fsdp=8", 3.0, series="a"),
    ]))  # fmt: skip
    assert [s.split(")")[0][-1] for s in said] == ["b", "a"]
    assert "h100 bf16 ×8 fsdp=8, 8.00M tokens a step, 9.00 days" in said[0]
    assert training_sentences(pd.DataFrame(columns=TRAINING_COLUMNS)) == []


def test_the_table_records_numbers_beside_their_words():
    tables = training_tables(table([
        line("h100 bf16 ×4096 fsdp=4096", 40.3),
        line("h100 bf16 ×256 fsdp=256", 600.0, fits=False),
    ]), rows=1)  # fmt: skip
    (s,) = tables["series"]
    assert (s["series"], s["about"], s["more"], s["fitting"]) == (
        "llama", "llama3-70b, 15.0T tokens, 4.00M tokens a step", 1, 1
    )  # fmt: skip
    (r,) = s["rows"]
    assert (r["rank"], r["days"], r["days_text"], r["mfu_text"], r["fit_text"]) == (
        1, 40.3, "40.3", "45.0%", "yes"
    )  # fmt: skip
    assert r["per_chip_text"] == "977" and r["critical_text"] == "1,110"
    assert tables["cost"] is False and tables["more"] == 0


def test_in_korean():
    with use_lang("ko"):
        said = training_sentences(table([line("h100 bf16 ×4096 fsdp=4096", 40.3)]))[0]
    assert "llama3-70b" in said and "40.3" in said and "days" not in said
