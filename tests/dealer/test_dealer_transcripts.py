"""The dealer against the reference dealer's own transcripts
(tests/fixtures/acpc/spec_section5.md).

Scripted agents send the recorded FROM lines (or, where a transcript gives only the
log, the actions of its STATE lines); every TO line, warning, ``.log`` byte and
the SCORE line must come out as the reference printed them. The transcripts
are read from that file itself (``acpc_fixtures``), so they cannot drift.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acpc_fixtures import SECTIONS, Message, code_blocks, inline_lines, messages
from dealer.server import MatchConfig
from tests.dealer.dealer_clients import Script, actions_of, run_match, untimed
from poker.gamedef import load_game


def _config(section: str, tmp_path: Path, num_hands: int, **options: Any) -> MatchConfig:
    stem, seed = SECTIONS[section]
    game = load_game(stem)
    names = tuple(f"P{i + 1}" for i in range(game.num_players))
    return MatchConfig("m", game, f"{stem}.game", num_hands, seed, names, log_dir=tmp_path, **options)


def _upfront(transcript: list[Message], seat: int) -> bytes:
    """Everything ``seat`` says in the transcript, sent at once: the dealer reads
    a seat only when it acts, so early lines simply wait in the socket."""
    return b"".join(f"{m.text}\r\n".encode() for m in transcript if m.direction == "FROM" and m.seat == seat)


def _wire(transcript: list[Message]) -> list[str]:
    """The transcript as the dealer's stderr shows it (stamps removed)."""
    return [f"{m.direction} {m.seat + 1} {m.text}\r\n" for m in transcript]


def _header(config: MatchConfig) -> str:
    return (
        f"# name/game/hands/seed m {config.game_path} {config.num_hands} {config.seed}\n"
        "#--t_response 600000\n#--t_hand 600000\n#--t_per_hand 7000\n"
    )


def _seconds(num_players: int) -> list[str]:
    return [f"Seconds cumulatively spent in match for seat {s}: 0\n" for s in range(num_players)]


def _log(config: MatchConfig) -> str:
    return (config.log_dir / "m.log").read_text()


def _traffic(stderr: str) -> list[str]:
    return [line for line in untimed(stderr).splitlines(keepends=True) if line.startswith(("TO ", "FROM "))]


async def test_hu_limit_seed_11_reproduces_5_1(tmp_path: Path) -> None:
    hand0, hand1 = (messages(block) for block in code_blocks("5.1")[:2])
    config = _config("5.1", tmp_path, 2)
    both = hand0 + hand1
    capture = await run_match(config, [Script(upfront=_upfront(both, s)) for s in range(2)])

    ports = capture.stdout.splitlines()[0]
    assert capture.stdout == f"{ports}\nSCORE:-85|85:P1|P2\n"
    assert untimed(capture.stderr) == "".join(
        [_header(config), "STARTED\n", *_wire(hand0), *_seconds(2), *_wire(hand1), "FINISHED\n", "SCORE:-85|85:P1|P2\n"]
    )
    assert _log(config) == _header(config) + "\n".join(code_blocks("5.1")[2]) + "\n"
    for seat in range(2):
        assert capture.received[seat] == [m.text for m in both if m.direction == "TO" and m.seat == seat]
    assert capture.result.totals == (-85.0, 85.0)
    assert capture.result.hands_played == 2
    assert capture.result.exit_status == 0 and capture.result.aborted is None


async def test_hu_nolimit_seed_11_reproduces_5_2(tmp_path: Path) -> None:
    hand0, hand1 = (messages(block) for block in code_blocks("5.2")[:2])
    config = _config("5.2", tmp_path, 2)
    capture = await run_match(config, [Script(upfront=_upfront(hand0 + hand1, s)) for s in range(2)])

    assert _traffic(capture.stderr) == _wire(hand0 + hand1)
    assert _log(config) == _header(config) + "\n".join(code_blocks("5.2")[2]) + "\n"
    assert capture.stdout.endswith("\nSCORE:-19900|19900:P1|P2\n")


async def test_hu_nolimit_preflop_all_in_pads_three_rounds(tmp_path: Path) -> None:
    # Reference transcript 5.2, last block: an example_player run with seed 7.
    config = MatchConfig("m", load_game("hunl"), "hunl", 1, 7, ("P1", "P2"), log_dir=tmp_path)
    plan = {0: actions_of("cr19767r20000c")}
    capture = await run_match(config, [Script(follow=plan), Script(follow=plan)])

    final = [m.text for m in messages(code_blocks("5.2")[3])]
    assert [capture.received[0][-1], capture.received[1][-1]] == final


