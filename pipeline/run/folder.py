"""A run's output folder: built beside its target, swapped in whole, never over a user's files.

- One run per folder at a time: `OUT/.<key>.roofline-lock` (flock) is held from start to end.
- `OUT/<stem>` is replaced only when it is missing, empty, or a folder this tool wrote (its
  manifest.json says so) holding exactly what the manifest lists, unchanged (`force` lifts
  that last condition); never when it is a file or a link, or holds an input of the run.
- The run writes into `OUT/.<key>.roofline-tmp-<pid>`. Temp folders of runs that were killed,
  and their free lock files, are removed by the next run into the same `OUT`.
- The swap is one atomic exchange (Linux `renameat2(RENAME_EXCHANGE)`), so `OUT/<stem>` never
  disappears; where the OS has no exchange, two renames, and a kill between them leaves the
  old outputs in `OUT/.<key>.roofline-old-<pid>`, which the next run puts back first.

`<key>` is the folder's name, or for a long name its first 31 characters and a hash, so temp
names stay short whatever the input file is called.
"""

from __future__ import annotations

import ctypes
import errno
import hashlib
import os
import re
import shutil
import sys
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path

from pipeline.errors import OutputError, printable
from pipeline.run.lock import FolderLock
from pipeline.run.manifest import read_manifest
from pipeline.textfile import file_sha256

KEY_LIMIT = 40
_TEMP = re.compile(r"^\.(?P<key>.+)\.roofline-(?P<kind>tmp|old)-(?P<pid>\d+)$")
_LOCK = re.compile(r"^\.(?P<key>.+)\.roofline-lock$")
SHOWN_EXTRAS = 5


def folder_key(name: str) -> str:
    """The short name of an output folder in its lock and temp names."""
    if len(name) <= KEY_LIMIT:
        return name
    digest = hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()[:8]
    return f"{name[:31]}~{digest}"


def temp_name(key: str, pid: int | None = None) -> str:
    """A temp folder's (or file's) name for the folder `key`, owned by process `pid`."""
    return f".{key}.roofline-tmp-{os.getpid() if pid is None else pid}"


def lock_name(key: str) -> str:
    return f".{key}.roofline-lock"


class OutputFolder:
    """`with OutputFolder(target, inputs=...) as tmp:` write into tmp; at a clean exit tmp
    replaces target in one step, on an exception tmp is removed and target left as it was."""

    def __init__(self, target: Path, *, inputs: Sequence[Path] = (), force: bool = False):
        # absolute, so that "." or "sub/.." has a real name and parent (lock and temp beside it)
        self.target = Path(os.path.abspath(target))
        _check_not_current(self.target, Path(target))
        self.parent = self.target.parent
        self.inputs = tuple(Path(p) for p in inputs)
        self.force = force
        self.key = folder_key(self.target.name)
        self.tmp = self.parent / temp_name(self.key)
        self.lock = FolderLock(self.parent / lock_name(self.key))
        self.made: Path | None = None  # the first folder of the parent's path this run made

    def __enter__(self) -> Path:
        self.made = _first_missing(self.parent)
        try:
            self.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(
                f"cannot create output folder {printable(self.parent)}: {exc}"
            ) from exc
        try:
            holder = self.lock.acquire()
        except OSError as exc:
            self._drop_parent()
            raise OutputError(
                f"cannot lock {printable(self.target)}: {exc.strerror or exc}"
            ) from exc
        if holder is not None:
            self._drop_parent()
            who = f" (process {holder})" if holder else ""
            raise OutputError(
                f"another run is writing {printable(self.target)}{who}; wait for it to finish, "
                "or give another -o"
            )
        try:
            remove_stale(self.parent, self.key, self.target)
            check_replaceable(self.target, self.inputs, self.force)
            self.tmp.mkdir()
        except BaseException as exc:
            self._release()
            if isinstance(exc, OSError):
                raise OutputError(f"cannot prepare {printable(self.target)}: {exc}") from exc
            raise
        return self.tmp

    def __exit__(self, exc_type, exc, tb) -> bool:
        try:
            if exc_type is not None:
                shutil.rmtree(self.tmp, ignore_errors=True)
                if isinstance(exc, OSError):
                    raise OutputError(f"writing {printable(self.target)} failed: {exc}") from exc
                return False
            try:
                check_replaceable(self.target, self.inputs, self.force)  # changed meanwhile?
                swap_in(self.tmp, self.target, self.key)
            except BaseException as err:
                shutil.rmtree(self.tmp, ignore_errors=True)
                if isinstance(err, OSError):
                    raise OutputError(
                        f"cannot move outputs into {printable(self.target)}: {err}"
                    ) from err
                raise
            return False
        finally:
            self._release(failed=exc_type is not None)

    def _release(self, failed: bool = True) -> None:
        self.lock.release()
        if failed:
            self._drop_parent()

    def _drop_parent(self) -> None:
        """A run that failed leaves no empty output folders it created."""
        if self.made is None:
            return
        folder = self.parent
        while True:
            try:
                folder.rmdir()
            except OSError:
                return
            if folder == self.made:
                return
            folder = folder.parent


def _check_not_current(target: Path, given: Path) -> None:
    """OutputError when `target` is the working folder or holds it: replacing it would leave
    this process (a shell, a notebook) in a folder that no longer exists."""
    try:
        here = Path(os.getcwd())
    except OSError:
        return
    if target == here or target in here.parents:
        where = "the current folder" if target == here else "a folder holding the current one"
        raise OutputError(
            f"{printable(given)} is {where}; an output folder is replaced as a whole, which "
            "would pull the folder from under this process: write to another folder (e.g. "
            "'output')"
        )


