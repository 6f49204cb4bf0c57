"""The calibration file (TOML; DESIGN.md §20): written by `pipeline calibrate`, read by
`--calibration`. A [calibration] table says where it came from, then one table per chip x
kind (KINDS) holds that group's fitted values:

    [calibration]
    created = 2025-06-01            # the fit's date
    source = "measured.csv"         # what it was fitted to, and that file's SHA-256
    source_sha256 = "…"
    error_before = 0.33             # mean |t / measured - 1| over the fitted groups' rows:
    error_after = 0.021             # the raw t_lower, the fit, and k-fold held out
    heldout_error = 0.022
    version = "0.2.0"               # the roofline-pipeline that wrote it

    [h100.matmul]
    compute_efficiency = 0.8        # 1e-6 <= e <= 1 (1: not fitted, see reason)
    hbm_efficiency = 0.7
    network_efficiency = 1.0
    overhead_seconds = 2e-06        # 0 to 3600 (an hour), per op
    rows = 111
    error_before = 0.35
    error_after = 0.02
    heldout_error = 0.021
    fitted = true                   # false: every value nan, reason says why
    reason = ""

Reading checks every table and key and raises one InvalidCalibrationFile listing every
problem (file, line, [table], key, what would be valid): the values in the ranges that keep
every estimate finite (calibration.estimate), each text (source, version, reason) at most
TEXT_LIMIT characters. A chip name the catalog does not
know is allowed: a user's chip; matching it to rows is the caller's business.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import tomllib
from dataclasses import replace
from datetime import date, datetime
from pathlib import Path

import tomli_w

from pipeline.calibration.estimate import (
    EFFICIENCIES,
    ERRORS,
    KINDS,
    MAX_OVERHEAD_SECONDS,
    MIN_EFFICIENCY,
    Calibration,
    group_table,
)
from pipeline.catalogs.hardware_file import toml_lines
from pipeline.errors import InvalidCalibrationFile, OutputError, printable, quoted
from pipeline.textfile import atomic_file, decode_utf8, read_bytes

META = "calibration"  # the top table's name: no chip can have it
NUMBERS = (*EFFICIENCIES, "overhead_seconds", *ERRORS)
GROUP_KEYS = (*EFFICIENCIES, "overhead_seconds", "rows", *ERRORS, "fitted", "reason")
META_KEYS = ("created", "source", "source_sha256", *ERRORS, "version")
TEXT_LIMIT = 4_096  # characters of a text (a path's, a reason's): a note, not a document
_SHA256 = re.compile(r"[0-9a-f]{64}")
_BARE = re.compile(r"[A-Za-z0-9_-]+")
HEADER = (
    "# roofline calibration: t_estimate = max(t_math / compute_efficiency, t_hbm / "
    "hbm_efficiency,\n#   t_network / network_efficiency) + overhead_seconds x count\n"
)


def write_calibration(cal: Calibration, path: Path) -> None:
    """Write `cal` to `path` as TOML, in one step (the old file stays until the new one is
    whole); OutputError when it cannot be written."""
    doc: dict[str, dict] = {
        META: {
            "created": date.fromisoformat(cal.created),
            "source": cal.source,
            "source_sha256": cal.source_sha256,
            **{k: float(getattr(cal, k)) for k in ERRORS},
            "version": cal.version,
        }
    }
    for group in cal.groups.to_dict("records"):  # a few chips x kinds
        if group["hardware"] == META:
            raise ValueError(f"a chip named {META!r} cannot be written: the top table has it")
        table = {k: float(group[k]) for k in NUMBERS}
        table.update(rows=int(group["rows"]), fitted=bool(group["fitted"]))
        table["reason"] = str(group["reason"])
        doc.setdefault(group["hardware"], {})[group["kind"]] = {k: table[k] for k in GROUP_KEYS}
    text = HEADER + "\n" + tomli_w.dumps(doc)
    path = Path(path)
    try:
        with atomic_file(path) as temp:
            temp.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise OutputError(f"{printable(path)}: cannot write: {exc.strerror or exc}") from exc


def read_calibration(path: Path) -> Calibration:
    """The Calibration a file holds, every value checked (InvalidCalibrationFile naming the
    file, line, table and key of each problem and what would be valid)."""
    path = Path(path)
    name = printable(path)
    text = decode_utf8(
        path, read_bytes(path, InvalidCalibrationFile, "calibration file"), InvalidCalibrationFile
    )
    try:
        parsed = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidCalibrationFile(f"{name}: not valid TOML: {exc}") from exc
    except ValueError as exc:  # Python refuses to read an integer of over 4,300 digits
        raise InvalidCalibrationFile(f"{name}: a number too large to read: {exc}") from exc
    lines = toml_lines(text)
    problems: list[str] = []

    def say(keys: tuple[str, ...], message: str) -> None:
        line = lines.get(keys[:2]) or lines.get(keys[:1])
        where = f"{name}:{line}" if line else name
        problems.append(f"{where} [{_dotted(keys[:2])}]{message}")

    meta = parsed.pop(META, None)
    if not isinstance(meta, dict):
        problems.append(
            f"{name}: no [{META}] table; a calibration file starts with one (created, source, "
            f"source_sha256, {', '.join(ERRORS)}, version), as `pipeline calibrate` writes it"
        )
        meta = {}
    about = _check_table(meta, META_KEYS, (META,), say)
    created = _created(about["created"], say) if "created" in about else ""
    for key in ("source", "version"):
        if key in about:
            _check_text(about[key], (META,), key, say)
    sha = about.get("source_sha256", "")
    if not (isinstance(sha, str) and (sha == "" or _SHA256.fullmatch(sha))):
        say((META,), f": key source_sha256: {_shown(sha)} is not 64 lower-case hex digits or ''")
    for key in ERRORS:
        _check_error(about.get(key, 0.0), (META,), key, say)

    records = []
    for hardware, kinds in parsed.items():
        if not isinstance(kinds, dict):
            say(
                (hardware,),
                f": top-level key {quoted(hardware)} must be a table of kinds, "
                f"like [{_dotted((hardware, 'matmul'))}]",
            )
            continue
        for kind, fields in kinds.items():
            where = (hardware, kind)
            if kind not in KINDS:
                say(where, f": unknown kind {quoted(kind)}; valid kinds: {', '.join(KINDS)}")
                continue
            if not isinstance(fields, dict):
                say(where, f": {quoted(kind)} must be a table of {', '.join(GROUP_KEYS)}")
                continue
            group = _check_table(fields, GROUP_KEYS, where, say)
            records.append({"hardware": hardware, "kind": kind, **_group(group, where, say)})
    if problems:
        raise InvalidCalibrationFile("invalid calibration file:\n  " + "\n  ".join(problems))
    return Calibration(
        groups=group_table(records),
        created=created,
        source=about["source"],
        source_sha256=sha,
        **{k: float(about[k]) for k in ERRORS},
        version=about["version"],
    )


def _check_table(fields: dict, keys: tuple[str, ...], where: tuple, say) -> dict:
    """`fields` with every key of `keys` (missing or unknown ones said)."""
    for key in fields:
        if key not in keys:
            say(where, f": unknown key {quoted(key)}; valid keys: {', '.join(keys)}")
    for key in keys:
        if key not in fields:
            say(where, f": key {key} is missing; a table needs {', '.join(keys)}")
    return {k: v for k, v in fields.items() if k in keys}


def _group(group: dict, where: tuple, say) -> dict:
    """One chip x kind table's values, each checked; a bad one is said and left out."""
    fitted = group.get("fitted", True)
    if not isinstance(fitted, bool):
        say(where, f": key fitted: {_shown(fitted)} is not true or false")
        fitted = True
    out: dict[str, object] = {"fitted": fitted}
    # a group that was not fitted has no values: nan, or a number in range
    unfitted = "; nan when fitted = false" if not fitted else ""
    for key in (*EFFICIENCIES, "overhead_seconds"):
        value = group.get(key, 1.0)
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
        out[key] = value
    rows = group.get("rows", 0)
    if isinstance(rows, bool) or not isinstance(rows, int) or rows < 0:
        say(where, f": key rows: {_shown(rows)} is not a whole number 0 or more")
    out["rows"] = rows
    for key in ERRORS:
        out[key] = _check_error(group.get(key, 0.0), where, key, say)
    reason = group.get("reason", "")
    _check_text(reason, where, "reason", say)
    out["reason"] = reason
    return out


