"""The reference command line (docs/commands.md, ``arena dealer``): ``python -m
dealer`` end to end, and argument handling in process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from acpc_fixtures import code_blocks
from dealer.cli import EXTENSIONS, USAGE, main, parse_args
from poker.gamedef import load_game
from tests.dealer.dealer_clients import Script, actions_of, scripted_agent

ROOT = Path(__file__).resolve().parents[2]
LOG_5_7 = code_blocks("5.7")[1]
PLAN_5_7 = {int(line.split(":")[1]): actions_of(line.split(":")[2]) for line in LOG_5_7 if line.startswith("STATE:")}


async def test_python_m_dealer_plays_the_5_7_match(tmp_path: Path) -> None:
    # Options after the positional arguments, as play_match.pl passes them.
    args = [sys.executable, "-m", "dealer", "lim2", "holdem.limit.2p.reverse_blinds.game", "4", "0", "P1", "P2", "-q", "-T"]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    process = await trio.lowlevel.open_process(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path, env=env)
    assert process.stdout is not None and process.stderr is not None
    stdout = b""
    with trio.fail_after(60):
        while b"\n" not in stdout:
            stdout += await process.stdout.receive_some()
        ports = [int(p) for p in stdout.decode().split("\n")[0].split()]
        game = load_game("hulhe")
        async with trio.open_nursery() as nursery:
            for port in ports:
                nursery.start_soon(scripted_agent, port, game, Script(follow=PLAN_5_7), [])
        stderr = b""
        while chunk := await process.stdout.receive_some():
            stdout += chunk
        while chunk := await process.stderr.receive_some():
            stderr += chunk
        status = await process.wait()

    assert status == 0
    assert stdout.decode() == f"{ports[0]} {ports[1]}\nSCORE:-40|40:P1|P2\n"
    assert stderr.decode() == "\n".join(LOG_5_7[:4] + LOG_5_7[-1:]) + "\n"
    assert (tmp_path / "lim2.log").read_text() == "\n".join(LOG_5_7) + "\n"
    assert len((tmp_path / "lim2.tlog").read_text().splitlines()) == sum(len(p) for p in PLAN_5_7.values())
    assert (tmp_path / "lim2.hands.msgpack").is_file()


def test_too_few_arguments_print_usage_on_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["m", "hulhe", "10"]) == 1
    assert capsys.readouterr().out == USAGE
    # Names are counted once the game is known.
    assert main(["m", "kuhn3p", "10", "1", "A", "B"]) == 1
    assert capsys.readouterr().out == USAGE


def test_help_describes_the_extensions(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    assert capsys.readouterr().out == USAGE + EXTENSIONS


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["-x", "m", "hulhe", "1", "1", "A", "B"], "dealer: invalid option -- 'x'\nERROR: unknown option ?\n"),
        (["m", "hulhe", "1", "1", "A", "B", "--bogus"], "dealer: unrecognized option '--bogus'\nERROR: unknown option ?\n"),
        (["m", "hulhe", "1", "1", "A", "B", "-p"], "dealer: option requires an argument -- 'p'\nERROR: unknown option ?\n"),
        (["m", "hulhe", "0", "1", "A", "B"], "ERROR: invalid number of hands 0\n"),
        (["m", "hulhe", "10", "seed", "A", "B"], "ERROR: invalid random number seed seed\n"),
        (["m", "hulhe", "10", "1", "A", "B", "-p", "1,x"], "ERROR: bad port string 1,x\n"),
        # issue 20 §3.7: the reference's %hu would listen on 34463 and 4464
        (["m", "hulhe", "10", "1", "A", "B", "-p", "99999,70000"], "ERROR: bad port string 99999,70000: port 99999 is outside 0..65535\n"),
        (["m", "hulhe", "10", "1", "A", "B", "-p", "7000,65536"], "ERROR: bad port string 7000,65536: port 65536 is outside 0..65535\n"),
        (["m", "hulhe", "10", "1", "A", "B", "--t_hand", "soon"], "ERROR: could not get player hand timeout from soon\n"),
    ],
)
def test_bad_arguments_give_the_reference_errors(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", message)


def test_bad_game_file_names_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    game = tmp_path / "broken.game"
    game.write_text("GAMEDEF\nlimit\nnumPlayers = 2\nnumRounds = 9\nEND GAMEDEF\n")
    assert main(["m", str(game), "10", "1", "A", "B"]) == 1
    assert capsys.readouterr().err == f"ERROR: could not read game {game}: {game}:4: numRounds = 9 is outside 1..4\n"


def test_options_anywhere_clustered_and_abbreviated(tmp_path: Path) -> None:
    config = parse_args(
        ["-fq", "m", "--t_resp=250", "hunl", "100", "-p", "7001,0", "5", "A", "B", "--start_t", "-1", "-lT", "-a",
         "--t_per_hand", "+9", "--host", "0.0.0.0", "--log-dir", str(tmp_path), "--no-records", "--strict"]
    )
    assert config is not None
    assert (config.match_name, config.game_path, config.num_hands, config.seed, config.names) == ("m", "hunl", 100, 5, ("A", "B"))
    assert config.game == load_game("holdem.nolimit.2p.reverse_blinds")
    assert config.fixed_seats and config.quiet and config.append and config.write_tlog and config.strict
    assert not config.write_log and not config.records
    assert (config.t_response_ms, config.t_hand_ms, config.t_per_hand_ms, config.start_timeout_ms) == (250, 600000, 9, -1)
    assert (config.ports, config.host, config.log_dir) == ((7001, 0), "0.0.0.0", tmp_path)


def test_numbers_are_read_like_scanf() -> None:
    # %u skips blanks and ignores trailing text; the seed wraps at 2**32.
    config = parse_args(["m", "hulhe", " 12abc", "4294967297", "A", "B"])
    assert config is not None and (config.num_hands, config.seed) == (12, 1)


def test_the_dealer_does_not_import_numba() -> None:
    """numba's import is a fifth of a second of every match's start-up; the dealer
    ranks its showdowns in plain Python (poker.hand_rank) and never needs it."""
    code = "import sys, dealer.cli, dealer.server; print(sorted(m for m in sys.modules if m.split('.')[0] == 'numba'))"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout == "[]\n"
