"""Cache files of card abstractions and the tables built from them: where they
live and how they are written.

A file is two msgpack objects in a row, like a strategy file
(:mod:`strategies.cfr.strategy_file`): a header map (whatever the writer puts
there, plus ``arrays``, the sorted array names) and a map from array name to
``{"dtype", "shape", "data"}`` (raw little-endian bytes, C order). Writing goes
to a temporary file in the same directory that then replaces the target, so a
reader never sees half a file; a damaged or foreign file raises
:class:`CacheFileError`, which readers take as "compute it again".
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import msgpack
import numpy as np
import numpy.typing as npt

__all__ = ["CacheFileError", "default_cache_dir", "pack_array", "read_arrays", "unpack_array", "write_arrays"]


class CacheFileError(ValueError):
    """A file that is not a readable header-and-arrays file."""


def default_cache_dir() -> Path:
    """``$ACPC_ARENA_CACHE``, else ``$XDG_CACHE_HOME/acpc-arena``, else ``~/.cache/acpc-arena``."""
    explicit = os.environ.get("ACPC_ARENA_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "acpc-arena"


def pack_array(array: npt.NDArray[Any]) -> dict[str, Any]:
    """``{"dtype", "shape", "data"}`` of ``array``: raw little-endian bytes in C order
    (the array format of cache and strategy files)."""
    little = np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<"), copy=False)
    return {"dtype": little.dtype.str, "shape": list(array.shape), "data": little.tobytes()}


def unpack_array(packed: dict[str, Any]) -> npt.NDArray[Any]:
    """The array of :func:`pack_array`'s map, in native byte order.

    Raises:
        KeyError, TypeError, ValueError: a damaged map (callers name the file).
    """
    dtype = np.dtype(packed["dtype"])
    shape = tuple(int(n) for n in packed["shape"])
    array: npt.NDArray[Any] = np.frombuffer(packed["data"], dtype=dtype).reshape(shape).astype(dtype.newbyteorder("="))
    return array


def write_arrays(path: Path, header: dict[str, Any], arrays: dict[str, npt.NDArray[Any]]) -> None:
    """Write ``header`` and ``arrays`` to ``path`` atomically (its directory is created if needed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(msgpack.packb({**header, "arrays": sorted(arrays)}, use_bin_type=True))
            out.write(msgpack.packb({name: pack_array(a) for name, a in arrays.items()}, use_bin_type=True))
        os.chmod(temporary, 0o644)  # mkstemp makes it private; a cache file is not secret
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def read_arrays(path: Path) -> tuple[dict[str, Any], dict[str, npt.NDArray[Any]]]:
    """The header and arrays of a file written by :func:`write_arrays`.

    Raises:
        CacheFileError: the file is truncated, damaged or not such a file.
    """
    try:
        with open(path, "rb") as stream:
            unpacker = msgpack.Unpacker(stream, raw=False, max_buffer_size=0)
            header = unpacker.unpack()
            packed = unpacker.unpack()
        if not isinstance(header, dict) or not isinstance(packed, dict):
            raise TypeError("no header")
        arrays = {name: unpack_array(p) for name, p in packed.items()}
    except (msgpack.OutOfData, msgpack.UnpackException, ValueError, KeyError, TypeError) as error:
        raise CacheFileError(f"{path}: not a header-and-arrays file ({error or 'truncated'})") from None
    return header, arrays
