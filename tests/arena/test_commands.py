"""The command front ends of :mod:`arena.commands` as a newcomer meets them
(issue 20 §3): plain --help, one convention of statuses and error lines
(docs/exit-statuses.md), a hint for a misspelled name, and no half-done runs."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from arena.cli import COMMANDS, main
from arena.commands import analyze, play, rank

#: The standalone ACPC programs keep the reference's command lines (and its help).
STANDALONE = {"dealer", "agent"}

LOG_HEADER = """\
# name/game/hands/seed match kuhn 2 1
#--t_response 600000
#--t_hand 600000
#--t_per_hand 7000
"""
ONE_HAND = "STATE:0:cc:Ks|As:-1|1:always-call-1|always-call-2\n"


@pytest.mark.parametrize("command", sorted(set(COMMANDS) - STANDALONE))
def test_help_is_plain_text(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    """No reST markup (``x``, :mod:`x`) and no doubled %% in what a terminal shows."""
    assert main([command, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: arena {command}")
    for markup in ("``", "**", ":mod:`", ":func:`", ":class:`", ":data:`", ":meth:`", "%%"):
        assert markup not in out, f"arena {command} --help shows {markup!r}"


@pytest.mark.parametrize("command", sorted(set(COMMANDS) - STANDALONE))
def test_an_unknown_option_is_one_line_and_status_2(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The kit's convention holds for every command, the newest (warmup) included."""
    assert main([command, "--no-such-option"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"arena {command}: error: ") and err.count("\n") == 1, err


def test_rank_help_says_95_percent(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 24 §15: `arena rank --help` printed "95%%"."""
    assert rank.main(["--help"]) == 0
    assert "crosstable with 95% intervals" in capsys.readouterr().out


def test_unknown_command_suggests_the_closest(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sovle"]) == 2
    assert capsys.readouterr().err.startswith("arena: unknown command 'sovle'; did you mean solve?")


def test_a_misspelled_game_names_the_closest_first(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 20 §3.5: 'did you mean leduc?' before the list of every name."""
    assert main(["games", "leduk"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("arena games: error: 'leduk' is neither a game file nor a known game name; did you mean leduc?")
    assert err.count("\n") == 1


def test_analyze_of_logs_without_a_hand_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 20 §3.8: a header alone is not a result (it printed the header and exited 0)."""
    log = tmp_path / "match.log"
    log.write_text(LOG_HEADER)
    assert analyze.main([str(log)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"arena analyze: error: {log}: no finished hand to analyze\n"


def test_analyze_report_says_where_it_wrote_and_counts_in_the_singular(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 20 §3.8: the report's path is printed; "1 hand in 1 log", not "1 hands in 1 logs"."""
    log = tmp_path / "match.log"
    log.write_text(LOG_HEADER + ONE_HAND)
    report = tmp_path / "report.html"
    assert analyze.main([str(log), "--report", str(report)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "kuhn.limit.2p: 1 hand in 1 log, chips/hand"
    assert out[-1] == f"report: {report}" and report.is_file()


def test_a_play_that_cannot_bind_leaves_no_run_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 20 §3.8: a busy port fails before anything is written."""
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        run = tmp_path / "runs" / "play"
        argv = ["kuhn", "--opponent", "always-call", "--port", str(port), "--seed", "1", "--run-dir", str(run)]
        assert play.main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"arena play: error: cannot serve the table at 127.0.0.1:{port}: ") and err.count("\n") == 1
    assert not (tmp_path / "runs").exists()
