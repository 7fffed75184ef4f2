"""The few Linux system calls the sandbox needs that Python 3.11's ``os`` lacks
(``unshare``, ``mount``, ``prctl``, the ``syscall`` entry the Landlock and
seccomp modules use), called through the C library with ``ctypes``, each
raising :class:`OSError` with the call's errno, as ``os`` functions do.
Also: bringing a fresh network namespace's loopback interface up.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import platform
import socket
import struct
from typing import Final

__all__ = [
    "CLONE_NEWNS",
    "CLONE_NEWUTS",
    "CLONE_NEWIPC",
    "CLONE_NEWUSER",
    "CLONE_NEWPID",
    "CLONE_NEWNET",
    "CLONE_NEWCGROUP",
    "CLONE_NEWTIME",
    "MS_NOSUID",
    "MS_NODEV",
    "MS_NOEXEC",
    "MS_BIND",
    "MS_REC",
    "MS_PRIVATE",
    "PR_SET_PDEATHSIG",
    "PR_SET_NO_NEW_PRIVS",
    "PR_GET_SECCOMP",
    "PR_SET_SECCOMP",
    "machine",
    "syscall",
    "prctl",
    "unshare",
    "mount",
    "unmount",
    "loopback_up",
]

CLONE_NEWTIME: Final = 0x00000080
CLONE_NEWNS: Final = 0x00020000
CLONE_NEWCGROUP: Final = 0x02000000
CLONE_NEWUTS: Final = 0x04000000
CLONE_NEWIPC: Final = 0x08000000
CLONE_NEWUSER: Final = 0x10000000
CLONE_NEWPID: Final = 0x20000000
CLONE_NEWNET: Final = 0x40000000

MS_NOSUID: Final = 0x2
MS_NODEV: Final = 0x4
MS_NOEXEC: Final = 0x8
MS_BIND: Final = 0x1000
MS_REC: Final = 0x4000
MS_PRIVATE: Final = 0x40000

PR_SET_PDEATHSIG: Final = 1
PR_GET_SECCOMP: Final = 21
PR_SET_SECCOMP: Final = 22
PR_SET_NO_NEW_PRIVS: Final = 38

_MNT_DETACH: Final = 2
_SIOCGIFFLAGS: Final = 0x8913
_SIOCSIFFLAGS: Final = 0x8914
_IFF_UP: Final = 0x1

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def machine() -> str:
    """The CPU architecture as the kernel names it (``x86_64``, ``aarch64``)."""
    return platform.machine()


def _checked(result: int, what: str) -> int:
    if result == -1:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")
    return result


def syscall(number: int, *args: object, what: str) -> int:
    """A raw system call, its arguments as ctypes takes them (``what`` names it in the error)."""
    return _checked(_libc.syscall(ctypes.c_long(number), *args), what)


def prctl(option: int, arg2: int | ctypes.c_void_p = 0, arg3: int | ctypes.c_void_p = 0) -> int:
    """``prctl(option, arg2, arg3, 0, 0)``."""
    return _checked(_libc.prctl(option, arg2, arg3, 0, 0), f"prctl({option})")


def unshare(flags: int) -> None:
    """Move this process into new namespaces (a new PID namespace takes its next children)."""
    _checked(_libc.unshare(flags), "unshare")


def mount(source: str, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    """``mount(2)``; ``fstype`` and ``data`` may be none (a propagation change)."""
    _checked(
        _libc.mount(
            source.encode(),
            target.encode(),
            None if fstype is None else fstype.encode(),
            ctypes.c_ulong(flags),
            None if data is None else data.encode(),
        ),
        f"mount {fstype or 'flags'} on {target}",
    )


def unmount(target: str) -> None:
    """``umount2(target, MNT_DETACH)``."""
    _checked(_libc.umount2(target.encode(), _MNT_DETACH), f"unmount {target}")


def loopback_up() -> None:
    """Bring ``lo`` up: a new network namespace starts with it down (and nothing else)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        request = struct.pack("16sH22x", b"lo", 0)
        flags = struct.unpack("16sH22x", fcntl.ioctl(probe, _SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(probe, _SIOCSIFFLAGS, struct.pack("16sH22x", b"lo", flags | _IFF_UP))
