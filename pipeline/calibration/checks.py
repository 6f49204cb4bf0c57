"""The checks of a calibration file's values (calibration.file reads; each problem is said
with its table and key, and what would be valid): the ranges that keep every estimate finite
(calibration.estimate), the forms, a shape correction's text, each text at most TEXT_LIMIT
characters."""

from __future__ import annotations

import json
import math
import re
from datetime import date, datetime

from pipeline.calibration.estimate import (
    EFFICIENCIES,
    ERRORS,
    FORMS,
    MAX_OVERHEAD_SECONDS,
    MIN_EFFICIENCY,
)
from pipeline.errors import printable, quoted

SHAPED = FORMS[1]
AXES = ("m", "n", "k")  # a shape correction's: log2 of m, n and k
GROUP_ERRORS = ERRORS  # a group's errors as the calibration's: the floor's, the fit's, held out
GROUP_KEYS = ("form", *EFFICIENCIES, "overhead_seconds", "rows", *GROUP_ERRORS, "fitted",
              "used", "reason")  # fmt: skip
OPTIONAL = ("shape", "source")  # shape: of a roofline+shape group; source: where rows came from
# the old layout's (one table per chip x kind, mean |t / measured - 1|)
OLD_ERRORS = ("error_before", "error_after", "heldout_error")
OLD_GROUP_KEYS = (*EFFICIENCIES, "overhead_seconds", "rows", *OLD_ERRORS, "fitted", "reason")
TEXT_LIMIT = 4_096  # characters of a text (a path's, a reason's): a note, not a document
_SHA256 = re.compile(r"[0-9a-f]{64}")
_BARE = re.compile(r"[A-Za-z0-9_-]+")
SHAPE_SAYS = (
    'knots: {"m": [...], "n": [...], "k": [...]}, as many ascending finite numbers each; coef: '
    '1 + 3 x (1 + knots) + 3 finite numbers (19 with 4 knots); range: {"m": [low, high], ...}'
)


def check_table(fields: dict, keys: tuple[str, ...], where: tuple, say, optional=False) -> dict:
    """`fields` with every key of `keys` (missing or unknown ones said; OPTIONAL's allowed
    too with `optional`)."""
    allowed = (*keys, *OPTIONAL) if optional else keys
    valid = ", ".join(keys)
    if optional:
        valid += " (and shape for form roofline+shape, source if known)"
    for key in fields:
        if key not in allowed:
            say(where, f": unknown key {quoted(key)}; valid keys: {valid}")
    for key in keys:
        if key not in fields:
            say(where, f": key {key} is missing; a table needs {valid}")
    return {k: v for k, v in fields.items() if k in allowed}


def meta_values(about: dict, say) -> dict:
    """The [calibration] table's values, each checked (defaults for those missing)."""
    where = ("calibration",)
    out = {"created": created_date(about["created"], say) if "created" in about else ""}
    for key in ("source", "version"):
        out[key] = about.get(key, "")
        check_text(out[key], where, key, say)
    sha = out["source_sha256"] = about.get("source_sha256", "")
    if not (isinstance(sha, str) and (sha == "" or _SHA256.fullmatch(sha))):
        say(where, f": key source_sha256: {_shown(sha)} is not 64 lower-case hex digits or ''")
    for key in (*ERRORS, *OLD_ERRORS):
        out[key] = check_error(about.get(key, math.nan), where, key, say)
    return out


def group_values(group: dict, where: tuple, say) -> dict:
    """One group's values, each checked (a bad one said), with defaults for those not given."""
    fitted = _flag(group, "fitted", where, say)
    used = _flag(group, "used", where, say) if "used" in group else fitted
    if used and not fitted:
        say(where, ": key used: true, but the group is not fitted")
    out: dict[str, object] = {"fitted": fitted, "used": used}
    unfitted = "; nan when fitted = false" if not fitted else ""
    for key in (*EFFICIENCIES, "overhead_seconds"):
        value = out[key] = group.get(key, 1.0)
        if not _is_number(value):
            say(where, f": key {key}: {_shown(value)} is not a number")
        elif math.isnan(value) and not fitted:
            pass
        elif key != "overhead_seconds" and not MIN_EFFICIENCY <= value <= 1:
            say(
                where,
                f": key {key}: {_shown(value)} is out of range; an efficiency is a number "
                f"from {MIN_EFFICIENCY:g} to 1 (1 = the full rate){unfitted}",
            )
        elif key == "overhead_seconds" and not 0 <= value <= MAX_OVERHEAD_SECONDS:
            say(
                where,
                f": key {key}: {_shown(value)} is out of range; an overhead is seconds per "
                f"op, from 0 to {MAX_OVERHEAD_SECONDS:g} (an hour){unfitted}",
            )
    rows = out["rows"] = group.get("rows", 0)
    if isinstance(rows, bool) or not isinstance(rows, int) or rows < 0:
        say(where, f": key rows: {_shown(rows)} is not a whole number 0 or more")
    for key in (*GROUP_ERRORS, *OLD_ERRORS):
        out[key] = check_error(group.get(key, math.nan), where, key, say)
    for key in ("reason", "source"):
        out[key] = group.get(key, "")
        check_text(out[key], where, key, say)
    form = out["form"] = group.get("form", "roofline")
    if form not in FORMS:
        say(where, f": key form: {_shown(form)} is not a form; valid forms: {', '.join(FORMS)}")
    shape = out["shape"] = group.get("shape", "")
    if form == SHAPED and "shape" not in group:
        say(where, f": key shape is missing; a group of form {SHAPED} needs one")
    elif form != SHAPED and "shape" in group:
        say(where, f": key shape: only a group of form {SHAPED} has one")
    elif "shape" in group:
        problem = shape_problem(shape)
        if problem:
            say(where, f": key shape: {problem}; {SHAPE_SAYS}")
    return out


