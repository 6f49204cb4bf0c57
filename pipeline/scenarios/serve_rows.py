"""The checks of `serve` rows (docs/input.md#serving): requests of `isl` prompt tokens and `osl`
output tokens served by a model at batch B (blank: the tool finds it), with optional latency
targets and speculative decoding (`draft_tokens` k, `acceptance` a, `draft_model`). A serve row
is checked as a transformer step is for its model, dims, kv_dtype and shard
(scenarios.transformer_rows); here, what is a serve row's own. Each distinct cell is parsed
once; every column is filled with numpy."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Set as AbstractSet

import numpy as np

from pipeline.catalogs.llms import ModelCatalog, load_models
from pipeline.errors import quoted
from pipeline.model.serve import DRAFT_SHAPE
from pipeline.scenarios.coded import Col
from pipeline.scenarios.header import MEASURED_UNITS
from pipeline.scenarios.problems import Found, flag, flag_per_value
from pipeline.scenarios.sweeps import TOO_BIG, whole_number_reason
from pipeline.scenarios.transformer_rows import unknown_model

WHOLE = {"isl": "the prompt's tokens per request", "osl": "the output tokens per request",
         "draft_tokens": "the draft tokens k proposed per decode step"}  # fmt: skip
SECONDS = {"ttft_target": "the time to the first token", "tpot_target": "the time per output token"}
SERVE_INPUTS = (*WHOLE, *SECONDS, "acceptance", "draft_model")


def check_serve(
    serve: np.ndarray,
    col: Callable[[str], Col],
    names: AbstractSet[str],
    values: dict[str, np.ndarray],
    shard: Col,
    columns: dict[str, object],
    models: ModelCatalog | None = None,
) -> Found:
    """The problems of serve rows (`serve`), and the columns they add put in `columns` (in
    place): isl, osl, the targets, the speculation inputs and the draft model's shape (as
    `draft_<dim>`); B, T and S made columns of `values` (in place) where the file has none.
    The problems: isl or osl missing or not a whole number, a target not a positive number of
    seconds, speculation half given, an unknown draft model, a T or S (its steps' come from
    isl and osl), a `count`, a measured time or a group on a serve row, and a serve column
    given on a row of another op. `col(name)`: a column coded; `names`: the file's columns."""
    if not serve.any() and names.isdisjoint(SERVE_INPUTS):
        return []
    asked = (*SERVE_INPUTS, "T", "S", "count", "group", *MEASURED_UNITS)
    cells = {c: col(c) for c in asked if c in names}
    split_experts = serve & (shard.values() == "E")
    n = len(serve)
    found: Found = []
    out: dict[str, np.ndarray] = {}
    for d in ("B", "T", "S") if serve.any() else ():  # every partition has its steps' dims
        values.setdefault(d, np.full(n, np.nan))
    blank = {c: cells[c].is_("") if c in cells else np.ones(n, bool) for c in SERVE_INPUTS}
    for c, what in WHOLE.items():
        out[c], bad = _whole(cells.get(c), c, serve, f"{what}, a whole number (1 or more)")
        found += bad
    for c in ("isl", "osl"):
        found += flag(serve & blank[c], c, f"a serve row needs {c} ({WHOLE[c]}, e.g. 2048)")
    for c, what in SECONDS.items():
        out[c], bad = _positive(cells.get(c), c, serve, f"{what} in seconds, above 0 (e.g. 0.05)")
        found += bad
    out["acceptance"], bad = _positive(
        cells.get("acceptance"), "acceptance", serve,
        "the chance a draft token is accepted, 0 < a <= 1 (e.g. 0.7)",
    )  # fmt: skip
    found += bad + flag(
        serve & (out["acceptance"] > 1),
        "acceptance",
        lambda p: (
            f"{out['acceptance'][p]:g} is above 1; the chance a draft token is accepted "
            "is 0 < a <= 1 (e.g. 0.7)"
        ),
    )
    found += flag(serve & ~blank["draft_tokens"] & blank["acceptance"], "acceptance",
                  "draft_tokens k needs acceptance a, the chance a draft token is accepted "
                  "(0 < a <= 1, e.g. 0.7)")  # fmt: skip
    for c in ("acceptance", "draft_model"):
        found += flag(serve & ~blank[c] & blank["draft_tokens"], "draft_tokens",
                      f"{c} is read with draft_tokens k, the draft tokens a decode step "
                      "verifies (e.g. 4); give it, or leave speculative decoding out")  # fmt: skip
    drafted, shape, bad = _draft_models(serve & ~blank["draft_model"], cells, models)
    found += bad + flag(
        split_experts & ~blank["draft_model"] & np.isnan(shape.get("E", np.full(n, 0.0))),
        "draft_model",
        "a dense draft model has no experts to split over the chips (shard E): split the "
        "heads (shard N), or draft with an MoE model",
    )
    if (serve & ~blank["draft_tokens"]).any():
        out["draft_model"] = drafted
        out.update({f"draft_{d}": shape[d] for d in DRAFT_SHAPE} if shape else {})
    else:
        del out["draft_tokens"], out["acceptance"]
    for c in SECONDS:  # a column the model carries only where some row gives a target
        if not (serve & ~blank[c]).any():
            del out[c]
    if serve.any():
        columns.update(out)
    return found + _not_here(serve, cells)


