"""Run folders shared by the hand-history tests: one small match of each hold'em game."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.commands.match import main as arena_match
from holdem_matches import MATCHES


@pytest.fixture(scope="session")
def holdem_logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Run folders of 20-hand matches of each game of :data:`MATCHES` (seed 7)."""
    folders = {}
    for game, bots in MATCHES.items():
        folder = tmp_path_factory.mktemp(game)
        assert arena_match([game, "--hands", "20", "--seed", "7", *bots, "--in-process", "--run-dir", str(folder)]) == 0
        folders[game] = folder
    return folders
