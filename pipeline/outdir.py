"""A run's output folder: built beside its target, swapped in whole, never over a user's files.

- One run per folder at a time: `OUT/.<key>.roofline-lock` (flock) is held from start to end.
- `OUT/<stem>` is replaced only when it is missing, empty, or a folder this tool wrote (its
  manifest.json says so) holding nothing the manifest does not list (`force` lifts that last
  condition); never when it is a file or a link, or holds an input of the run.
- The run writes into `OUT/.<key>.roofline-tmp-<pid>`. Temp folders of runs that were killed
  are removed by the next run into the same `OUT`.
- The swap is one atomic exchange (Linux `renameat2(RENAME_EXCHANGE)`), so `OUT/<stem>` never
  disappears; where the OS has no exchange, two renames (a kill between them leaves the old
  outputs in `OUT/.<key>.roofline-old-<pid>`).

`<key>` is the folder's name, or for a long name its first 31 characters and a hash, so temp
names stay short whatever the input file is called.
"""

from __future__ import annotations

import ctypes
import errno
import hashlib
import json
import os
import re
import shutil
import sys
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path

from pipeline.errors import OutputError, printable

TOOL = "roofline-pipeline"  # the manifest's "tool": how a folder of ours is recognized
KEY_LIMIT = 40
_TEMP = re.compile(r"^\.(?P<key>.+)\.roofline-(?:tmp|old)-(?P<pid>\d+)$")
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


class OutputFolder:
    """`with OutputFolder(target, inputs=...) as tmp:` write into tmp; at a clean exit tmp
    replaces target in one step, on an exception tmp is removed and target left as it was."""

    def __init__(self, target: Path, *, inputs: Sequence[Path] = (), force: bool = False):
        self.target = Path(target)
        self.parent = self.target.parent
        self.inputs = tuple(Path(p) for p in inputs)
        self.force = force
        self.key = folder_key(self.target.name)
        self.tmp = self.parent / temp_name(self.key)
        self.lock = FolderLock(self.parent / f".{self.key}.roofline-lock")
        self.made_parent = False

    def __enter__(self) -> Path:
        self.made_parent = not self.parent.exists()
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
            raise OutputError(f"cannot lock {printable(self.target)}: {exc}") from exc
        if holder is not None:
            self._drop_parent()
            who = f" (process {holder})" if holder else ""
            raise OutputError(
                f"another run is writing {printable(self.target)}{who}; wait for it to finish, "
                "or give another -o"
            )
        try:
            check_replaceable(self.target, self.inputs, self.force)
            remove_stale(self.parent, self.key)
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
        """A run that failed leaves no empty output folder it created."""
        if self.made_parent:
            with suppress(OSError):
                self.parent.rmdir()


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
    resolved = target.resolve()
    for path in inputs:
        where = Path(path).resolve()
        if where == resolved or resolved in where.parents:
            raise OutputError(
                f"{name} holds the input {printable(path)}; the tool never replaces a folder "
                "holding an input: give another -o (e.g. -o output)"
            )
    present = _files_in(target)
    if not present:
        return
    listed = our_files(target)
    if listed is None:
        raise OutputError(
            f"{name} exists and was not written by this tool (it has no manifest.json of "
            "ours); it is left as it is: give another -o, or move the folder away"
        )
    extra = sorted(present - listed)
    if extra and not force:
        shown = ", ".join(printable(p) for p in extra[:SHOWN_EXTRAS])
        more = f" and {len(extra) - SHOWN_EXTRAS} more" if len(extra) > SHOWN_EXTRAS else ""
        raise OutputError(
            f"{name} holds files this tool did not write ({shown}{more}); they would be "
            "lost: move them out, or pass --force to replace the folder anyway"
        )


def _files_in(folder: Path) -> set[str]:
    """Every file under `folder`, as paths relative to it ('/'-separated)."""
    found = set()
    for root, _, files in os.walk(folder):
        base = Path(root).relative_to(folder)
        found.update((base / f).as_posix() for f in files)
    return found


def our_files(folder: Path) -> set[str] | None:
    """The files of an output folder this tool wrote (manifest.json and what it lists), or
    None when its manifest.json is missing or not one of ours."""
    manifest = folder / "manifest.json"
    if manifest.is_symlink() or not manifest.is_file():
        return None
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("files"), list):
        return None
    if data.get("tool") != TOOL and not {"tool_version", "input_sha256"} <= data.keys():
        return None  # (manifests before "tool" was written carry these two)
    files = {"manifest.json"}
    for entry in data["files"]:
        if isinstance(entry, dict) and isinstance(entry.get("path"), str):
            files.add(entry["path"])
    return files


def remove_stale(parent: Path, key: str) -> None:
    """Remove temp folders that no run is writing: every one of `key` (whose lock this run
    holds), and others whose process is gone and whose lock is free."""
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return
    for entry in entries:
        m = _TEMP.match(entry.name)
        if m is None:
            continue
        if m["key"] != key:
            if _alive(int(m["pid"])) or FolderLock(parent / f".{m['key']}.roofline-lock").held():
                continue
        path = Path(entry.path)
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(path, ignore_errors=True)
        else:
            with suppress(OSError):
                path.unlink()


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


# ---------------------------------------------------------------- the lock


class FolderLock:
    """An advisory lock file (flock) holding its owner's process id; removed on release."""

    def __init__(self, path: Path):
        self.path = path
        self.fd: int | None = None

    def acquire(self) -> str | None:
        """Take the lock: None when taken, else the holder's process id ('' if unknown)."""
        import fcntl

        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.read(fd, 32).decode("ascii", "replace").strip()
                os.close(fd)
                return holder
            try:  # the holder before us may have removed the file: lock the one at the path
                same = os.stat(self.path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                os.ftruncate(fd, 0)
                os.write(fd, f"{os.getpid()}\n".encode())
                self.fd = fd
                return None
            os.close(fd)

    def held(self) -> bool:
        """Whether some process holds this lock now (without creating its file)."""
        import fcntl

        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        return False

    def release(self) -> None:
        if self.fd is None:
            return
        with suppress(OSError):
            self.path.unlink()
        os.close(self.fd)
        self.fd = None