def _first_missing(path: Path) -> Path | None:
    """The outermost folder of `path` that does not exist yet (None: it all exists)."""
    missing = None
    for folder in (path, *path.parents):
        if folder.exists():
            break
        missing = folder
    return missing


def check_replaceable(target: Path, inputs: Sequence[Path], force: bool) -> None:
    """OutputError unless `target` may be replaced by a run's outputs (see the module)."""
    name = printable(target)
    if not os.path.lexists(target):
        return
    if target.is_symlink():
        raise OutputError(
            f"{name} is a symbolic link; the tool only replaces folders it wrote: remove the "
            "link, or give another -o"
        )
    if not target.is_dir():
        raise OutputError(
            f"{name} is a file, not an output folder; the tool will not replace it: move it, "
            "or give another -o"
        )
    held = _held_input(target, inputs)
    if held is not None:
        raise OutputError(
            f"{name} holds the input {printable(held)}; the tool never replaces a folder "
            "holding an input: give another -o (e.g. -o output)"
        )
    if _empty(target):
        return
    manifest = read_manifest(target)  # before any walk: a folder not ours is never walked
    if manifest is None:
        raise OutputError(
            f"{name} exists and was not written by this tool (it has no manifest.json of "
            "ours); it is left as it is: give another -o, or move the folder away"
        )
    extra = sorted(_entries(target) - _ours(target, manifest))
    if extra and not force:
        shown = ", ".join(printable(p) for p in extra[:SHOWN_EXTRAS])
        more = f" and {len(extra) - SHOWN_EXTRAS} more" if len(extra) > SHOWN_EXTRAS else ""
        raise OutputError(
            f"{name} holds files this tool did not write, or changed since ({shown}{more}); "
            "they would be lost: move them out, or pass --force to replace the folder anyway"
        )


def _held_input(target: Path, inputs: Sequence[Path]) -> Path | None:
    """An input inside `target`, by its resolved path or its path as given (a link)."""
    places = {target.resolve(), Path(os.path.abspath(target))}
    for path in inputs:
        for where in (Path(path).resolve(), Path(os.path.abspath(path))):
            if where in places or places & set(where.parents):
                return Path(path)
    return None


def _empty(folder: Path) -> bool:
    try:
        with os.scandir(folder) as entries:
            return next(entries, None) is None
    except OSError as err:
        raise OutputError(f"cannot read {printable(folder)}: {err.strerror}") from err


def _entries(folder: Path) -> set[str]:
    """Every entry under `folder` (files, folders, links; links not followed), as relative
    '/'-paths; OutputError when a subfolder cannot be read."""

    def fail(err: OSError) -> None:
        raise OutputError(f"cannot read {printable(err.filename)}: {err.strerror}")

    found = set()
    for root, dirs, files in os.walk(folder, onerror=fail):
        base = Path(root).relative_to(folder)
        found.update((base / f).as_posix() for f in (*dirs, *files))
    return found


def _ours(folder: Path, manifest: dict) -> set[str]:
    """The entries the manifest lists (and their folders), unchanged since it was written."""
    ours = {"manifest.json"}
    for entry in manifest["files"]:
        path = entry.get("path") if isinstance(entry, dict) else None
        if not isinstance(path, str) or not _unchanged(folder / path, entry):
            continue
        ours.add(path)
        ours.update(p.as_posix() for p in Path(path).parents if p != Path("."))
    return ours


def _unchanged(path: Path, entry: dict) -> bool:
    try:
        info = os.lstat(path)
    except OSError:
        return True  # gone: nothing of the user's to lose
    if not path.is_file() or path.is_symlink() or info.st_size != entry.get("bytes"):
        return False
    if entry.get("mtime_ns") == info.st_mtime_ns:
        return True
    return entry.get("sha256") == file_sha256(path)


def remove_stale(parent: Path, key: str, target: Path) -> None:
    """Clean up after killed runs: put back the old outputs a kill left between two renames
    (no exchange), then remove temp folders no run is writing (every one of `key`, whose
    lock this run holds; others whose process is gone and whose lock is free) and free locks."""
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return
    for entry in entries:
        m = _TEMP.match(entry.name)
        if m and m["key"] == key and m["kind"] == "old" and not os.path.lexists(target):
            os.rename(entry.path, target)
    for entry in entries:
        m = _TEMP.match(entry.name)
        if m is not None:
            if m["key"] != key and (_alive(int(m["pid"])) or _locked(parent, m["key"])):
                continue
            path = Path(entry.path)
            if not os.path.lexists(path):
                continue
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(path, ignore_errors=True)
            else:
                with suppress(OSError):
                    path.unlink()
        elif (m := _LOCK.match(entry.name)) and m["key"] != key and not _locked(parent, m["key"]):
            with suppress(OSError):
                Path(entry.path).unlink()  # a run that was killed left it


def _locked(parent: Path, key: str) -> bool:
    return FolderLock(parent / lock_name(key)).held()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


# ---------------------------------------------------------------- the swap

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def _renameat2():
    """libc's renameat2 (Linux, glibc 2.28+), or None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn


def exchange(a: Path, b: Path) -> bool:
    """Swap two existing paths in one atomic step; False when the OS or file system cannot."""
    fn = _renameat2()
    if fn is None:
        return False
    if fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def swap_in(tmp: Path, target: Path, key: str) -> None:
    """Put `tmp` at `target`; the old `target`, if any, is removed after the swap."""
    if not os.path.lexists(target):
        os.rename(tmp, target)
        return
    if exchange(tmp, target):
        shutil.rmtree(tmp, ignore_errors=True)  # tmp now holds the old outputs
        return
    old = target.parent / f".{key}.roofline-old-{os.getpid()}"
    os.rename(target, old)
    try:
        os.rename(tmp, target)
    except OSError:
        os.rename(old, target)
        raise
    shutil.rmtree(old, ignore_errors=True)
