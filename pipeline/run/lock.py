"""The lock that keeps one run per output folder: an advisory flock on a file beside it."""

from __future__ import annotations

import os
from contextlib import suppress
from pathlib import Path


class FolderLock:
    """An advisory lock file (flock) holding its owner's process id; removed on release."""

    def __init__(self, path: Path):
        self.path = path
        self.fd: int | None = None

    def acquire(self) -> str | None:
        """Take the lock: None when taken, else the holder's process id ('' if unknown)."""
        import fcntl

        while True:
            # O_NOFOLLOW: a link planted at the lock's name is refused, never written through
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.read(fd, 32).decode("ascii", "replace").strip()
                os.close(fd)
                return holder
            try:  # the holder before us may have removed the file: lock the one at the path
                same = os.stat(self.path, follow_symlinks=False).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                try:
                    os.ftruncate(fd, 0)
                    os.write(fd, f"{os.getpid()}\n".encode())
                except BaseException:
                    # a full disk: give the lock back, or every later run here would wait on it
                    with suppress(OSError):
                        self.path.unlink()
                    os.close(fd)
                    raise
                self.fd = fd
                return None
            os.close(fd)

    def held(self) -> bool:
        """Whether some process holds this lock now (without creating its file)."""
        import fcntl

        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW)
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
