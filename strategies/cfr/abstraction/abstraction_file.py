"""What a card abstraction cache file (:meth:`strategies.cfr.abstraction.card_abstraction.CardAbstraction.save`)
must hold before its look-up arrays reach the numba kernels: the header schema
(:data:`ABSTRACTION_FIELDS`) and the arrays' dtypes, dimensions and index ranges
(:func:`check_bucket_tables`), so a damaged or tampered file is an
:class:`~strategies.cfr.abstraction.card_tables.AbstractionError` (and is built again),
never an out-of-bounds read in a kernel.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from poker.gamedef import MAX_ROUNDS
from strategies.cfr.abstraction.bucketing import BucketTables, Feature, Recall
from strategies.cfr.file_io import Field, show

__all__ = ["ABSTRACTION_FIELDS", "MAX_BUCKETS", "check_bucket_tables", "expect_bucket_array"]

#: The most buckets one round may have.
MAX_BUCKETS = 1 << 24


def _counts(value: list[Any]) -> str | None:
    if not 1 <= len(value) <= MAX_ROUNDS:
        return f"has {len(value)} bucket counts, not 1 to {MAX_ROUNDS}"
    if not all(isinstance(k, int) and not isinstance(k, bool) and 1 <= k <= MAX_BUCKETS for k in value):
        return f"is {show(value)}, not bucket counts from 1 to {MAX_BUCKETS}"
    return None


def _member(values: set[str]) -> Any:
    return lambda value: None if value in values else f"is {show(value)}, not one of {', '.join(sorted(values))}"


#: The header keys a card abstraction file must have (``format`` and
#: ``version`` are checked first by the reader).
ABSTRACTION_FIELDS: dict[str, Field] = {
    "format": Field((str,)),
    "version": Field((int,)),
    "game": Field((str,), check=lambda v: None if len(v) <= 4096 else "is over 4096 characters"),
    "spec": Field((str,), check=lambda v: None if len(v) <= 64 else "is over 64 characters"),
    "feature": Field((str,), check=_member({str(f) for f in Feature})),
    "buckets": Field((list,), check=_counts),
    "recall": Field((str,), check=_member({str(r) for r in Recall})),
}

_INDEX = ("key_start", "keys", "merged_start", "merged", "local_start", "final_thresholds")


def expect_bucket_array(name: str, dtype: np.dtype[Any], shape: tuple[int, ...]) -> str | None:
    """The dtype and dimensions each :class:`BucketTables` array must claim."""
    needed = {"table": 2, "final_thresholds": 2}.get(name, 1)
    if len(shape) != needed:
        return f"{len(shape)} dimensions, not {needed}"
    if name in _INDEX and dtype != np.dtype(np.int64):
        return f"dtype {dtype.name}, not int64"
    if name == "local" and dtype != np.dtype(np.int32):
        return f"dtype {dtype.name}, not int32"
    if name == "table" and dtype.kind != "u":
        return f"dtype {dtype.name}, not unsigned"
    return None


def _starts(starts: npt.NDArray[np.int64], length: int, count: int, name: str, *, full: bool) -> str | None:
    if starts.shape != (count,):
        return f"{name} has shape {starts.shape}, not ({count},)"
    if starts.size and (starts[0] != 0 or np.any(np.diff(starts) < 0) or starts[-1] > length):
        return f"{name} is not a non-decreasing run of offsets from 0 into {length} entries"
    if full and starts.size and starts[-1] != length:
        return f"{name} ends at {starts[-1]}, not at its {length} entries"
    return None


def check_bucket_tables(tables: BucketTables, num_rounds: int, hands: int, buckets: tuple[int, ...]) -> str | None:
    """What is wrong with ``tables`` for a game of ``num_rounds`` rounds and
    ``hands`` private hands, ``buckets`` per round, or None (offsets ordered and
    in range, look-up values within their tables)."""
    last = num_rounds - 1
    problem = (
        _starts(tables.key_start, len(tables.keys), last + 1, "key_start", full=True)
        or _starts(tables.merged_start, len(tables.merged), last + 1, "merged_start", full=True)
        or _starts(tables.local_start, len(tables.local), max(last, 1), "local_start", full=False)
    )
    if problem is not None:
        return problem
    if tables.table.shape != (len(tables.keys), hands):
        return f"table has shape {tables.table.shape}, not ({len(tables.keys)}, {hands})"
    if tables.table.size and int(tables.table.max()) > len(tables.merged):
        return "table points past the merged thresholds"
    if tables.local.size and (int(tables.local.min()) < 0 or int(tables.local.max()) >= max(buckets)):
        return f"local holds a bucket outside 0..{max(buckets) - 1}"
    if tables.final_thresholds.shape[1] != max(buckets[last] - 1, 1):
        return f"final_thresholds has {tables.final_thresholds.shape[1]} columns, not {max(buckets[last] - 1, 1)}"
    return None
