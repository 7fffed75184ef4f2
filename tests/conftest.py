"""Shared test fixtures: where the reference material lives."""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
ACPC = SHARED / "acpc"


@pytest.fixture(scope="session")
def acpc_dir() -> Path:
    """../shared/acpc beside the clone (SPEC.md and the reference game files)."""
    if not (ACPC / "SPEC.md").is_file():
        pytest.skip(f"reference material not found at {ACPC}")
    return ACPC
