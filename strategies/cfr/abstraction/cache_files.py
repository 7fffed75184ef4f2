"""Cache files of card abstractions and the tables built from them: where they
live and how they are read.

A cache file is a header-and-arrays file (:mod:`strategies.cfr.file_io`, the
format of strategy files too): a header map (whatever the writer puts there,
plus ``arrays``, the sorted array names) and the arrays. Writing is atomic
(:func:`write_arrays`). Reading is bounded like every such file: the header
under :data:`~strategies.cfr.file_io.HEADER_LIMITS`, checked against the
reader's ``fields`` (a :func:`~strategies.cfr.file_io.check_fields` schema)
before the arrays are read, each array's dtype and shape checked against the
reader's ``expect``. A damaged, foreign or unexpected file raises
:class:`CacheFileError` (one line naming the file), which readers take as
"compute it again".
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from strategies.cfr.file_io import ArrayCheck, Field, FileFormatError, HeaderFile, check_fields, write_file

__all__ = ["CacheFileError", "default_cache_dir", "expect_arrays", "read_arrays", "write_arrays"]


class CacheFileError(FileFormatError):
    """A file that is not a readable header-and-arrays file, or not the one expected."""


def default_cache_dir() -> Path:
    """``$ACPC_ARENA_CACHE``, else ``$XDG_CACHE_HOME/acpc-arena``, else ``~/.cache/acpc-arena``."""
    explicit = os.environ.get("ACPC_ARENA_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "acpc-arena"


def write_arrays(path: Path, header: dict[str, Any], arrays: dict[str, npt.NDArray[Any]]) -> None:
    """Write ``header`` and ``arrays`` to ``path`` atomically (its directory is created if needed)."""
    write_file(path, header, arrays)


def expect_arrays(specs: Mapping[str, tuple[str, tuple[int, ...]]]) -> ArrayCheck:
    """An ``expect`` for :func:`read_arrays`: each array named in ``specs`` has
    exactly that dtype (``np.dtype.str``, e.g. ``"<i8"``) and shape."""

    def expect(name: str, dtype: np.dtype[Any], shape: tuple[int, ...]) -> str | None:
        if name not in specs:
            return None
        code, needed = specs[name]
        if dtype != np.dtype(code) or shape != needed:
            return f"{dtype.name}{list(shape)}; expected {np.dtype(code).name}{list(needed)}"
        return None

    return expect


def _names(value: Any) -> str | None:
    if not all(isinstance(name, str) for name in value):
        return "holds something other than names"
    return None


def read_arrays(
    path: Path, fields: Mapping[str, Field] | None = None, expect: ArrayCheck | None = None
) -> tuple[dict[str, Any], dict[str, npt.NDArray[Any]]]:
    """The header and arrays of a file written by :func:`write_arrays`: the header
    checked against ``fields`` (other keys allowed; ``arrays`` always checked),
    then each array against ``expect``.

    Raises:
        CacheFileError: the file is truncated, damaged, not such a file, or not as expected.
        OSError: it cannot be read.
    """
    schema = {**(fields or {}), "arrays": Field((list,), check=_names)}
    with HeaderFile(path, CacheFileError, "header-and-arrays file") as file:
        problem = check_fields(file.header, schema, where="the header", extra=True)
        if problem is not None:
            raise file.fail(problem)
        header: dict[str, Any] = file.header
        return header, file.arrays(header["arrays"], expect)
