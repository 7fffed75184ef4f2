"""Every command that drives strategies.cfr answers bad input with one line on
stderr, ``arena COMMAND: error: ...``, and the statuses of docs/exit-statuses.md:
2 for what the command line names wrongly (a game, a bot, a file that is not
there), 1 for what fails while running."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.commands import bots as cli_bots
from arena.commands import dbr as cli_dbr
from arena.commands import exploitability as cli_exploitability
from arena.commands import lbr as cli_lbr
from arena.commands import show
from arena.commands import solve as cli


def _one_line(capsys: pytest.CaptureFixture[str], prefix: str) -> str:
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and captured.err.startswith(prefix), captured.err
    return captured.out


def test_solve_and_exploitability(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["nosuchgame", "--iterations", "3", "-o", str(tmp_path / "x"), "--quiet"]) == 2
    _one_line(capsys, "arena solve: error: ")
    assert cli_exploitability.main([str(tmp_path / "missing")]) == 2
    _one_line(capsys, "arena exploitability: error: argument file: no such file or directory")
    damaged = tmp_path / "damaged.strategy"
    damaged.write_bytes(b"not a strategy file")
    assert cli_exploitability.main([str(damaged)]) == 1
    _one_line(capsys, "arena exploitability: error: ")


def test_solve_without_output_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 20 §3.6: not nine lines of usage before the one that matters."""
    assert cli.main(["leduc", "--iterations", "3"]) == 2
    _one_line(capsys, "arena solve: error: the following arguments are required: -o/--output (see --help)")


def test_show(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert show.main([str(tmp_path / "missing")]) == 2
    _one_line(capsys, "arena show: error: ")


def test_bots(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_bots.main(["build", "no-such-bot"]) == 2
    _one_line(capsys, "arena bots: error: unknown bot 'no-such-bot'")
    assert cli_bots.main(["build", "leduk-cfr"]) == 2
    _one_line(capsys, "arena bots: error: unknown bot 'leduk-cfr'; did you mean leduc-cfr? known bots: ")


def test_dbr(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = str(tmp_path / "missing.log")
    assert cli_dbr.main([missing, "--opponent", "B", "--p", "0.5", "-o", str(tmp_path / "b.strategy")]) == 2
    _one_line(capsys, "arena dbr: error: ")
    assert cli_dbr.main([missing, "--opponent", "B", "--p", "0.5", "-o", str(tmp_path / "no" / "b.strategy")]) == 2
    _one_line(capsys, "arena dbr: error: ")


def test_lbr(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_lbr.main(["random", "--game", "nosuchgame", "--hands", "2", "--no-progress"]) == 2
    _one_line(capsys, "arena lbr: error: ")
    assert cli_lbr.main(["random", "--game", "leduc", "--streets", "9", "--hands", "2", "--no-progress"]) == 2
    _one_line(capsys, "arena lbr: error: ")


def test_lbr_prints_no_header_before_a_bad_target(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 20 §3.8: the error alone, not 'LBR ... vs nosuch ...' and then the error."""
    assert cli_lbr.main(["nosuch", "--game", "leduc", "--hands", "2", "--no-progress"]) == 2
    assert _one_line(capsys, "arena lbr: error: unknown strategy 'nosuch'") == ""
