"""Shared test fixtures: where the reference material lives.

The tests read the reference dealer's transcripts and game files from copies
kept in ``tests/fixtures/acpc`` (verbatim, so a plain clone runs every test).
The originals (the protocol notes the project was built from, with the game
files) live outside the repository; where a checkout of them sits beside the
clone, at ``../shared/acpc``, it is only used to check that those copies have
not drifted (``tests/test_fixtures.py``); a plain clone skips that check.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from acpc_fixtures import FIXTURES

SHARED_ACPC = Path(__file__).resolve().parents[1].parent / "shared" / "acpc"


@pytest.fixture(scope="session")
def acpc_dir() -> Path:
    """The reference material kept in the repo: ``spec_section5.md`` and ``games/``."""
    return FIXTURES


@pytest.fixture(scope="session")
def shared_acpc_dir() -> Path:
    """The originals of ``tests/fixtures/acpc`` in a checkout beside the clone
    (``../shared/acpc``); tests that need it skip without it."""
    if not (SHARED_ACPC / "SPEC.md").is_file():
        pytest.skip(f"../shared is not beside this clone ({SHARED_ACPC} has no SPEC.md): nothing to compare against")
    return SHARED_ACPC
