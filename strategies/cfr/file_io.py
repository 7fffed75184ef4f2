"""Header-and-arrays files: the one writer and the one bounded reader behind
strategy files (:mod:`strategies.cfr.strategy_file`) and cache files
(:mod:`strategies.cfr.abstraction.cache_files`).

A file is two msgpack objects in a row: a header map, then a map from array
name to ``{"dtype", "shape", "data"}`` (raw little-endian bytes, C order).
:func:`write_file` replaces the target atomically (:func:`atomic_output`: a
temporary file in the same directory, flushed to disk, then ``os.replace``), so
a reader never sees half a file, nor a crash an empty one: an interrupted
solve's checkpoint is the old file or the new one.

Reading treats the file as untrusted. :class:`HeaderFile` reads the header
alone, under the small :data:`HEADER_LIMITS`, so a caller checks it (a schema:
:func:`check_fields`) before anything expensive happens; only then are the
arrays read, under limits derived from the file's size (no msgpack object can
claim more bytes than the file holds), and each array's claimed dtype and shape
is checked (:data:`ARRAY_DTYPES`, at most :data:`MAX_DIMS` dimensions, exactly
``prod(shape) * itemsize`` bytes of data, and whatever the caller expects)
before any array is made. Every failure is a :class:`FileFormatError` (the
caller's subclass) with a one-line message that names the file.
"""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Any

import msgpack
import numpy as np
import numpy.typing as npt

from poker.excerpt import quote

__all__ = [
    "ARRAY_DTYPES",
    "HEADER_LIMITS",
    "MAX_ARRAYS",
    "MAX_DIMS",
    "Field",
    "FileFormatError",
    "HeaderFile",
    "atomic_output",
    "check_fields",
    "pack_array",
    "show",
    "write_file",
]


class FileFormatError(ValueError):
    """A file that is not a readable header-and-arrays file, or whose header or
    arrays are not what its reader expects. The message is one line naming the file."""


@dataclass(frozen=True)
class UnpackLimits:
    """msgpack :class:`msgpack.Unpacker` limits (bytes for buffer/str/bin, items for array/map)."""

    buffer: int
    str_len: int
    bin_len: int
    array_len: int
    map_len: int


#: The header: a few hundred bytes in practice (a game definition is ~300, a PCS
#: sampler state ~1 KB). 1 MiB in all, strings up to 64 KiB, no binary data,
#: lists up to 4096 items and maps up to 256 keys.
HEADER_LIMITS = UnpackLimits(buffer=1 << 20, str_len=1 << 16, bin_len=0, array_len=4096, map_len=256)
#: At most this many arrays in a file (strategy files hold 3, cache files up to 8).
MAX_ARRAYS = 64
#: At most this many dimensions per array (numpy's own limit is 64; ours use 1-3).
MAX_DIMS = 8
#: The dtypes an array may claim (plain little-endian numbers; never objects,
#: records or sub-arrays).
ARRAY_DTYPES = frozenset(
    np.dtype(code).str for code in ("<f8", "<f4", "<i8", "<i4", "<i2", "i1", "<u8", "<u4", "<u2", "u1", "?")
)


def show(value: Any, width: int = 40) -> str:
    """``repr(value)`` cut after ``width`` characters, saying how many were cut
    (error messages quote untrusted values; :func:`poker.excerpt.quote`, narrower)."""
    return quote(value, width)


def pack_array(array: npt.NDArray[Any]) -> dict[str, Any]:
    """``{"dtype", "shape", "data"}`` of ``array``: raw little-endian bytes in C order."""
    little = np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<"), copy=False)
    return {"dtype": little.dtype.str, "shape": list(array.shape), "data": little.tobytes()}


