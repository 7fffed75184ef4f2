"""The seccomp filter of a sandboxed agent: a short classic-BPF program that
refuses the system calls an agent never needs and that either widen what it
can reach or open the kernel's rarely used corners.

* ``socket`` only for ``AF_INET`` and ``AF_INET6`` (``EAFNOSUPPORT`` else): no
  Unix socket to a service's path (Landlock does not govern connecting to one),
  no netlink, no raw packets. ``socketpair`` stays (it reaches nobody).
* no new namespaces (``unshare``, ``setns``, ``clone`` with a namespace flag;
  ``clone3``, whose flags sit behind a pointer BPF cannot read, answers
  ``ENOSYS`` so that the C library falls back to ``clone``): an unprivileged
  user namespace would hand the agent capabilities over new mounts and devices;
* no ``ptrace`` or ``process_vm_*`` (other processes' memory), no ``io_uring``
  (its operations never pass through this filter), no ``bpf``,
  ``perf_event_open``, ``userfaultfd``, keyrings, mounts, module or kexec loads,
  ``open_by_handle_at``.

Anything else is allowed: the filter narrows the kernel surface; Landlock,
the namespaces, the uid and the rlimits (:mod:`arena.sandbox.launch`) do the
confining. A foreign architecture's system call (x32 on x86-64, a 32-bit
binary) kills the process: its numbers would slip past the table.
"""

from __future__ import annotations

import ctypes
import errno
import socket
import struct
from typing import Final

from arena.sandbox.linux import (
    CLONE_NEWCGROUP,
    CLONE_NEWIPC,
    CLONE_NEWNET,
    CLONE_NEWNS,
    CLONE_NEWPID,
    CLONE_NEWTIME,
    CLONE_NEWUSER,
    CLONE_NEWUTS,
    PR_SET_NO_NEW_PRIVS,
    PR_SET_SECCOMP,
    machine,
    prctl,
)

__all__ = ["supported", "install"]

_SECCOMP_MODE_FILTER: Final = 2
_RET_KILL_PROCESS: Final = 0x80000000
_RET_ERRNO: Final = 0x00050000
_RET_ALLOW: Final = 0x7FFF0000
_LD_ABS_W, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
_NR, _ARCH, _ARG0 = 0, 4, 16  # offsets in struct seccomp_data (the low word of arg 0, little-endian)
_X32_BIT: Final = 0x40000000
_NAMESPACES: Final = (
    CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWCGROUP | CLONE_NEWTIME
)

_DENIED: Final = (
    "ptrace process_vm_readv process_vm_writev io_uring_setup io_uring_enter io_uring_register bpf perf_event_open "
    "userfaultfd keyctl add_key request_key mount umount2 pivot_root unshare setns kexec_load kexec_file_load "
    "init_module finit_module delete_module open_by_handle_at name_to_handle_at open_tree move_mount fsopen "
    "fsconfig fsmount fspick mount_setattr"
).split()


class _Arch:
    def __init__(self, audit: int, numbers: dict[str, int], x32: bool) -> None:
        self.audit, self.numbers, self.x32 = audit, numbers, x32


_NEW_MOUNT_API: Final = {"open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433}
_GENERIC_NEW: Final = {"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "clone3": 435, "mount_setattr": 442}
_ARCHES: Final = {
    "x86_64": _Arch(
        0xC000003E,
        {
            "socket": 41, "clone": 56, "ptrace": 101, "pivot_root": 155, "mount": 165, "umount2": 166,
            "init_module": 175, "delete_module": 176, "kexec_load": 246, "add_key": 248, "request_key": 249,
            "keyctl": 250, "unshare": 272, "perf_event_open": 298, "name_to_handle_at": 303,
            "open_by_handle_at": 304, "setns": 308, "process_vm_readv": 310, "process_vm_writev": 311,
            "finit_module": 313, "kexec_file_load": 320, "bpf": 321, "userfaultfd": 323,
            **_NEW_MOUNT_API, **_GENERIC_NEW,
        },
        x32=True,
    ),
    "aarch64": _Arch(
        0xC00000B7,
        {
            "socket": 198, "clone": 220, "ptrace": 117, "pivot_root": 41, "mount": 40, "umount2": 39,
            "init_module": 105, "delete_module": 106, "kexec_load": 104, "add_key": 217, "request_key": 218,
            "keyctl": 219, "unshare": 97, "perf_event_open": 241, "name_to_handle_at": 264,
            "open_by_handle_at": 265, "setns": 268, "process_vm_readv": 270, "process_vm_writev": 271,
            "finit_module": 273, "kexec_file_load": 294, "bpf": 280, "userfaultfd": 282,
            **_NEW_MOUNT_API, **_GENERIC_NEW,
        },
        x32=False,
    ),
}


def supported() -> bool:
    """Whether this machine's architecture has a filter here."""
    return machine() in _ARCHES


def _program(arch: _Arch) -> list[tuple[int, int, int, int]]:
    """The filter as (code, jump if true, jump if false, k), jumps as relative offsets."""
    allow, deny, nosys, kill, no_family = _RET_ALLOW, _RET_ERRNO | errno.EPERM, _RET_ERRNO | errno.ENOSYS, _RET_KILL_PROCESS, _RET_ERRNO | errno.EAFNOSUPPORT
    # (code, true label, false label, k) with labels resolved below
    code: list[tuple[int, str | None, str | None, int]] = [(_LD_ABS_W, None, None, _ARCH), (_JEQ, None, "kill", arch.audit)]
    code.append((_LD_ABS_W, None, None, _NR))
    if arch.x32:
        code.append((_JGE, "kill", None, _X32_BIT))
    code += [(_JEQ, "deny", None, arch.numbers[name]) for name in _DENIED]
    code += [
        (_JEQ, "nosys", None, arch.numbers["clone3"]),
        (_JEQ, "socket", None, arch.numbers["socket"]),
        (_JEQ, "clone", None, arch.numbers["clone"]),
        (_RET, None, None, allow),
    ]
    labels = {"socket": len(code)}
    code += [
        (_LD_ABS_W, None, None, _ARG0),
        (_JEQ, "allow", None, socket.AF_INET),
        (_JEQ, "allow", None, socket.AF_INET6),
        (_RET, None, None, no_family),
    ]
    labels["clone"] = len(code)
    code += [(_LD_ABS_W, None, None, _ARG0), (_JSET, "deny", None, _NAMESPACES)]
    for label, value in (("allow", allow), ("deny", deny), ("nosys", nosys), ("kill", kill)):
        labels[label] = len(code)
        code.append((_RET, None, None, value))

    def offset(at: int, label: str | None) -> int:
        return 0 if label is None else labels[label] - at - 1

    return [(op, offset(at, true), offset(at, false), k) for at, (op, true, false, k) in enumerate(code)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install() -> None:
    """Install the filter on this process and all it later starts (no_new_privs first).

    Raises:
        OSError: no filter for this architecture, or the kernel refused it.
    """
    arch = _ARCHES.get(machine())
    if arch is None:
        raise OSError(f"no seccomp filter for the {machine()} architecture")
    program = _program(arch)
    raw = ctypes.create_string_buffer(b"".join(struct.pack("HBBI", *instruction) for instruction in program))
    fprog = _SockFprog(len(program), ctypes.cast(raw, ctypes.c_void_p))
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    prctl(PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.c_void_p(ctypes.addressof(fprog)))