def _whole(cells: Col | None, name: str, rows: np.ndarray, what: str):
    """A column of whole numbers from 1 to 2^53 (NaN blank or bad) and its problems in `rows`."""
    if cells is None:
        return np.full(len(rows), np.nan), []
    reasons = np.array([whole_number_reason(t) for t in cells.uniques], dtype=object)
    bad = np.array([r is not None for r in reasons], dtype=bool)
    numbers = np.array([float(t) if t and not b else np.nan
                        for t, b in zip(cells.uniques, bad, strict=True)])  # fmt: skip
    found = flag_per_value(
        rows & cells.per_row(bad),
        name,
        cells,
        lambda t: f"{quoted(t)} " + (TOO_BIG if whole_number_reason(t) == TOO_BIG else
                                     f"is not {what}"),
    )  # fmt: skip
    return np.where(rows, cells.per_row(numbers), np.nan), found


def _positive(cells: Col | None, name: str, rows: np.ndarray, what: str):
    """A column of positive finite numbers (NaN blank or bad) and its problems in `rows`."""
    if cells is None:
        return np.full(len(rows), np.nan), []

    def number(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            return np.nan
        return value if np.isfinite(value) and value > 0 else np.nan

    numbers = np.array([number(t) if t else np.nan for t in cells.uniques], dtype=float)
    bad = np.array([t != "" for t in cells.uniques], dtype=bool) & np.isnan(numbers)
    found = flag_per_value(rows & cells.per_row(bad), name, cells,
                           lambda t: f"{quoted(t)} is not {what}")  # fmt: skip
    return np.where(rows, cells.per_row(numbers), np.nan), found


def _draft_models(rows: np.ndarray, cells: dict[str, Col], models: ModelCatalog | None):
    """Each row's draft model by its catalog name ('' for none), its shape per DRAFT_SHAPE
    (NaN where none; empty when no row has one) and the unknown ones' problems."""
    n = len(rows)
    if not rows.any():
        return np.full(n, "", dtype=object), {}, []
    catalog = models if models is not None else load_models()
    col = cells["draft_model"]
    canonical = col.derive(lambda t: catalog.resolve(t) if t else "")
    found = flag_per_value(
        rows & canonical.is_(None),
        "draft_model",
        col,
        unknown_model(catalog),
    )
    names = np.where(rows, canonical.values(), "")
    names = np.where(names == None, "", names).astype(object)  # noqa: E711 (elementwise)
    table = catalog.models
    shape = {}
    for d in DRAFT_SHAPE:
        by_name = table[d].astype(float) if d in table.columns else None
        shape[d] = canonical.derive(
            lambda m, b=by_name: b.get(m, np.nan) if m and b is not None else np.nan, dtype=float
        ).values()
        shape[d] = np.where(rows, shape[d], np.nan)
    shared = table["shared"].astype(float) if "shared" in table.columns else None
    has_shared = canonical.derive(
        lambda m: bool(m and shared is not None and shared.get(m, 0) > 0), dtype=bool
    ).values()
    found += flag(rows & has_shared, "draft_model", "its shared experts are not modelled yet: a "
                  "draft model of routed experts only (shared blank or 0)")  # fmt: skip
    return names, shape, found


def _not_here(serve: np.ndarray, cells: dict[str, Col]) -> Found:
    """A serve row's T, S, count, measured time or group, and a serve column on another row."""
    found: Found = []
    given = {c: ~cells[c].is_("") for c in cells}
    for c, why in (
        ("T", "its steps' T and S come from isl and osl (prefill T = S = isl; decode T = 1 at "
              "S = isl + osl/2); leave T blank"),
        ("S", "its steps' T and S come from isl and osl (prefill T = S = isl; decode T = 1 at "
              "S = isl + osl/2); leave S blank"),
        ("count", "a serve row is one stream of requests; leave count blank"),
        ("group", "a serve row is its own total (its steps summed): leave its group blank"),
    ):  # fmt: skip
        if c in given:
            found += flag(serve & given[c], c, why)
    for c in ("measured_seconds", "measured_ms", "measured_us"):
        if c in given:
            found += flag(serve & given[c], c, "a serve row's time is its steps': measure a "
                          "prefill or decode step as a transformer row")  # fmt: skip
    for c in SERVE_INPUTS:
        if c in given:
            found += flag(~serve & given[c], c, f"{c} is a serve row's (op serve); leave it "
                          "blank on a row of another op")  # fmt: skip
    return found