def _claim(packed: Any) -> tuple[np.dtype[Any], tuple[int, ...], bytes]:
    """The dtype, shape and data an array map claims, checked against one another.

    Raises:
        ValueError: a message saying what is wrong (callers name the file and array).
    """
    if not isinstance(packed, dict) or set(packed) != {"dtype", "shape", "data"}:
        raise ValueError("not a {dtype, shape, data} map")
    code, shape, data = packed["dtype"], packed["shape"], packed["data"]
    if not isinstance(code, str) or code not in ARRAY_DTYPES:
        raise ValueError(f"dtype {show(code)} is not one of {', '.join(sorted(ARRAY_DTYPES))}")
    if not isinstance(shape, list) or len(shape) > MAX_DIMS:
        raise ValueError(f"shape {show(shape)} is not a list of at most {MAX_DIMS} sizes")
    if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape):
        raise ValueError(f"shape {show(shape)} holds something other than non-negative whole numbers")
    if not isinstance(data, bytes):
        raise ValueError("its data is not binary")
    dtype = np.dtype(code)
    claimed = math.prod(shape) * dtype.itemsize  # Python ints: no overflow
    if claimed != len(data):
        raise ValueError(f"shape {show(shape)} of {dtype.name} needs {claimed} bytes, the file holds {len(data)}")
    return dtype, tuple(shape), data


def write_file(path: Path, header: Mapping[str, Any], arrays: Mapping[str, npt.NDArray[Any]]) -> None:
    """Write ``header`` (with ``arrays``: the sorted array names added) and the
    arrays to ``path`` atomically; its directory is created if needed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_output(path) as out:
        out.write(msgpack.packb({**header, "arrays": sorted(arrays)}, use_bin_type=True))
        out.write(msgpack.packb({name: pack_array(a) for name, a in arrays.items()}, use_bin_type=True))


@contextmanager
def atomic_output(path: Path) -> Iterator[IO[bytes]]:
    """A binary stream whose bytes replace ``path`` whole when the block ends: a
    temporary file in the same directory, flushed to disk, then ``os.replace``.
    An error or a Ctrl-C inside the block leaves the old file (and no temporary)."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            yield out
            out.flush()
            os.fsync(out.fileno())  # the data is on disk before the name points at it
        os.chmod(temporary, 0o644)  # mkstemp makes it private; these files are not secret
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _unpacker(stream: IO[bytes], limits: UnpackLimits) -> msgpack.Unpacker:
    return msgpack.Unpacker(
        stream,
        raw=False,
        read_size=min(1 << 16, limits.buffer),
        max_buffer_size=limits.buffer,
        max_str_len=limits.str_len,
        max_bin_len=limits.bin_len,
        max_array_len=limits.array_len,
        max_map_len=limits.map_len,
        max_ext_len=0,
    )


def _unpack_error(error: Exception) -> str:
    if isinstance(error, msgpack.OutOfData):
        return "truncated"
    if isinstance(error, msgpack.BufferFull):
        return "an object bigger than the limit"
    return show(str(error) or type(error).__name__, 80)


#: ``expect(name, dtype, shape)``: None if the array fits, else what is wrong.
ArrayCheck = Callable[[str, np.dtype[Any], tuple[int, ...]], str | None]


