"""The check every hostile-file test makes: loading fails with one line naming
the file, fast and in little memory (strategy files and compact playing files)."""

from __future__ import annotations

import gc
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

#: CPU seconds and bytes (peak, traced) a hostile file may cost its reader.
SECONDS = 1.0
PEAK_BYTES = 200 << 20


def refused(path: Path, match: str, load: Callable[[Path], Any], error: type[Exception]) -> None:
    """``load(path)`` raises ``error`` with one line naming ``path`` and holding
    ``match``, within the time and memory bounds. Time is this process's CPU
    time: the work a hostile file can force, not how busy the machine's other
    processes keep the cores; the cyclic garbage collector is off while it is
    timed, so the work of collecting the test process's own heap (large late in a
    full run) is not charged to the file."""
    gc.collect()
    gc.disable()
    try:
        start = time.process_time()
        with pytest.raises(error) as caught:
            load(path)
        elapsed = time.process_time() - start
    finally:
        gc.enable()
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"{path}: "), message
    assert match in message, message
    assert elapsed < SECONDS, f"{elapsed:.2f} s: {message}"
    tracemalloc.start()
    try:
        with pytest.raises(error):
            load(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < PEAK_BYTES, f"{peak} bytes: {message}"