async def test_three_player_limit_seed_11_reproduces_5_3(tmp_path: Path) -> None:
    hand0, hand1 = (messages(block) for block in code_blocks("5.3")[:2])
    config = _config("5.3", tmp_path, 2)
    capture = await run_match(config, [Script(upfront=_upfront(hand0 + hand1, s)) for s in range(3)])

    assert untimed(capture.stderr) == "".join(
        [_header(config), "STARTED\n", *_wire(hand0), *_seconds(3), *_wire(hand1), "FINISHED\n", "SCORE:70|-55|-15:P1|P2|P3\n"]
    )
    assert _log(config) == _header(config) + "\n".join(code_blocks("5.3")[2]) + "\n"


async def test_three_player_nolimit_seed_11_reproduces_5_4(tmp_path: Path) -> None:
    (block,) = code_blocks("5.4")
    hand0 = messages(block)
    lines = inline_lines("5.4", "STATE")
    plan = {1: actions_of(lines[1].split(":")[2])}
    config = _config("5.4", tmp_path, 2)
    capture = await run_match(config, [Script(upfront=_upfront(hand0, s), follow=plan) for s in range(3)])

    assert _traffic(capture.stderr)[: len(hand0)] == _wire(hand0)
    assert _log(config).splitlines()[4:6] == lines
    # Per seat: P1 20100 + 200, P2 -100 - 100, P3 -20000 - 100.
    assert capture.stdout.endswith("\nSCORE:20300|-200|-20100:P1|P2|P3\n")


async def test_kuhn_three_player_seed_7_reproduces_5_5(tmp_path: Path) -> None:
    (block,) = code_blocks("5.5")
    hand0 = messages(block)
    config = _config("5.5", tmp_path, 2)
    plan = {1: actions_of("crcc")}
    capture = await run_match(config, [Script(upfront=_upfront(hand0, s), follow=plan) for s in range(3)])

    assert _traffic(capture.stderr)[: len(hand0)] == _wire(hand0)
    assert _log(config).splitlines()[4] == inline_lines("5.5", "STATE")[0]
    # Hand 1: position 2 sits in seat (2 + 1) mod 3 = 0.
    assert capture.received[0][-1] == "MATCHSTATE:2:1:crcc:Ks|Qs|As"


async def _play_bad_input_run(tmp_path: Path, block: list[str]) -> None:
    transcript = messages(block)
    config = _config("5.6", tmp_path, 1)
    capture = await run_match(config, [Script(upfront=_upfront(transcript, s)) for s in range(2)])

    # FROM lines and warnings, in the order they happened.
    expected = []
    for line in block:
        if line.startswith("WARNING:"):
            expected.append(line.strip() + "\n")
        elif line.startswith("FROM"):
            (message,) = messages([line])
            expected.append(f"FROM {message.seat + 1} {message.text}\r\n")
    seen = [line for line in untimed(capture.stderr).splitlines(keepends=True) if line.startswith(("FROM", "WARNING"))]
    assert seen == expected
    # The TO 1 lines shown come in that order among everything sent to seat 1.
    shown = [m.text for m in transcript if m.direction == "TO"]
    sent = iter(capture.received[0])
    assert all(any(text == line for line in sent) for text in shown)
    assert capture.result.exit_status == 0


async def test_bad_input_run_a_reproduces_5_6(tmp_path: Path) -> None:
    await _play_bad_input_run(tmp_path, code_blocks("5.6")[0])


async def test_bad_input_run_b_reproduces_5_6(tmp_path: Path) -> None:
    await _play_bad_input_run(tmp_path, code_blocks("5.6")[1])


async def test_limit_raise_over_the_cap_becomes_a_call(tmp_path: Path) -> None:
    # Reference transcript 5.6: seed 3, the 4th pre-flop raise is turned into a call.
    config = MatchConfig("m", load_game("hulhe"), "hulhe", 1, 3, ("P1", "P2"), log_dir=tmp_path)
    plan = {0: ["r", "r", "r", "r"] + ["c"] * 6}
    capture = await run_match(config, [Script(follow=plan), Script(follow=plan)])

    assert "WARNING: invalid action, changed to call\n" in capture.stderr
    assert capture.stderr.count("WARNING") == 1
    assert any(":rrrc/:" in line for line in capture.received[0])
    assert _log(config).splitlines()[4].startswith("STATE:0:rrrc/cc/cc/cc:")


async def test_four_hand_log_reproduces_5_7(tmp_path: Path) -> None:
    stdout_block, log_block = code_blocks("5.7")
    plan = {
        int(line.split(":")[1]): actions_of(line.split(":")[2]) for line in log_block if line.startswith("STATE:")
    }
    game = load_game("holdem.limit.2p.reverse_blinds.game")
    config = MatchConfig("lim2", game, "holdem.limit.2p.reverse_blinds.game", 4, 0, ("P1", "P2"), log_dir=tmp_path)
    capture = await run_match(config, [Script(follow=plan), Script(follow=plan)])

    assert (tmp_path / "lim2.log").read_text() == "\n".join(log_block) + "\n"
    ports = capture.stdout.splitlines()[0]
    assert [int(p) for p in ports.split()] and capture.stdout == f"{ports}\n{stdout_block[2]}\n"