def shape_problem(text: object) -> str:
    """What is wrong with a shape correction's text ('' when nothing): JSON of `knots` (per
    axis of AXES, ascending) and `coef` (c0, per axis its slope and one per knot, then the
    three products) and `range` (per axis the fitted rows' [low, high]): calibration.shape's
    dumps()."""
    if not isinstance(text, str):
        return f"{_shown(text)} is not text"
    try:
        doc = json.loads(text)
    except ValueError:
        return "not JSON"
    if not isinstance(doc, dict) or not isinstance(doc.get("knots"), dict) or "coef" not in doc:
        return "not an object of knots, coef and range"
    extra = [k for k in doc if k not in ("knots", "coef", "range")]
    if extra:
        return f"unknown key {quoted(extra[0])}"
    knots = doc["knots"]
    if sorted(knots) != sorted(AXES):
        return f"knots for {', '.join(AXES)}, not {', '.join(map(str, knots))}"
    for axis in AXES:
        q = knots[axis]
        if not _numbers(q) or any(b < a for a, b in zip(q, q[1:], strict=False)):
            return f"knots of {axis} are not ascending finite numbers"
    if len({len(knots[a]) for a in AXES}) > 1:
        return "the axes' knots differ in count"
    coef = doc["coef"]
    if not _numbers(coef):
        return "coef are not all finite numbers"
    need = 1 + sum(1 + len(knots[a]) for a in AXES) + 3
    if len(coef) != need:
        return f"{len(coef)} coef, {need} needed for its knots"
    spans = doc.get("range")
    for axis in AXES:
        span = spans.get(axis) if isinstance(spans, dict) else None
        if not (_numbers(span) and len(span) == 2 and span[0] <= span[1]):
            return f"range of {axis} is not [low, high]"
    return ""


def _numbers(values: object) -> bool:
    return isinstance(values, list) and all(_is_number(v) and math.isfinite(v) for v in values)


def _flag(group: dict, key: str, where: tuple, say) -> bool:
    value = group.get(key, True)
    if not isinstance(value, bool):
        say(where, f": key {key}: {_shown(value)} is not true or false")
        return True
    return value


def check_text(value: object, where: tuple, key: str, say) -> None:
    """A text key's value: a string of at most TEXT_LIMIT characters."""
    if not isinstance(value, str):
        say(where, f": key {key}: {_shown(value)} is not text; give a quoted string")
    elif len(value) > TEXT_LIMIT:
        say(
            where,
            f": key {key}: {len(value):,} characters, at most {TEXT_LIMIT:,}; a calibration's "
            f"text is a note (it is copied into every run's summary): shorten it",
        )


def check_error(value: object, where: tuple, key: str, say) -> object:
    """An error's value: a fraction 0 or more, or nan."""
    if not _is_number(value) or not (math.isnan(value) or 0 <= value < math.inf):
        say(
            where,
            f": key {key}: {_shown(value)} is not an error: a fraction 0 or more "
            "(max(t/m, m/t) - 1), or nan",
        )
    return value


def created_date(value: object, say) -> str:
    if isinstance(value, date) and not isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, str):
        try:
            return date.fromisoformat(value).isoformat()
        except ValueError:
            pass
    say(("calibration",), f": key created: {_shown(value)} is not a date; give one like 2025-06-01")
    return ""


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _shown(value: object) -> str:
    return quoted(value) if isinstance(value, str) else printable(value)


def dotted(keys: tuple[str, ...]) -> str:
    """A table's name as TOML writes it: h100.matmul, "my chip".matmul."""
    return ".".join(
        k if _BARE.fullmatch(k) else '"' + printable(k).replace('"', '\\"') + '"' for k in keys
    )
