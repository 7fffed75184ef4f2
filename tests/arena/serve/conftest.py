from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.arena.serve.service_process import Service


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    """A service with the defaults the tests use, stopped after the test."""
    running = Service(tmp_path, min_rank_hands=10).start()
    yield running
    if running.process is not None and running.process.poll() is None:
        running.stop()
