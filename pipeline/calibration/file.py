"""The calibration file (TOML; DESIGN.md §20, docs/model.md#calibration): written by
`pipeline calibrate`, read by `--calibration` (one file or several). A [calibration] table
says where it came from, then one table per group holds that group's fitted values:
[chip.kind] (every dtype), [chip.kind.DTYPE] (matmul, custom), [chip.COLLECTIVE.LINK.CHIPS]
(LINK and CHIPS each left out when the group pools them):

    [calibration]
    created = 2025-06-01            # the fit's date
    source = "measured.csv"         # what it was fitted to, and that file's SHA-256
    source_sha256 = "…"
    floor_median = 1.3              # ERRORS: the symmetric error max(t/m, m/t) - 1 over
    …                               # the used groups' rows, median and p90
    version = "0.2.0"               # the roofline-pipeline that wrote it

    [h100.matmul.bf16]
    form = "roofline+shape"         # FORMS
    compute_efficiency = 0.8        # 1e-6 <= e <= 1 (nan: not fitted, see reason)
    hbm_efficiency = 0.7
    network_efficiency = 1.0
    overhead_seconds = 2e-06        # 0 to 3600 (an hour), per op (alpha_beta: alpha)
    shape = '{"knots": …, "coef": […]}'   # roofline+shape only
    rows = 1111
    floor_median = 1.3              # GROUP_ERRORS: the floor's, the fit's in sample, held out
    …
    fitted = true                   # false: every value nan, reason says why
    used = true                     # fitted and better than the floor held out
    reason = ""
    source = "gemm/trtllm/1.0"      # where the group's rows came from (optional)

Reading checks every table and key and raises one InvalidCalibrationFile listing every
problem (file, line, [table], key, what would be valid). A file of the old layout (one
[chip.kind] table each, mean errors: error_before, error_after, heldout_error) still reads:
its groups are every dtype, form roofline, their errors unknown (nan). A chip name the
catalog does not know is allowed: a user's chip.
"""

from __future__ import annotations

import difflib
import hashlib
import math
import os
import re
import tomllib
from dataclasses import replace
from datetime import date
from importlib import resources
from pathlib import Path

import pandas as pd
import tomli_w

from pipeline.calibration.checks import (
    GROUP_ERRORS,
    GROUP_KEYS,
    OLD_ERRORS,
    OLD_GROUP_KEYS,
    check_table,
    dotted,
    group_values,
    meta_values,
)
from pipeline.calibration.estimate import ERRORS, KINDS, Calibration, group_table
from pipeline.catalogs.hardware_file import toml_lines
from pipeline.errors import InvalidCalibrationFile, OutputError, printable, quoted
from pipeline.model.dtypes import DTYPES
from pipeline.textfile import atomic_file, decode_utf8, read_bytes

