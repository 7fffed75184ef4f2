"""Fixtures of the sandbox tests."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def world() -> Iterator[Path]:
    """A folder every user can search (pytest's tmp_path is its owner's only),
    for agents' folders and the files they must not read."""
    root = Path(tempfile.mkdtemp(prefix="sandbox-test-"))
    root.chmod(0o755)
    yield root
    shutil.rmtree(root)
