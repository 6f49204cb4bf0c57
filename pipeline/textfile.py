"""Files: reading a user's text file (regular files only, UTF-8 only, and when not, a message
that says what the file looks like and where decoding failed), a file's SHA-256, and writing
a file in one step, never over a user's file unasked."""

from __future__ import annotations

import codecs
import csv
import hashlib
import io
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from pipeline.errors import OutputError, PipelineError, printable

SNIFF_BYTES = 4096  # what is looked at to recognize UTF-16/32 without a byte-order mark
_BOMS = (
    (codecs.BOM_UTF32_LE, "UTF-32"),
    (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"),
    (codecs.BOM_UTF16_BE, "UTF-16"),
)


def read_bytes(path: Path, error: type[PipelineError], what: str) -> bytes:
    """The bytes of a regular file; `error` naming the file when it is missing, unreadable,
    or not a regular file (a folder, a device such as /dev/zero, a pipe)."""
    path = Path(path)
    try:
        info = os.stat(path)
    except FileNotFoundError as exc:
        raise error(f"{printable(path)}: no such file") from exc
    except OSError as exc:
        raise error(f"{printable(path)}: cannot read: {exc.strerror}") from exc
    if stat.S_ISDIR(info.st_mode):
        raise error(f"{printable(path)}: is a folder, not a {what}")
    if not stat.S_ISREG(info.st_mode):
        raise error(
            f"{printable(path)}: not a regular file (a device, pipe or socket); "
            f"save the {what} to a file and give that"
        )
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise error(f"{printable(path)}: cannot read: {exc.strerror}") from exc


def sha256_of(data: bytes) -> str:
    """Hex SHA-256 of bytes (a file's, read already)."""
    return hashlib.sha256(data).hexdigest()


def file_sha256(path: Path) -> str:
    """Hex SHA-256 of a file's bytes, read in blocks (any size)."""
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def refuse_existing(path: Path, force: bool) -> None:
    """OutputError when a file (or a link) is at `path` and not `force`: a command never
    writes over a user's file unasked (`template`, `hardware --chart`, `calibrate`); a
    folder there is check_file_place's to say."""
    path = Path(path)
    if (path.is_symlink() or path.exists() and not path.is_dir()) and not force:
        raise OutputError(
            f"{printable(path)} already exists; give another name, or pass --force to replace it"
        )


def check_file_place(path: Path, example: str = "") -> None:
    """OutputError when `path` is a folder, or its folder is not there (it is never made:
    a mistyped folder name is said, not created)."""
    path = Path(path)
    if path.is_dir():
        such = f" such as {example}" if example else ""
        raise OutputError(f"{printable(path)} is a folder; give a file name{such}")
    folder = path.absolute().parent
    if not folder.is_dir():
        if folder.exists():
            raise OutputError(
                f"{printable(folder)} is a file, not a folder; give a file name in a folder"
            )
        raise OutputError(f"folder {printable(folder)} does not exist; create it first")


@contextmanager
def atomic_file(path: Path, temp: Path | None = None) -> Iterator[Path]:
    """`with atomic_file(path) as temp:` write temp; at a clean exit it replaces `path` in one
    step (os.replace), so `path` is never half written; on an exception it is removed and
    `path` left as it was. `temp`: the name to write, beside `path`; by default a file in a
    folder of its own there, so it is made with the user's usual permissions."""
    path = Path(path)
    spool = None
    if temp is None:
        spool = Path(tempfile.mkdtemp(dir=path.absolute().parent, prefix=f".{path.name}."))
        temp = spool / path.name
    try:
        yield temp
        os.replace(temp, path)
    finally:
        if spool is not None:
            shutil.rmtree(spool, ignore_errors=True)
        else:
            with suppress(OSError):  # a read-only folder refuses even this: nothing was left
                temp.unlink(missing_ok=True)


def decode_utf8(
    path: Path, data: bytes, error: type[PipelineError], option: str | None = None
) -> str:
    """The text of a UTF-8 file (a UTF-8 byte-order mark is dropped); else `error` saying
    what the file looks like (UTF-16, UTF-32, Latin-1 / Windows-1252) and where it failed,
    and, with `option` (`--encoding`), how to read it as it is."""
    name = printable(path)

    def fix(encoding: str | None) -> str:
        if option is None or encoding is None:
            return "save it as UTF-8"
        return f"save it as UTF-8, or give {option} {encoding}"

    for bom, encoding in _BOMS:
        if data.startswith(bom):
            raise error(f"{name}: not UTF-8 (looks like {encoding}): {fix(encoding.lower())}")
    head = data[:SNIFF_BYTES]
    if len(head) >= 4 and b"\x00" in head:
        even, odd = head[0::2].count(0), head[1::2].count(0)
        if max(even, odd) >= len(head) // 4:  # ASCII text in UTF-16: every other byte is 0
            encoding = "UTF-32" if head[:4].count(0) == 3 else "UTF-16"
            raise error(f"{name}: not UTF-8 (looks like {encoding}): {fix(encoding.lower())}")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        before = data[: exc.start]
        line = before.count(b"\n") + before.count(b"\r") - before.count(b"\r\n") + 1
        line_start = max(before.rfind(b"\n"), before.rfind(b"\r")) + 1
        column = len(data[line_start : exc.start].decode("utf-8", errors="replace")) + 1
        single = _is_single_byte_text(data)
        looks = "Latin-1 / Windows-1252" if single else "binary data"
        raise error(
            f"{name}:{line}: not UTF-8 (looks like {looks}: byte 0x{data[exc.start]:02x} at "
            f"character {column} of the line): {fix('cp1252' if single else None)}"
        ) from exc


def decode_as(path: Path, data: bytes, encoding: str, error: type[PipelineError]) -> str:
    """The text of a file in a named encoding (`--encoding cp1252`); `error` at the line and
    byte where it does not decode."""
    try:
        return data.decode(encoding).removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        before = data[: exc.start]
        line = before.count(b"\n") + 1
        raise error(
            f"{printable(path)}:{line}: not {encoding}: byte 0x{data[exc.start]:02x} has no "
            f"character in it; give the file's encoding with --encoding (utf-8, cp1252, ...)"
        ) from exc


def _is_single_byte_text(data: bytes) -> bool:
    """True when the bytes read as Latin-1 / Windows-1252 text: no C0 control characters
    but line breaks and tabs."""
    return re.search(rb"[\x00-\x08\x0b\x0c\x0e-\x1f]", data[: 1 << 20]) is None


def csv_rows(
    path: Path, text: str, error: type[PipelineError]
) -> tuple[list[str], list[list[str]], list[int]]:
    """A small CSV file's header, rows and each row's line as an editor counts it. Blank
    lines and lines starting with '#' are skipped; a quoted value may span lines, but one
    still open at the end of the file is `error` at the line where it opened."""
    lines = re.split(r"\r\n|\r|\n", text)
    keep = [i for i, ln in enumerate(lines) if ln.strip() and not ln.lstrip().startswith("#")]
    reader = csv.reader(io.StringIO("\n".join(lines[i] for i in keep)), strict=True)
    records, numbers, start = [], [], 0
    try:
        for record in reader:
            numbers.append(keep[start] + 1)
            records.append(record)
            start = reader.line_num
    except csv.Error as exc:
        where = keep[start] + 1 if start < len(keep) else len(lines)
        if "end of data" in str(exc):
            raise error(
                f"{printable(path)}:{where}: a quoted value opens on this line and is still "
                "open at the end of the file: is a closing '\"' missing?"
            ) from exc
        raise error(f"{printable(path)}:{where}: not a readable CSV row: {exc}") from exc
    if not records:
        return [], [], []
    return records[0], records[1:], numbers[1:]


def write_file(path: Path, data: bytes) -> None:
    """`data` at `path`, written beside it first and renamed over it: never half written."""
    check_file_place(path)
    try:
        with atomic_file(path) as temp:
            temp.write_bytes(data)
    except OSError as exc:
        raise OutputError(f"writing {printable(path)} failed: {exc.strerror or exc}") from exc