META = "calibration"  # the top table's name: no chip can have it
NAMED = ("hardware", "kind", "dtype", "chips", "link")  # a group's table name says these
META_KEYS = ("created", "source", "source_sha256", *ERRORS, "version")
PUBLISHED = "published"  # the calibration name that means PUBLISHED_PATH
PUBLISHED_PATH = Path(str(resources.files("pipeline") / "data" / "calibrations" / "published.toml"))
_DIGITS = re.compile(r"[0-9]+")
HEADER = (
    "# roofline calibration: t_estimate = max(t_math / compute_efficiency, t_hbm / "
    "hbm_efficiency,\n#   t_network / network_efficiency) + overhead_seconds x count\n"
    "#   (roofline+shape: times the shape correction;\n"
    "#   alpha_beta: overhead_seconds + t_network / network_efficiency)\n"
)
COLLECTIVE_TABLES = (
    "a collective's table is [chip.kind], [chip.kind.LINK], [chip.kind.CHIPS] or "
    "[chip.kind.LINK.CHIPS], CHIPS a whole number 1 or more"
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
    for group in cal.groups.to_dict("records"):  # a few chips x kinds x dtypes
        table = doc
        for part in _table_name(group):
            table = table.setdefault(part, {})
        table.update(_group_table(group))
    text = HEADER + "\n" + tomli_w.dumps(doc)
    path = Path(path)
    try:
        with atomic_file(path) as temp:
            temp.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise OutputError(f"{printable(path)}: cannot write: {exc.strerror or exc}") from exc


def _table_name(group: dict) -> tuple[str, ...]:
    """The group's table: [chip.kind], [chip.kind.dtype], [chip.collective.link.chips]."""
    hardware, link, chips = group["hardware"], str(group["link"] or ""), int(group["chips"])
    if hardware == META:
        raise ValueError(f"a chip named {META!r} cannot be written: the top table has it")
    if link in GROUP_KEYS or _DIGITS.fullmatch(link):
        raise ValueError(f"a link named {link!r} cannot be written: a table name reads it so")
    named = (hardware, group["kind"])
    if group["dtype"]:
        return (*named, group["dtype"])
    return (*named, *([link] if link else []), *([str(chips)] if chips else []))


def _group_table(group: dict) -> dict:
    """A group's keys and values as the file holds them (shape and source when given)."""
    table: dict[str, object] = {}
    for key in GROUP_KEYS:
        value = group.get(key, "")
        if key in ("rows",):
            value = int(value)
        elif key in ("fitted", "used"):
            value = bool(value)
        elif key in ("form", "reason"):
            value = str(value)
        else:
            value = float(value)
        table[key] = value
    for key in ("shape", "source"):
        if isinstance(group.get(key), str) and group[key]:
            table[key] = group[key]
    return table


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
        line = lines.get(keys)
        where = f"{name}:{line}" if line else name
        problems.append(f"{where} [{dotted(keys)}]{message}")

    meta = parsed.pop(META, None)
    if not isinstance(meta, dict):
        problems.append(
            f"{name}: no [{META}] table; a calibration file starts with one (created, source, "
            f"source_sha256, {', '.join(ERRORS)}, version), as `pipeline calibrate` writes it"
        )
        meta = {}
    old = any(k in meta for k in OLD_ERRORS) and not any(k in meta for k in ERRORS)
    keys = ("created", "source", "source_sha256", *OLD_ERRORS, "version") if old else META_KEYS
    about = meta_values(check_table(meta, keys, (META,), say), say)
    records: list[dict] = []
    for hardware, kinds in parsed.items():
        if not isinstance(kinds, dict):
            say(
                (hardware,),
                f": top-level key {quoted(hardware)} must be a table of kinds, "
                f"like [{dotted((hardware, 'matmul'))}]",
            )
            continue
        for kind, fields in kinds.items():
            where = (hardware, kind)
            if kind not in KINDS:
                say(where, f": unknown kind {quoted(kind)}; valid kinds: {', '.join(KINDS)}")
            elif not isinstance(fields, dict):
                say(where, f": {quoted(kind)} must be a table of {', '.join(GROUP_KEYS)}")
            elif old:
                group = group_values(check_table(fields, OLD_GROUP_KEYS, where, say), where, say)
                records.append(_old_group(hardware, kind, group))
            else:
                records.extend(_groups_of(hardware, kind, fields, say))
    if problems:
        raise InvalidCalibrationFile("invalid calibration file:\n  " + "\n  ".join(problems))
    return Calibration(
        groups=groups_frame(records),
        created=about["created"],
        source=about["source"],
        source_sha256=about["source_sha256"],
        **{k: (math.nan if old else float(about[k])) for k in ERRORS},
        version=about["version"],
    )


def _groups_of(hardware: str, kind: str, fields: dict, say) -> list[dict]:
    """The groups of one chip x kind table: its own values (every dtype, any link and
    chips) and those of its sub-tables, each name checked."""
    collective = kind in KINDS[2:]
    found: list[tuple[tuple, dict, dict]] = []  # (table name, keys it names, its fields)
    base = (hardware, kind)
    tables = [(base, {}, fields)]
    while tables:
        where, named, table = tables.pop(0)
        own = {k: v for k, v in table.items() if not isinstance(v, dict)}
        if own or where == base and not table:
            found.append((where, named, own))
        for part, sub in ((k, v) for k, v in table.items() if isinstance(v, dict)):
            at = (*where, part)
            if not collective:
                if len(where) > 2 or part not in DTYPES:
                    say(at, f": unknown dtype {quoted(part)}; a matmul or custom group's table "
                            "is [chip.kind] (every dtype) or [chip.kind.DTYPE], DTYPE one of "
                            + ", ".join(DTYPES))  # fmt: skip
                    continue
                tables.append((at, {"dtype": part}, sub))
            elif "chips" in named or len(where) > 3:
                say(at, f": {quoted(part)} is not a table name here; {COLLECTIVE_TABLES}")
            elif _DIGITS.fullmatch(part) and int(part) >= 1 and len(part) < 7:
                tables.append((at, {**named, "chips": int(part)}, sub))
            elif len(where) == 3 or any(c.isdigit() for c in part[:1]):
                say(at, f": {quoted(part)} is not a chip count; {COLLECTIVE_TABLES}")
            else:
                tables.append((at, {"link": part}, sub))
    out = []
    for where, named, own in found:
        group = group_values(check_table(own, GROUP_KEYS, where, say, optional=True), where, say)
        out.append({"hardware": hardware, "kind": kind, "dtype": "", "chips": 0, "link": "",
                    **named, **group})  # fmt: skip
    return out


def _old_group(hardware: str, kind: str, group: dict) -> dict:
    """An old file's chip x kind table as a group of today's: every dtype, the roofline form,
    used when fitted, its errors unknown (a mean error is not a median)."""
    return {
        **group,
        **dict.fromkeys(GROUP_ERRORS, math.nan),
        "hardware": hardware, "kind": kind, "dtype": "", "chips": 0, "link": "",
        "form": "roofline", "shape": "", "used": bool(group["fitted"]), "source": "",
    }  # fmt: skip


def groups_frame(records: list[dict] | pd.DataFrame) -> pd.DataFrame:
    """group_table's frame of `records`, with each group's `source` when any says one."""
    frame = group_table(records)
    if isinstance(records, pd.DataFrame):
        records = records.to_dict("records")
    said = {tuple(r[k] for k in NAMED): r.get("source") for r in records}
    said = {k: v for k, v in said.items() if isinstance(v, str) and v}
    if said and "source" not in frame.columns:
        keys = frame[list(NAMED)].itertuples(index=False, name=None)
        frame["source"] = [said.get(k, "") for k in keys]
    return frame


def calibration_from(given) -> tuple[Calibration, tuple[Path, ...]]:
    """The Calibration `calibration=` asks for and the files it was read from: a Calibration
    as it is (no file), a path read (InvalidCalibrationFile when it is not one), "published"
    the calibration that ships (PUBLISHED_PATH), or a list of these merged (their groups must
    differ); a file's labelled with its name and the start of its SHA-256 (what results say
    was applied)."""
    if isinstance(given, list | tuple):
        if not given:
            raise TypeError("calibration must be a file, a Calibration or a list of them, not []")
        read = [calibration_from(g) for g in given]
        if len(read) == 1:
            return read[0]
        return _merged(read), tuple(p for _, paths in read for p in paths)
    if isinstance(getattr(given, "calibration", None), Calibration):
        given = given.calibration  # what pipeline.calibrate returns (pipeline.Calibrated)
    if isinstance(given, Calibration):
        return given, ()
    if not isinstance(given, str | Path):
        raise TypeError(
            "calibration must be a calibration file's path (pipeline calibrate writes one), "
            f"{PUBLISHED!r}, a Calibration or a list of them, not {type(given).__name__}"
        )
    if str(given) == PUBLISHED:
        if not PUBLISHED_PATH.is_file():
            raise InvalidCalibrationFile(
                f"no published calibration ships with this version ({printable(PUBLISHED_PATH)}"
                " is missing); give a calibration file of your own"
            )
        given = PUBLISHED_PATH
    path = Path(os.path.abspath(given))
    if not path.exists() and difflib.get_close_matches(str(given).lower(), [PUBLISHED]):
        raise InvalidCalibrationFile(
            f"{printable(path)}: no such file; did you mean {PUBLISHED!r} (the calibration that "
            "ships)?"
        )
    cal = read_calibration(path)
    label = f"{path.name} {hashlib.sha256(path.read_bytes()).hexdigest()[:12]}"
    return replace(cal, label=label), (path,)


def _merged(read: list[tuple[Calibration, tuple[Path, ...]]]) -> Calibration:
    """One Calibration of several whose groups differ (InvalidCalibrationFile naming a group
    two hold, and both): the groups together, the sources and labels joined."""
    seen: dict[tuple, str] = {}  # the used groups: one file's each (an unused one gives way)
    for cal, paths in read:
        named = ", ".join(printable(p) for p in paths) or cal.label or "a Calibration"
        used = cal.groups[cal.groups["used"].astype(bool)]
        for key in used[list(NAMED)].itertuples(index=False, name=None):
            if key in seen:
                group = dict(zip(NAMED, key, strict=True))
                raise InvalidCalibrationFile(
                    f"calibration group [{dotted(_table_name(group))}] is in both {seen[key]} "
                    f"and {named}: give each group once (fit the files' measurements together, "
                    "or leave the group out of one)"
                )
            seen[key] = named
    cals = [cal for cal, _ in read]
    frames = [c.groups for c in cals if len(c.groups)]
    records = pd.concat(frames, ignore_index=True) if frames else cals[0].groups
    # a key another file uses: its used group alone; a key no file uses: the first file's
    records = records.sort_values("used", ascending=False, kind="stable")
    records = records.drop_duplicates(list(NAMED)).sort_index()
    sources = dict.fromkeys(c.source for c in cals if c.source)
    versions = dict.fromkeys(c.version for c in cals)
    return Calibration(
        groups=groups_frame(records),
        created=max(c.created for c in cals),
        source="; ".join(sources),
        **dict.fromkeys(ERRORS, math.nan),  # a median of the whole is not the files' to say
        version=", ".join(versions),
        label=" + ".join(c.label or c.source or "calibration" for c in cals),
    )
