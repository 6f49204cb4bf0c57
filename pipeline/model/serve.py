"""Op `serve` (docs/model.md#serving, DESIGN §23): requests of `isl` prompt tokens and `osl`
output tokens served at batch B, as the transformer steps they rest on. Each serve row is
followed by its steps, each a transformer step (model.transformer expands them into their ops
next): `name/prefill` (one request's prompt: B = 1, T = S = isl), `name/decode` (the batch's
next tokens: B, T = k + 1 with k draft tokens, else 1, at the mean context S = isl + ⌊osl/2⌋)
and, with a `draft_model`, `name/draft` (the draft model's decode step, T = 1, `count` = k:
its k steps one after another). model.serve_totals fills the serve row from them.

A frame operation: per step, the serve rows' columns are set at once; no Python per row. A
serve row is one scenario of the plan, so it and its steps are in one Dask partition."""

from __future__ import annotations

import numpy as np
import pandas as pd

from pipeline.model.groups import BLOCK, IN_STEP, STEP_OF
from pipeline.model.ops import SERVE, TRANSFORMER

STEPS = ("prefill", "decode", "draft")  # a serve row's steps, in this order after it
# the draft model's shape as scenarios.serve_rows puts it in the frame (`draft_D`, ...): the
# transformer dims and the MoE routing (`k`, `F_expert`) of the catalog's model
DRAFT_SHAPE = ("D", "F", "N", "K", "H", "L", "V", "E", "k", "F_expert")
DRAFT_COLUMNS = tuple(f"draft_{d}" for d in DRAFT_SHAPE)


def is_serve(frame: pd.DataFrame) -> np.ndarray:
    """Which rows are serve rows (of a categorical op column, none is looked at when no
    category is one)."""
    op = frame["op"]
    if isinstance(op.dtype, pd.CategoricalDtype) and SERVE not in op.cat.categories:
        return np.zeros(len(frame), dtype=bool)
    return (op == SERVE).to_numpy(dtype=bool)


def decode_context(frame: pd.DataFrame) -> np.ndarray:
    """The context a decode step attends to on average over a request: S = isl + ⌊osl/2⌋."""
    return frame["isl"].to_numpy(dtype=float) + np.floor(frame["osl"].to_numpy(dtype=float) / 2)


def draft_tokens(frame: pd.DataFrame) -> np.ndarray:
    """Each row's draft tokens k (0 without speculative decoding)."""
    if "draft_tokens" not in frame.columns:
        return np.zeros(len(frame))
    return np.nan_to_num(frame["draft_tokens"].to_numpy(dtype=float), nan=0.0)


def has_draft(frame: pd.DataFrame) -> np.ndarray:
    """Which rows draft with a model of their own (a draft step)."""
    if "draft_model" not in frame.columns:
        return np.zeros(len(frame), dtype=bool)
    return (frame["draft_model"].astype(str) != "").to_numpy(dtype=bool)


def expand_serve(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with each serve row followed by its steps' rows (STEPS); other rows as they
    are, in order (the draft model's shape columns are model.roofline's INTERNAL ones)."""
    serve = is_serve(frame)
    if not serve.any():
        return frame
    frame = frame.reset_index(drop=True)
    op = frame["op"]
    if isinstance(op.dtype, pd.CategoricalDtype) and TRANSFORMER not in op.cat.categories:
        frame["op"] = op.cat.add_categories([TRANSFORMER])  # kept categorical through concat
    at = np.arange(len(frame))
    base = frame[STEP_OF].to_numpy() if STEP_OF in frame.columns else at
    block = frame[BLOCK].to_numpy() if BLOCK in frame.columns else np.full(len(frame), -1)
    within = frame[IN_STEP].to_numpy(dtype=bool) if IN_STEP in frame.columns else serve
    # the serve row and its steps share a block: a refused row refuses them all
    parts = [frame.assign(**{STEP_OF: base, BLOCK: np.where(serve, base, block),
                             IN_STEP: within | serve})]  # fmt: skip
    keys = [(np.zeros(len(frame), dtype=np.int64), at)]  # (step, row) of each part's rows
    rows = frame[serve]
    for k, step in enumerate(STEPS):
        mine = has_draft(rows) if step == "draft" else np.ones(len(rows), dtype=bool)
        if mine.any():
            where = base[rows.index[mine]]
            parts.append(_step_rows(rows[mine], step).assign(
                **{STEP_OF: where, BLOCK: where, IN_STEP: True}))  # fmt: skip
            keys.append((np.full(int(mine.sum()), k + 1), rows.index[mine].to_numpy()))
    order = np.lexsort((np.concatenate([p for p, _ in keys]),
                        np.concatenate([a for _, a in keys])))  # fmt: skip
    out = pd.concat(parts, ignore_index=True).iloc[order]
    out.index = pd.RangeIndex(len(out))  # no copy, as reset_index would make
    return out


def _step_rows(serve: pd.DataFrame, step: str) -> pd.DataFrame:
    """One step of every serve row in `serve`: a transformer row named `name/step`."""
    rows = serve.copy()
    rows["name"] = serve["name"].astype(str) + "/" + step
    rows["series"] = serve["series"].astype(str) + "/" + step
    op = serve["op"]
    rows["op"] = (pd.Categorical([TRANSFORMER] * len(rows), categories=op.cat.categories)
                  if isinstance(op.dtype, pd.CategoricalDtype) else TRANSFORMER)  # fmt: skip
    isl = serve["isl"].to_numpy(dtype=float)
    k = draft_tokens(serve)
    if step == "prefill":  # one request's prompt, alone: the time to its first token
        rows["B"], rows["T"], rows["S"], rows["count"] = 1.0, isl, isl, 1.0
    else:
        rows["S"] = decode_context(serve)
        rows["T"] = k + 1.0 if step == "decode" else 1.0
        rows["count"] = 1.0 if step == "decode" else k  # k draft steps, one after another
    if step == "draft":
        rows["model"] = serve["draft_model"]
        for d, c in zip(DRAFT_SHAPE, DRAFT_COLUMNS, strict=True):
            rows[{"k": "moe_k", "F_expert": "moe_width"}.get(d, d)] = serve[c]
    for c in ("draft_tokens", "acceptance"):  # the serve row's inputs, not its steps'
        if c in rows.columns:
            rows[c] = np.nan
    if "draft_model" in rows.columns:
        rows["draft_model"] = ""
    if "measured_seconds" in rows.columns:
        rows["measured_seconds"] = np.nan
    return rows


def of_serve(results: pd.DataFrame, among: np.ndarray | None = None) -> np.ndarray:
    """Which rows are serve rows or their steps' totals (by series: `series/prefill`, ...),
    of the rows `among` (a mask; None: every row): the serving answer ranks them, not the
    fleet's step-latency ranking."""
    serve = is_serve(results)
    if not serve.any():
        return serve
    series = pd.unique(results["series"].astype(str).to_numpy()[serve])
    steps = [f"{s}/{step}" for s in series for step in STEPS]  # per serve series, not row
    at = np.arange(len(results)) if among is None else np.flatnonzero(among)
    serve = serve.copy()
    serve[at] |= results["series"].iloc[at].astype(str).isin(steps).to_numpy(dtype=bool)
    return serve
