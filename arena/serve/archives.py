"""A submitted agent's archive, checked before any of it is unpacked, and
then unpacked: a ``.tar.gz`` or a ``.zip`` (known by its first bytes, not
by its name or Content-Type), holding an ACPC ``startme.sh`` at its top or
in its one top folder (as ``tar czf agent.tar.gz agent/`` makes it).

What is refused, each with one line (:class:`ArchiveError`): more than
``max_files`` entries, more than ``max_unpacked`` bytes unpacked (counted
from the headers before anything is written, and again while writing, so a
header that lies gains nothing), a path that is absolute or climbs out with
``..``, a link (symbolic or hard: a link is how an archive reaches a file
outside its folder), a device, a fifo or anything else that is not a plain
file or a folder, an encrypted zip entry, and an archive without a
``startme.sh``. A tar is then unpacked by the standard library with its
``data`` filter, a second wall behind these checks; a zip entry by entry,
as plain files only. Every folder unpacked is made readable and searchable
by every user, every file readable (executable where it was), and
``startme.sh`` executable: the sandbox runs the agent as a uid of its own,
a stranger to these files (docs/sandbox.md).

Nothing here runs the agent or knows the service: the checks are plain
functions of a file, tested one by one.
"""

from __future__ import annotations

import os
import shutil
import stat
import tarfile
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Final

from arena.sandbox import STARTME

__all__ = ["ArchiveError", "ArchiveRules", "unpack", "agent_folder", "kind_of"]

_GZIP: Final = b"\x1f\x8b"
_ZIP: Final = (b"PK\x03\x04", b"PK\x05\x06")
_CHUNK: Final = 1 << 16
#: A zip entry's Unix file type lives in the top 16 bits of its external attributes, when a Unix system made it.
_ZIP_UNIX: Final = 3
_MIB: Final = 1 << 20


class ArchiveError(Exception):
    """An archive refused; ``str()`` is the one line the user reads (a 400)."""


@dataclass(frozen=True)
class ArchiveRules:
    """How large an archive may be: its entries (files and folders) and the
    bytes its files hold once unpacked. (The upload's own size is the
    service's ``max_agent_bytes``, enforced while it is received.)"""

    max_files: int = 2000
    max_unpacked: int = 512 * _MIB


def kind_of(head: bytes) -> str | None:
    """``"tar.gz"`` or ``"zip"`` by an archive's first bytes; None: neither."""
    if head.startswith(_GZIP):
        return "tar.gz"
    if head.startswith(_ZIP):
        return "zip"
    return None


def _parts(name: str) -> tuple[str, ...]:
    """An entry's path as folders and a name (``./`` and empty parts dropped).

    Raises:
        ArchiveError: the path is absolute or climbs out of the archive.
    """
    if name.startswith(("/", "\\")) or PurePosixPath(name).is_absolute() or (len(name) > 1 and name[1] == ":"):
        raise ArchiveError(f"the archive holds an absolute path: {name[:200]!r}")
    parts = tuple(part for part in name.replace("\\", "/").split("/") if part not in ("", "."))
    if ".." in parts:
        raise ArchiveError(f"the archive holds a path that climbs out of it: {name[:200]!r}")
    return parts


def _too_many(rules: ArchiveRules) -> ArchiveError:
    return ArchiveError(f"the archive holds over {rules.max_files} files and folders")


def _too_large(rules: ArchiveRules) -> ArchiveError:
    return ArchiveError(f"the archive unpacks to over {rules.max_unpacked} bytes")


def _tar_members(archive: tarfile.TarFile, rules: ArchiveRules) -> list[tarfile.TarInfo]:
    """The members, each checked as its header is read: the reading stops at
    the first refused (a gzip that inflates without end is read no further
    than the header past the limits).

    Raises:
        ArchiveError: the first member refused.
    """
    members: list[tarfile.TarInfo] = []
    size = 0
    for member in archive:
        members.append(member)
        size += member.size if member.isreg() else 0
        if len(members) > rules.max_files:
            raise _too_many(rules)
        if size > rules.max_unpacked:
            raise _too_large(rules)
        _parts(member.name)
        if member.issym() or member.islnk():
            raise ArchiveError(f"the archive holds a link (links are refused): {member.name[:200]!r}")
        if member.ischr() or member.isblk() or member.isfifo():
            raise ArchiveError(f"the archive holds a device or a fifo: {member.name[:200]!r}")
        if not (member.isreg() or member.isdir()) or member.issparse():
            raise ArchiveError(f"the archive holds something that is not a plain file or a folder: {member.name[:200]!r}")
    return members


