"""Charts: the prepared data against the book, and the PNGs (exist, valid, deterministic, named
safely, capped)."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from pipeline.plots import (
    BOUND_COLORS,
    ChartSet,
    network_data,
    plan_charts,
    plot_roofline,
    plot_sweep,
    render_charts,
    roofline_data,
    safe_stem,
    summary_data,
    sweep_data,
    swept_dims,
)
from pipeline.roofline import compute_roofline
from pipeline.scenarios import load_scenarios

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
BOOK_FILES = {
    "summary.png",
    "roofline-h100.png",
    "roofline-tpu-v5e.png",
    "roofline-tpu-v6e.png",
    "network-tpu-v5e.png",
    "sweep-tpu-v5e-b.png",
}


def chip(run, name: str) -> dict:
    return next(h for h in run.hardware if h["name"] == name)


def assert_png(path: Path, min_size=(800, 400)) -> None:
    assert path.read_bytes()[:8] == PNG_MAGIC
    with Image.open(path) as im:
        assert im.size[0] >= min_size[0] and im.size[1] >= min_size[1], im.size


@pytest.fixture(scope="module")
def book_charts(book_run, tmp_path_factory) -> tuple[ChartSet, Path]:
    out = tmp_path_factory.mktemp("book") / "plots"
    return render_charts(book_run.results, book_run.hardware, out, workers=1), out


# -- the PNGs ------------------------------------------------------------------------------


def test_book_run_writes_one_chart_of_each_kind(book_charts):
    charts, out = book_charts
    assert {p.name for p in out.iterdir()} == BOOK_FILES
    assert [c.kind for c in charts.charts] == [
        "summary", "roofline", "roofline", "roofline", "network", "sweep",
    ]  # fmt: skip
    assert charts.left_out == 0 and charts.notices == []
    for c in charts.charts:
        assert c.path.startswith("plots/")
        assert_png(out / Path(c.path).name)
        assert 0 < charts.seconds[c.path] < 5
    sweep = charts.charts[-1]
    assert (sweep.hardware, sweep.series) == ("tpu-v5e", ("q3_D1024", "q3_D4096"))
    assert charts.charts[2].hardware == "tpu-v5e"


def test_charts_are_byte_identical_serial_and_parallel(book_run, book_charts, tmp_path):
    charts, out = book_charts
    again = render_charts(book_run.results, book_run.hardware, tmp_path / "plots", workers=2)
    assert [c.path for c in again.charts] == [c.path for c in charts.charts]
    for name in BOOK_FILES:
        assert (tmp_path / "plots" / name).read_bytes() == (out / name).read_bytes(), name


def test_hostile_hardware_names_give_safe_unique_file_names(book_run, tmp_path):
    v5e = chip(book_run, "tpu-v5e")
    rows = book_run.results[
        (book_run.results["hardware"] == "tpu-v5e") & (book_run.results["chips"] == 1)
    ].head(3)
    hostile = ["../../etc/passwd", "a/b", "a-b", r"$\alpha$ chip", "..", "CON\n"]
    results = pd.concat([rows.assign(hardware=h) for h in hostile], ignore_index=True)
    hardware = [{**v5e, "name": h} for h in hostile]
    out = tmp_path / "run" / "plots"
    charts = render_charts(results, hardware, out, workers=1)
    files = sorted(p.name for p in out.iterdir())
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == ["plots"]  # nothing escaped
    assert len(files) == len(set(files)) == len(hostile) + 1
    assert all(re.fullmatch(r"[a-z0-9][a-z0-9._-]*\.png", f) for f in files), files
    assert not any(".." in f for f in files)
    assert {c.path for c in charts.charts} == {f"plots/{f}" for f in files}
    assert "roofline-etc-passwd.png" in files and "roofline-a-b-2.png" in files
    for f in files:
        assert_png(out / f)


@pytest.mark.parametrize(
    "text, stem",
    [
        ("tpu-v5e", "tpu-v5e"),
        ("../../etc/passwd", "etc-passwd"),
        ("a/b\\c", "a-b-c"),
        ("..", "x"),
        ("", "x"),
        ("Ünïcode Chip", "unicode-chip"),
        ("a..b", "a.b"),
    ],
)
def test_safe_stem(text, stem):
    assert safe_stem(text) == stem


def test_cap_keeps_the_first_charts_and_says_what_it_left_out(book_run, tmp_path):
    out = tmp_path / "plots"
    charts = render_charts(book_run.results, book_run.hardware, out, max_charts=2, workers=1)
    assert [c.path for c in charts.charts] == ["plots/summary.png", "plots/roofline-h100.png"]
    assert sorted(p.name for p in out.iterdir()) == ["roofline-h100.png", "summary.png"]
    assert charts.left_out == 4
    assert charts.notices == [
        "Drew 2 of 6 charts (chart limit 2, --max-charts); left out 2 rooflines, 1 network "
        "roofline and 1 sweep chart (roofline-tpu-v5e.png, roofline-tpu-v6e.png, "
        "network-tpu-v5e.png, sweep-tpu-v5e-b.png)."
    ]


def test_cap_zero_draws_nothing_and_bad_arguments_are_refused(book_run, tmp_path):
    charts = render_charts(book_run.results, book_run.hardware, tmp_path / "p", max_charts=0)
    assert charts.charts == [] and charts.left_out == 6 and len(charts.notices) == 1
    assert list((tmp_path / "p").iterdir()) == []
    with pytest.raises(ValueError, match="max_charts"):
        render_charts(book_run.results, book_run.hardware, tmp_path / "p", max_charts=-1)
    with pytest.raises(ValueError, match="workers"):
        render_charts(book_run.results, book_run.hardware, tmp_path / "p", workers=0)


def test_plot_functions_return_the_path_and_repeat_exactly(book_run, tmp_path):
    v5e = chip(book_run, "tpu-v5e")
    data = roofline_data(book_run.results, v5e)
    a, b = tmp_path / "a.png", tmp_path / "b.png"
    assert plot_roofline(data, a) == a
    plot_roofline(data, b)
    assert a.read_bytes() == b.read_bytes()
    (sweep,) = sweep_data(book_run.results, v5e)
    assert plot_sweep(sweep, tmp_path / "s.png") == tmp_path / "s.png"
    assert_png(tmp_path / "s.png")


# -- the prepared data: roofs, ridges, points ----------------------------------------------


def test_v5e_roofline_data(book_run):
    data = roofline_data(book_run.results, chip(book_run, "tpu-v5e"))
    assert data["slopes"] == [{"bandwidth": 8.2e11, "label": "HBM 820 GB/s"}]
    assert [(c["family"], c["peak"], c["label"]) for c in data["ceilings"]] == [
        ("bf16", 1.97e14, "bf16 peak 197 TFLOP/s"),
        ("int8", 3.94e14, "int8 peak 394 TFLOP/s"),
    ]
    ridges = {r["family"]: r["x"] for r in data["ridges"]}
    assert ridges["bf16"] == pytest.approx(240.24, abs=0.01)  # book: 1.97e14 / 8.2e11 = 240
    assert ridges["int8"] == pytest.approx(480.49, abs=0.01)
    # Q3 sweeps: D=F=4096 compute-bound from B=137 (376 of 512 rows), D=F=1024 from B=227
    # (286); plus two_chip_D9216, q1 twice and q2. Memory: the rest of the sweeps (136 + 226),
    # v5e_critical_intensity, dot_product, q4. Network: two_chip_D8192.
    assert data["counts"] == {"compute": 666, "memory": 365, "network": 1}
    p = data["points"]
    assert [int((p["bound"] == k).sum()) for k in range(3)] == [666, 365, 1]
    assert len(p["x"]) == len(p["y"]) == 1032 and p["hidden"] == 0
    assert data["not_fitting"] == 0
    assert data["overridden"] == 1  # q1_int8_book_constants: the question's 8.1e11 B/s
    assert sorted(lb["text"] for lb in data["labels"]) == [
        "dot_product", "q1_int8_book_constants", "q1_int8_catalog", "q2_int8_weights_bf16",
        "q4_batched_int8", "two_chip_D8192", "two_chip_D9216", "v5e_critical_intensity",
    ]  # fmt: skip
    assert sorted(t["text"] for t in data["trails"]) == ["q3_D1024", "q3_D4096"]


def test_points_sit_on_or_under_the_roofs(book_run):
    data = roofline_data(book_run.results, chip(book_run, "tpu-v6e"))
    (ceiling,) = data["ceilings"]
    assert ceiling["peak"] == 9.2e14 and data["ridges"][0]["x"] == pytest.approx(575)
    p = data["points"]
    roof = np.minimum(ceiling["peak"], p["x"] * data["slopes"][0]["bandwidth"])
    assert np.all(p["y"] <= roof * (1 + 1e-12))


def test_h100_ridge_is_the_book_critical_intensity(book_run):
    data = roofline_data(book_run.results, chip(book_run, "h100"))
    assert data["ridges"][0]["x"] == pytest.approx(295.2, abs=0.1)  # 9.89e14 / 3.35e12
    assert data["counts"] == {"compute": 2, "memory": 0, "network": 0}
    assert network_data(book_run.results, chip(book_run, "h100")) is None


def test_network_roofline_shows_the_d_8755_boundary(book_run):
    data = network_data(book_run.results, chip(book_run, "tpu-v5e"))
    assert data["slopes"] == [{"bandwidth": 4.5e10, "label": "ICI 45 GB/s one-way"}]
    (ridge,) = data["ridges"]
    assert ridge["x"] == pytest.approx(4377.8, abs=0.1)  # book: D/2 > 1.97e14 / 4.5e10 = 4377
    p = data["points"]
    order = np.argsort(p["x"])
    assert p["x"][order] == pytest.approx([4096, 4608])  # D/2 for D = 8192 and 9216
    assert [int(b) for b in p["bound"][order]] == [2, 0]  # network-bound, then compute-bound
    assert data["counts"] == {"compute": 1, "memory": 0, "network": 1}


def test_q3_sweep_matches_the_book_figure(book_run):
    """Book Q3: both reach peak 1.97e14; D = F = 1024 needs almost twice the batch."""
    (data,) = sweep_data(book_run.results, chip(book_run, "tpu-v5e"))
    assert data["dim"] == "B" and data["log_x"] is False
    assert [c["peak"] for c in data["ceilings"]] == [1.97e14]
    lines = {ln["series"]: ln for ln in data["lines"]}
    assert set(lines) == {"q3_D1024", "q3_D4096"}
    for ln in lines.values():
        assert list(ln["x"]) == list(range(1, 513))
        assert ln["y"].max() == pytest.approx(1.97e14)
        assert np.all(np.diff(ln["y"]) >= -1e-9 * ln["y"].max())  # never falls as B grows
    big, small = lines["q3_D4096"]["critical"], lines["q3_D1024"]["critical"]
    assert (big, small) == (137, 227)
    assert 1.5 < small / big < 2.0  # "almost doubles the critical batch size"
    assert lines["q3_D4096"]["critical_y"] == pytest.approx(1.97e14)


def test_summary_data_counts_bounds_per_hardware(book_run):
    data = summary_data(book_run.results)
    assert data["hardware"] == ["h100", "tpu-v5e", "tpu-v6e"]
    assert data["counts"] == {
        "compute": [2, 666, 1],
        "memory": [0, 365, 0],
        "network": [0, 1, 0],
    }


def test_bound_colors_are_one_fixed_trio():
    assert set(BOUND_COLORS) == {"compute", "memory", "network"}
    assert len(set(BOUND_COLORS.values())) == 3


# -- sweeps over several dims, synthetic frames ---------------------------------------------


@pytest.mark.parametrize(
    "name, series, dims",
    [
        ("q3[B=128]", "q3", ("B",)),
        ("q3[B=128,D=4096]", "q3", ("B", "D")),
        ("a[x][B=1]", "a[x]", ("B",)),
        ("plain", "plain", ()),
        ("q3[b=1]", "q3", ()),
    ],
)
def test_swept_dims(name, series, dims):
    assert swept_dims(name, series) == dims


def test_two_dim_sweep_gives_one_line_per_other_value(catalog, tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("name,op,B,D,F,hardware\ngrid,matmul,1|2|4,128|256,64,v5e\n")
    results = compute_roofline(load_scenarios(path, catalog).frame)
    (data,) = sweep_data(
        results, {"name": "tpu-v5e", "peak_bf16": 1.97e14, "hbm_bandwidth": 8.2e11}
    )
    assert [ln["label"] for ln in data["lines"]] == ["grid (D=128)", "grid (D=256)"]
    assert all(list(ln["x"]) == [1, 2, 4] for ln in data["lines"])


def synthetic(n: int, seed: int = 0) -> pd.DataFrame:
    """A results-shaped frame of n single-chip rows on one chip, a tenth not fitting HBM."""
    rng = np.random.default_rng(seed)
    peak, bw = 1.97e14, 8.2e11
    intensity = 10 ** rng.uniform(-1, 5, n)
    attainable = np.minimum(peak, intensity * bw) * np.where(rng.random(n) < 0.05, 0.3, 1.0)
    bound = np.where(intensity * bw > peak, "compute", "memory")
    bound[attainable < np.minimum(peak, intensity * bw) * 0.5] = "network"
    names = [f"s{i}" for i in range(n)]
    return pd.DataFrame(
        {
            "name": names,
            "series": names,
            "hardware": "tpu-v5e",
            "chips": 1,
            "compute_dtype": "bf16",
            "flops_per_chip": intensity * 1e6,
            "network_bytes": 0.0,
            "peak_flops": peak,
            "hbm_bandwidth": bw,
            "intensity": intensity,
            "attainable_flops": attainable,
            "bound": bound,
            "fits": pd.array(rng.random(n) > 0.1, dtype="boolean"),
        }
    )


def test_many_points_render_as_density_quickly(tmp_path):
    results = synthetic(20_000)
    hw = [
        {"name": "tpu-v5e", "peak_bf16": 1.97e14, "hbm_bandwidth": 8.2e11, "hbm_capacity": 1.6e10}
    ]
    data = roofline_data(results, hw[0])
    assert data["labels"] == [] and data["trails"] == []
    assert sum(data["counts"].values()) == 20_000
    assert data["not_fitting"] == int((~results["fits"]).sum())
    charts = render_charts(results, hw, tmp_path / "plots", workers=1)
    assert [c.kind for c in charts.charts] == ["summary", "roofline"]
    assert charts.seconds["plots/roofline-tpu-v5e.png"] < 3.0
    assert_png(tmp_path / "plots" / "roofline-tpu-v5e.png")


def test_chip_missing_from_the_catalog_uses_the_rows_numbers(tmp_path):
    results = synthetic(50).assign(hardware="my-chip")
    data = roofline_data(results, {"name": "my-chip"})
    assert data["slopes"][0]["bandwidth"] == 8.2e11
    assert data["ceilings"][0]["peak"] == 1.97e14 and data["ceilings"][0]["source"] == "rows"
    charts = render_charts(results, [], tmp_path / "plots", workers=1)
    assert [Path(c.path).name for c in charts.charts] == ["summary.png", "roofline-my-chip.png"]


def test_empty_results_draw_nothing(book_run, tmp_path):
    charts = render_charts(book_run.results.head(0), [], tmp_path / "plots")
    assert charts.charts == [] and charts.left_out == 0


def test_more_than_ten_sweep_lines_continue_on_a_second_page(catalog, tmp_path):
    rows = "".join(f"s{i:02d},matmul,1|2|4,{128 * (i + 1)},128,v5e\n" for i in range(12))
    path = tmp_path / "s.csv"
    path.write_text("name,op,B,D,F,hardware\n" + rows)
    results = compute_roofline(load_scenarios(path, catalog).frame)
    specs = [s for s in plan_charts(results, []) if s.kind == "sweep"]
    assert [s.stem for s in specs] == ["sweep-tpu-v5e-b-1", "sweep-tpu-v5e-b-2"]
    assert [len(s.series) for s in specs] == [10, 2]
    assert specs[1].title == "tpu-v5e: attainable FLOP/s vs B (2 of 2)"
    assert [len(d["lines"]) for d in sweep_data(results, {"name": "tpu-v5e"})] == [10, 2]


def test_parallel_rendering_from_a_thread_matches_serial(book_run, book_charts, tmp_path):
    """With other threads running, workers are spawned rather than forked; same bytes."""
    charts, out = book_charts
    results = book_run.results[book_run.results["hardware"] != "tpu-v5e"]
    with ThreadPoolExecutor(max_workers=1) as pool:
        job = pool.submit(render_charts, results, book_run.hardware, tmp_path / "plots", workers=2)
        again = job.result()
    assert [Path(c.path).name for c in again.charts] == [
        "summary.png", "roofline-h100.png", "roofline-tpu-v6e.png",
    ]  # fmt: skip
    for name in ("roofline-h100.png", "roofline-tpu-v6e.png"):
        assert (tmp_path / "plots" / name).read_bytes() == (out / name).read_bytes()
