"""The data of a model chart: the total rows of a transformer step swept over B or S, a line
per chip (and per value of its other swept axes), what does not fit, and where fitting stops."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.render.charts.step_sweep_data import (
    MODEL_CHARTS,
    model_cap_notice,
    model_frame,
    model_series,
    model_sweep_data,
)
from tests.helpers import ROOT, analyze_file, analyze_rows

SWEEP = "llama3_8b_decode_sweep"


def step(name: str, **row) -> dict:
    return {"name": name, "op": "transformer", "model": "llama3-8b", "hardware": "h100",
            "dtype": "bf16", "B": "16", "T": "1", "S": "4096", **row}  # fmt: skip


@pytest.fixture(scope="module")
def models():
    return analyze_file(ROOT / "scenarios" / "models.csv")


def test_the_data_is_the_results_total_rows(models):
    frame = model_frame(models)
    assert model_series(frame) == [SWEEP]  # the steps that are not swept are left out
    data = model_sweep_data(frame, SWEEP)
    r = models.results
    totals = r[(r["series"] == SWEEP) & (r["op"] == "transformer")]
    (line,) = data.lines
    assert data.dim == "B" and line.label == "h100"
    np.testing.assert_array_equal(line.x, totals["B"].to_numpy(dtype=float))
    np.testing.assert_array_equal(line.tokens_per_second, totals["tokens_per_second"].to_numpy())
    np.testing.assert_array_equal(line.t_lower, totals["t_lower"].to_numpy())
    np.testing.assert_array_equal(line.fits, totals["fits"].to_numpy(dtype=bool))
    assert line.bound == tuple(totals["bound"].astype(str))
    assert data.title == "llama3-8b decode on h100: tokens/s and step time vs B"
    assert data.subtitle == f"{SWEEP}: B = 1 – 512, T = 1, S = 8,192, bf16"


def test_fitting_stops_at_max_batch_along_b(models):
    (line,) = model_sweep_data(model_frame(models), SWEEP).lines
    assert line.limit == 59 and line.limit_label == "fits up to B = 59"
    assert line.fits.tolist() == [True] * 6 + [False] * 4  # B = 64 and up do not fit
    assert line.x[line.last_fit] == 32


def test_a_line_per_chip_and_a_chip_that_fits_at_no_batch():
    a = analyze_rows([step("fl", hardware="h100|v5e", B="1..64*4")])
    data = model_sweep_data(model_frame(a), "fl")
    h100, v5e = data.lines
    assert (h100.label, v5e.label) == ("h100", "tpu-v5e")
    assert h100.limit == 119 and h100.fits.all()
    assert np.isnan(v5e.limit) and v5e.limit_label == "fits at no batch" and v5e.last_fit == -1
    assert data.title == "llama3-8b decode on h100, tpu-v5e: tokens/s and step time vs B"


def test_a_sweep_over_s_and_over_b_and_s():
    a = analyze_rows([step("ss", S="1024..131072*2"), step("bs", B="1..64*4", S="1024|8192")])
    frame = model_frame(a)
    s = model_sweep_data(frame, "ss")
    (line,) = s.lines
    assert s.dim == "S" and line.limit == 16384
    assert line.limit_label == "B = 16 fits up to S = 16,384"
    b = model_sweep_data(frame, "bs")  # drawn against B, a line per S
    assert b.dim == "B" and [ln.label for ln in b.lines] == ["h100, S = 1,024", "h100, S = 8,192"]
    assert [ln.limit for ln in b.lines] == [475, 59]


def test_no_model_rows_no_frame_and_the_cap(book):
    assert model_series(model_frame(book)) == []
    rows = [step(f"s{k}", B="1|2") for k in range(MODEL_CHARTS + 1)]
    frame = model_frame(analyze_rows(rows))
    assert len(model_series(frame)) == MODEL_CHARTS + 1
    assert model_cap_notice(frame).startswith("Drew model charts of the first 20 of 21 ")
    assert model_cap_notice(model_frame(book)) is None
