"""The ``arena`` dispatcher and ``arena games``: listing, printing, and bad input."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from pathlib import Path

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
    assert "Heads-up limit hold'em: 2p limit, 4 round(s), blinds 10/5" in line and "hulhe" in line


def test_games_prints_one_game_canonically(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["games", "leduc"]) == 0
    assert capsys.readouterr().out == format_game(load_game("leduc"))


def test_games_unknown_name_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["games", "no-such-game"]) == 2  # bad input named on the command line: docs/exit-statuses.md
    err = capsys.readouterr().err
    assert err.startswith("arena games: error: 'no-such-game' is neither a game file nor a known game name")
    assert "Traceback" not in err


def test_version_is_the_installed_distribution(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"arena {importlib.metadata.version('acpc-arena')}\n"


def test_a_reader_that_goes_away_ends_the_command_quietly() -> None:
    """`arena show FILE | head`: the pipe closes after a line; no traceback, status 141 (128 + SIGPIPE)."""
    strategy = Path(__file__).resolve().parents[1] / "strategies" / "data" / "leduc3p-cfr.strategy"
    process = subprocess.Popen(
        [sys.executable, "-m", "arena", "show", str(strategy)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    assert process.stdout.readline().startswith(b"pos")
    process.stdout.close()  # 1.5 MB of output: the next writes find the pipe closed
    err = process.stderr.read().decode()
    assert process.wait(timeout=60) == 141, err
    assert err == ""
