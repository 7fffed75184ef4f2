"""Every command line of strategies.cfr answers bad input with one line on stderr."""

from __future__ import annotations

from pathlib import Path

import pytest

from strategies.cfr import cli, cli_bots, cli_dbr, cli_exploitability, cli_lbr, show


def _one_line(capsys: pytest.CaptureFixture[str], prefix: str) -> None:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(prefix), err


def test_solve_and_exploitability(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["nosuchgame", "--iterations", "3", "-o", str(tmp_path / "x"), "--quiet"]) == 1
    _one_line(capsys, "arena solve: ")
    assert cli_exploitability.main([str(tmp_path / "missing")]) == 1
    _one_line(capsys, "arena exploitability: ")


def test_show(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert show.main([str(tmp_path / "missing")]) == 1
    _one_line(capsys, "arena show: ")


def test_bots(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_bots.main(["build", "no-such-bot"]) == 1
    _one_line(capsys, "arena bots: ")


def test_dbr(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = str(tmp_path / "missing.log")
    assert cli_dbr.main([missing, "--opponent", "B", "--p", "0.5", "-o", str(tmp_path / "b.strategy")]) == 1
    _one_line(capsys, "arena dbr: ")
    assert cli_dbr.main([missing, "--opponent", "B", "--p", "0.5", "-o", str(tmp_path / "no" / "b.strategy")]) == 1
    _one_line(capsys, "arena dbr: ")


def test_lbr(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_lbr.main(["random", "--game", "nosuchgame", "--hands", "2", "--no-progress"]) == 2
    _one_line(capsys, "arena lbr: ")
    assert cli_lbr.main(["random", "--game", "leduc", "--streets", "9", "--hands", "2", "--no-progress"]) == 2
    _one_line(capsys, "arena lbr: ")
