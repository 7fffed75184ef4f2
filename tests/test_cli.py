"""The ``arena`` dispatcher and ``arena games``: listing, printing, and bad input."""

from __future__ import annotations

import importlib.metadata

import pytest

from arena.cli import COMMANDS, main
from poker.gamedef import format_game, load_game


def test_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in COMMANDS)


def test_unknown_command_is_an_error_with_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["frobnicate"]) == 2
    err = capsys.readouterr().err
    assert "arena: unknown command 'frobnicate'" in err and "usage: arena" in err
    assert main([]) == 2


def test_games_lists_files_with_their_aliases(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["games"]) == 0
    out = capsys.readouterr().out
    line = next(l for l in out.splitlines() if l.startswith("holdem.limit.2p.reverse_blinds "))
    assert "2p limit, 4 round(s), blinds 10/5" in line and "hulhe" in line


def test_games_prints_one_game_canonically(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["games", "leduc"]) == 0
    assert capsys.readouterr().out == format_game(load_game("leduc"))


def test_games_unknown_name_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["games", "no-such-game"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("arena games: 'no-such-game' is neither a game file nor a known game name")
    assert "Traceback" not in err


def test_version_is_the_installed_distribution(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"arena {importlib.metadata.version('acpc-arena')}\n"