class HeaderFile:
    """An open header-and-arrays file whose header has been read (under
    :data:`HEADER_LIMITS`) and not yet trusted; :meth:`arrays` reads the rest.
    Use as a context manager. ``error`` is the :class:`FileFormatError`
    subclass raised; ``what`` names the kind of file in messages."""

    def __init__(self, path: str | Path, error: type[FileFormatError], what: str) -> None:
        self.path = Path(path)
        self.error = error
        self.what = what
        self._stream = open(self.path, "rb")  # noqa: SIM115 (closed by close())
        try:
            self.size = os.fstat(self._stream.fileno()).st_size
            unpacker = _unpacker(self._stream, HEADER_LIMITS)
            try:
                self.header: Any = unpacker.unpack()
            except (msgpack.UnpackException, ValueError) as error_:
                raise self.fail(f"not a {what} ({_unpack_error(error_)})") from None
            self._offset = unpacker.tell()
        except BaseException:
            self._stream.close()
            raise

    def fail(self, problem: str) -> FileFormatError:
        """The error to raise: ``"PATH: problem"`` on one line."""
        return self.error(f"{self.path}: {' '.join(problem.split())}")

    def arrays(self, names: list[str], expect: ArrayCheck | None = None) -> dict[str, npt.NDArray[Any]]:
        """The arrays, which must be exactly ``names``; each claim is checked
        (and by ``expect``) before its array is made. Nothing may follow them.
        The limits: the buffer, strings and binaries up to the file's size, at
        most :data:`MAX_ARRAYS` arrays and :data:`MAX_DIMS` dimensions."""
        size = max(self.size, 1)
        limits = UnpackLimits(buffer=size, str_len=min(size, 1 << 10), bin_len=size, array_len=MAX_DIMS, map_len=MAX_ARRAYS)
        self._stream.seek(self._offset)
        unpacker = _unpacker(self._stream, limits)
        try:
            packed = unpacker.unpack()
        except (msgpack.UnpackException, ValueError) as error:
            raise self.fail(f"the arrays are damaged ({_unpack_error(error)})") from None
        try:
            unpacker.unpack()
        except msgpack.OutOfData:
            pass
        except (msgpack.UnpackException, ValueError):
            raise self.fail("bytes that are not msgpack follow the arrays") from None
        else:
            raise self.fail("more data follows the arrays")
        if not isinstance(packed, dict) or sorted(packed) != sorted(names):
            found = sorted(packed) if isinstance(packed, dict) else type(packed).__name__
            raise self.fail(f"the arrays are {show(found, 80)}; the header lists {show(sorted(names), 80)}")
        claims = {}
        for name, value in packed.items():
            try:
                claims[name] = _claim(value)
            except ValueError as error:
                raise self.fail(f"array {show(name)}: {error}") from None
            problem = None if expect is None else expect(name, claims[name][0], claims[name][1])
            if problem is not None:
                raise self.fail(f"array {show(name)}: {problem}")
        return {
            name: np.frombuffer(data, dtype=dtype).reshape(shape).astype(dtype.newbyteorder("="))
            for name, (dtype, shape, data) in claims.items()
        }

    def close(self) -> None:
        self._stream.close()

    def __enter__(self) -> HeaderFile:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()


@dataclass(frozen=True)
class Field:
    """One header key: its allowed types (``int`` excludes ``bool``; ``float``
    takes ints too), whether it must be there, and a check of the value that
    returns what is wrong, or None."""

    types: tuple[type, ...]
    required: bool = True
    check: Callable[[Any], str | None] | None = None


def _type_ok(value: Any, types: tuple[type, ...]) -> bool:
    for kind in types:
        if kind is type(None) and value is None:
            return True
        if kind is bool and isinstance(value, bool):
            return True
        if kind is int and isinstance(value, int) and not isinstance(value, bool):
            return True
        if kind is float and isinstance(value, int | float) and not isinstance(value, bool):
            return True
        if kind not in (bool, int, float, type(None)) and isinstance(value, kind):
            return True
    return False


def check_fields(value: Any, fields: Mapping[str, Field], *, where: str = "", extra: bool = False) -> str | None:
    """What is wrong with the map ``value`` under ``fields`` (``where`` names it
    at the start of the message), or None. Unknown keys are wrong unless ``extra``."""
    at = f"{where} " if where else ""
    if not isinstance(value, dict):
        return f"{at}is {type(value).__name__}, not a map"
    unknown = [key for key in value if key not in fields]
    if unknown and not extra:
        return f"{at}has unknown key {show(unknown[0])}"
    for key, field in fields.items():
        if key not in value:
            if field.required:
                return f"{at}has no {key!r}"
            continue
        item = value[key]
        if not _type_ok(item, field.types):
            names = " or ".join("None" if t is type(None) else t.__name__ for t in field.types)
            return f"{at}{key!r} is {show(item)}, not {names}"
        problem = None if field.check is None else field.check(item)
        if problem is not None:
            return f"{at}{key!r} {problem}"
    return None
