"""Linux Landlock, the unprivileged access control the sandbox leans on first:
a process restricts itself (and everything it later starts) to the files,
TCP ports and scopes its rules allow, and no later call can widen them.

The sandbox asks for ABI 6 (Linux 6.12) at least: file access (ABI 1-3, 5),
TCP ``bind``/``connect`` by port (ABI 4), and the scopes that stop a process
signalling any process outside its domain or connecting to an abstract Unix
socket outside it (ABI 6). Every access right the running ABI knows of is
*handled* (denied unless a rule allows it), so a right added by a later kernel
is denied too rather than silently allowed. See the kernel's
``Documentation/userspace-api/landlock.rst`` for the system calls and structs.
"""

from __future__ import annotations

import ctypes
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Final

from arena.sandbox.linux import PR_SET_NO_NEW_PRIVS, prctl, syscall

__all__ = ["MIN_ABI", "abi_version", "Ruleset", "READ", "READ_FILE_ONLY", "READ_WRITE_FILE", "ALL_FS"]

#: The oldest Landlock ABI the sandbox accepts: 6 has the signal and abstract-socket scopes.
MIN_ABI: Final = 6

# the same numbers on every architecture (the generic system call table)
_CREATE_RULESET: Final = 444
_ADD_RULE: Final = 445
_RESTRICT_SELF: Final = 446
_CREATE_RULESET_VERSION: Final = 1
_RULE_PATH_BENEATH: Final = 1
_RULE_NET_PORT: Final = 2

_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_TRUNCATE, _IOCTL_DEV = 1 << 14, 1 << 15
#: The file system rights by ABI: 1 the first thirteen, 2 REFER, 3 TRUNCATE, 5 IOCTL_DEV.
_FS_BY_ABI: Final = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 5: (1 << 16) - 1}
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1 << 0, 1 << 1

#: Read a tree and run what is in it.
READ: Final = _EXECUTE | _READ_FILE | _READ_DIR
#: Read one file (a rule on a file may name only file rights).
READ_FILE_ONLY: Final = _READ_FILE
#: Read and write one file, a device such as ``/dev/null``.
READ_WRITE_FILE: Final = _READ_FILE | _WRITE_FILE | _TRUNCATE
#: Everything, in a tree the process owns (its scratch folder).
ALL_FS: Final = _FS_BY_ABI[5]


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64), ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class _NetPortAttr(ctypes.Structure):
    _fields_ = [("allowed_access", ctypes.c_uint64), ("port", ctypes.c_uint64)]


def abi_version() -> int:
    """The running kernel's Landlock ABI version; 0 where Landlock is absent or disabled."""
    try:
        return syscall(_CREATE_RULESET, None, 0, _CREATE_RULESET_VERSION, what="landlock_create_ruleset")
    except OSError:
        return 0


def _fs_rights(abi: int) -> int:
    return _FS_BY_ABI[max(version for version in _FS_BY_ABI if version <= abi)]


class Ruleset:
    """A Landlock ruleset being built: every file right, TCP bind and connect,
    and both scopes handled; :meth:`allow_path` and :meth:`allow_connect` add
    the exceptions; :meth:`restrict_self` applies it to this process for good.

    Raises:
        OSError: Landlock is older than :data:`MIN_ABI`, or a call failed.
    """

    def __init__(self) -> None:
        abi = abi_version()
        if abi < MIN_ABI:
            raise OSError(f"Landlock ABI {abi} (need {MIN_ABI}: Linux 6.12 or later, with landlock among its LSMs)")
        self._handled = _fs_rights(abi)
        attr = _RulesetAttr(self._handled, _NET_BIND_TCP | _NET_CONNECT_TCP, _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL)
        self._fd = syscall(
            _CREATE_RULESET, ctypes.byref(attr), ctypes.sizeof(attr), 0, what="landlock_create_ruleset"
        )

    def allow_path(self, path: Path, access: int) -> None:
        """Allow ``access`` at ``path`` and beneath it (a file takes only file rights)."""
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        try:
            if not stat.S_ISDIR(os.fstat(fd).st_mode):
                access &= _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE | _IOCTL_DEV
            rule = _PathBeneathAttr(access & self._handled, fd)
            syscall(_ADD_RULE, self._fd, _RULE_PATH_BENEATH, ctypes.byref(rule), 0, what=f"landlock_add_rule {path}")
        finally:
            os.close(fd)

    def allow_paths(self, paths: Iterable[Path], access: int) -> None:
        """:meth:`allow_path` for each of ``paths`` that exists."""
        for path in paths:
            if path.exists():
                self.allow_path(path, access)

    def allow_connect(self, port: int) -> None:
        """Allow a TCP ``connect`` to ``port`` (on any address: the network namespace decides which exist)."""
        rule = _NetPortAttr(_NET_CONNECT_TCP, port)
        syscall(_ADD_RULE, self._fd, _RULE_NET_PORT, ctypes.byref(rule), 0, what=f"landlock_add_rule port {port}")

    def restrict_self(self) -> None:
        """Apply the ruleset to this process (no_new_privs first, as Landlock requires of an unprivileged one)."""
        prctl(PR_SET_NO_NEW_PRIVS, 1)
        syscall(_RESTRICT_SELF, self._fd, 0, what="landlock_restrict_self")
        os.close(self._fd)
