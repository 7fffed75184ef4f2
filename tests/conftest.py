"""Shared test fixtures: where the reference material lives.

The tests read the reference dealer's transcripts and game files from copies
kept in ``tests/fixtures/acpc`` (verbatim, so a plain clone runs every test).
The originals (the protocol notes the project was built from, with the game
files) live outside the repository; where a checkout of them sits beside the
clone, at ``../shared/acpc``, it is only used to check that those copies have
not drifted (``tests/test_fixtures.py``); a plain clone skips that check.

The suite never writes to the user's cache (``~/.cache/acpc-arena``): unless
``$ACPC_ARENA_CACHE`` is set, the run gets a scratch one, shared by its xdist
workers and the commands they start (its files are written atomically), and
removed at the end.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from acpc_fixtures import FIXTURES

SHARED_ACPC = Path(__file__).resolve().parents[1].parent / "shared" / "acpc"
CACHE_ENV = "ACPC_ARENA_CACHE"
_made_cache: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    # Runs in the main process before xdist starts its workers, which inherit the variable.
    if CACHE_ENV not in os.environ:
        os.environ[CACHE_ENV] = tempfile.mkdtemp(prefix="acpc-arena-test-cache-")
        _made_cache.append(os.environ[CACHE_ENV])


def pytest_unconfigure(config: pytest.Config) -> None:
    for folder in _made_cache:
        shutil.rmtree(folder, ignore_errors=True)
        del os.environ[CACHE_ENV]
    _made_cache.clear()


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
