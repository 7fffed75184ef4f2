"""One dealer per match name: an exclusive lock on ``<matchName>.lock``.

Two dealers given the same match name (and directory) would write the same
``.log``, ``.tlog`` and records; the second used to truncate the first one's
files before it failed on a busy port. The dealer now takes this lock before it
touches anything and refuses the match if another process holds it.

``flock`` locks belong to the open file, so the kernel releases them when the
holder exits, however it exits; a ``.lock`` file left behind by a killed dealer
stops nobody. The holder unlinks the file when it is done. Because a waiter
may have opened the file just before that unlink, whoever takes the lock checks
that the path still names the file it locked, and tries again if not.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

__all__ = ["MatchLock", "MatchInUseError"]


class MatchInUseError(Exception):
    """Another process holds the lock; :attr:`holder` is its process id as it
    wrote it into the file (empty if it had not yet)."""

    def __init__(self, path: Path, holder: str) -> None:
        super().__init__(f"{path} is held by process {holder or '?'}")
        self.holder = holder


class MatchLock:
    """The held lock on ``path``; :meth:`release` gives it up and removes the file."""

    def __init__(self, path: Path) -> None:
        """Take the lock without waiting. Raises :class:`MatchInUseError` if it is
        held, ``OSError`` if the file cannot be created."""
        self.path = path
        while True:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.read(fd, 32).decode("ascii", "replace").strip()
                os.close(fd)
                raise MatchInUseError(path, holder) from None
            except BaseException:
                os.close(fd)
                raise
            try:
                same = os.stat(path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)  # the holder removed it as we opened it: lock the new one
        self._fd = fd
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())

    def release(self) -> None:
        """Remove the file, then unlock (in that order, so nobody locks a file
        that is about to disappear without noticing)."""
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
        os.close(self._fd)