def _check_text(value: object, where: tuple, key: str, say) -> None:
    """A text key's value: a string of at most TEXT_LIMIT characters."""
    if not isinstance(value, str):
        say(where, f": key {key}: {_shown(value)} is not text; give a quoted string")
    elif len(value) > TEXT_LIMIT:
        say(
            where,
            f": key {key}: {len(value):,} characters, at most {TEXT_LIMIT:,}; a calibration's "
            f"text is a note (it is copied into every run's summary): shorten it",
        )


def _check_error(value: object, where: tuple, key: str, say) -> object:
    if not _is_number(value) or not (math.isnan(value) or 0 <= value < math.inf):
        say(
            where,
            f": key {key}: {_shown(value)} is not a mean relative error: a number "
            "0 or more, or nan",
        )
    return value


def _created(value: object, say) -> str:
    if isinstance(value, date) and not isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, str):
        try:
            return date.fromisoformat(value).isoformat()
        except ValueError:
            pass
    say((META,), f": key created: {_shown(value)} is not a date; give one like 2025-06-01")
    return ""


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _shown(value: object) -> str:
    return quoted(value) if isinstance(value, str) else printable(value)


def _dotted(keys: tuple[str, ...]) -> str:
    """A table's name as TOML writes it: h100.matmul, "my chip".matmul."""
    return ".".join(
        k if _BARE.fullmatch(k) else '"' + printable(k).replace('"', '\\"') + '"' for k in keys
    )


def calibration_from(given) -> tuple[Calibration, Path | None]:
    """The Calibration `calibration=` asks for and the file it was read from: a Calibration
    as it is (None), else a path read (InvalidCalibrationFile when it is not one), labelled
    with the file's name and the start of its SHA-256 (what results say was applied)."""
    if isinstance(getattr(given, "calibration", None), Calibration):
        given = given.calibration  # what pipeline.calibrate returns (pipeline.Calibrated)
    if isinstance(given, Calibration):
        return given, None
    if not isinstance(given, str | Path):
        raise TypeError(
            "calibration must be a calibration file's path (pipeline calibrate writes one) or "
            f"a Calibration, not {type(given).__name__}"
        )
    path = Path(os.path.abspath(given))
    cal = read_calibration(path)
    label = f"{path.name} {hashlib.sha256(path.read_bytes()).hexdigest()[:12]}"
    return replace(cal, label=label), path