def _unpack_tar(path: Path, into: Path, rules: ArchiveRules) -> None:
    with tarfile.open(path, "r:gz") as archive:
        members = _tar_members(archive, rules)
        archive.extractall(into, members=members, filter="data")


def _zip_entries(archive: zipfile.ZipFile, rules: ArchiveRules) -> list[zipfile.ZipInfo]:
    """The entries, each checked.

    Raises:
        ArchiveError: the first entry refused.
    """
    entries = archive.infolist()
    if len(entries) > rules.max_files:
        raise _too_many(rules)
    if sum(entry.file_size for entry in entries) > rules.max_unpacked:
        raise _too_large(rules)
    for entry in entries:
        _parts(entry.filename)
        kind = stat.S_IFMT(entry.external_attr >> 16) if entry.create_system == _ZIP_UNIX else 0
        if kind == stat.S_IFLNK:
            raise ArchiveError(f"the archive holds a link (links are refused): {entry.filename[:200]!r}")
        if kind in (stat.S_IFCHR, stat.S_IFBLK, stat.S_IFIFO):
            raise ArchiveError(f"the archive holds a device or a fifo: {entry.filename[:200]!r}")
        if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
            raise ArchiveError(f"the archive holds something that is not a plain file or a folder: {entry.filename[:200]!r}")
        if entry.flag_bits & 0x1:
            raise ArchiveError(f"the archive holds an encrypted file: {entry.filename[:200]!r}")
    return entries


def _unpack_zip(path: Path, into: Path, rules: ArchiveRules) -> None:
    """Each entry as a plain file or folder (nothing else is ever made),
    counting the bytes as they are written."""
    written = 0
    with zipfile.ZipFile(path) as archive:
        for entry in _zip_entries(archive, rules):
            target = into.joinpath(*_parts(entry.filename))
            if entry.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(entry) as source, open(target, "wb") as sink:
                written += _copy(source, sink, rules.max_unpacked - written)
            if entry.create_system == _ZIP_UNIX and (entry.external_attr >> 16) & 0o100:
                target.chmod(0o755)


def _copy(source: IO[bytes], sink: IO[bytes], room: int) -> int:
    """Copy ``source`` into ``sink``; the bytes copied.

    Raises:
        ArchiveError: more than ``room`` bytes.
    """
    copied = 0
    while chunk := source.read(_CHUNK):
        copied += len(chunk)
        if copied > room:
            raise ArchiveError("the archive unpacks to more bytes than its headers say")
        sink.write(chunk)
    return copied


def _open_to_all(root: Path) -> None:
    """Folders ``rwxr-xr-x``, files ``rw-r--r--`` (``rwxr-xr-x`` when their owner could run them)."""
    root.chmod(0o755)
    for folder, folders, files in os.walk(root):
        for name in folders:
            Path(folder, name).chmod(0o755)
        for name in files:
            path = Path(folder, name)
            path.chmod(0o755 if path.stat().st_mode & stat.S_IXUSR else 0o644)


def agent_folder(root: Path) -> Path:
    """The folder of an unpacked archive that holds ``startme.sh``: its top,
    or its one top folder.

    Raises:
        ArchiveError: neither holds one.
    """
    if (root / STARTME).is_file():
        return root
    entries = list(root.iterdir())
    if len(entries) == 1 and entries[0].is_dir() and (entries[0] / STARTME).is_file():
        return entries[0]
    raise ArchiveError(f"the archive has no {STARTME} at its top (nor in its one top folder)")


def unpack(archive: Path, into: Path, rules: ArchiveRules = ArchiveRules()) -> Path:
    """Check ``archive`` and unpack it into ``into`` (a folder made here,
    which must not exist); the agent's folder (the one with ``startme.sh``,
    made executable). On any refusal ``into`` is removed.

    Raises:
        ArchiveError: the archive is refused; the message says why.
    """
    with open(archive, "rb") as file:
        kind = kind_of(file.read(4))
    if kind is None:
        raise ArchiveError("not a .tar.gz or .zip archive")
    into.mkdir(mode=0o700)
    try:
        try:
            if kind == "zip":
                _unpack_zip(archive, into, rules)
            else:
                _unpack_tar(archive, into, rules)
        except (tarfile.TarError, zipfile.BadZipFile, zlib.error, EOFError) as problem:
            raise ArchiveError(f"not a readable .{kind} archive: {str(problem)[:200]}") from None
        except OSError as problem:
            raise ArchiveError(f"cannot unpack the archive: {problem.strerror or problem}") from None
        _open_to_all(into)
        folder = agent_folder(into)
        (folder / STARTME).chmod(0o755)
    except BaseException:
        shutil.rmtree(into, ignore_errors=True)
        raise
    return folder
