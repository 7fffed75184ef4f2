"""A hostile agent against the dealer (issue 3 acceptance: ≥10,000 adversarial lines).

One seat sends bursts of garbage, non-UTF-8 bytes and NULs, 4 KB+ lines,
comments, wrong hand numbers, other positions' states, mangled betting, raises
out of range, unknown letters, lines out of turn, half lines, and then hangs up,
goes silent or plays on to the end; the other seats always call. Everything
each seat sent is recorded, and an independent model of the reference dealer
(:func:`_model`, written from the reference dealer's rules, docs/protocol.md, without
the dealer's fast path) replays those bytes: the dealer must print exactly the model's
warnings, write exactly its STATE lines, and end the way it predicts. The dealer must
never raise. Seeded, so every run is the same; 4-10 s depending on machine load.
"""

from __future__ import annotations

import io
import random
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import trio

from agent.client import LineReader
from dealer.seats import LONGEST_LINE
from dealer.server import MatchConfig, MatchResult, serve_match
from poker.deal import Dealer
from poker.evaluate import rank_hand
from poker.gamedef import Game, load_game
from poker.protocol import ProtocolError, format_state_line, parse_action, parse_match_state, view_of
from poker.state import CALL, State
from tests.dealer.dealer_clients import VERSION, Script, scripted_agent

MAX_LINE = LONGEST_LINE
TOKENS = ["c", "f", "r", "k", "b", "x", "", " r5", "r-5", "r99999999", "r1", "R250", "F", "K", "B300", "c junk", "r 400", "r+300"]


@dataclass
class Hostile:
    seat: int
    budget: int  # lines to send before the ending
    ending: str  # "complete", "disconnect", "half-disconnect" or "silence"
    sent: bytearray = field(default_factory=bytearray)
    lines: int = 0
    closed: bool = False  # hung up before the dealer gave up


def _noise(rng: random.Random, text: str, game: Game) -> bytes:
    """One adversarial line (with its terminator) about the last state seen."""
    kind = rng.randrange(14)
    head, _, rest = text.partition(":")
    if kind == 0:
        return bytes(rng.randrange(32, 127) for _ in range(rng.randrange(0, 60))) + b"\r\n"
    if kind == 1:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 40))).replace(b"\n", b"") + b"\n"
    if kind == 2:
        return b"M" * rng.randrange(MAX_LINE - 5, 3 * MAX_LINE) + b"\r\n"
    if kind == 3:
        return rng.choice([b"# ", b";"]) + text.encode() + b"\r\n"
    if kind == 4:
        fields = text.split(":")
        fields[2] = str(rng.choice([int(fields[2]) + 1, 99, 2**32, 0]))
        return ":".join(fields).encode() + b":c\r\n"
    if kind == 5:
        fields = text.split(":")
        fields[1] = str(rng.randrange(game.num_players + 2))
        return ":".join(fields).encode() + b":c\r\n"
    if kind == 6:
        cut = rng.randrange(len(text))
        return (text[:cut] + text[cut + 1 :]).encode() + b":c\r\n"
    if kind == 7:
        return text.encode() + rng.choice([b"\r\n", b"\n", b":\n"])
    if kind == 8:
        return text.encode() + b":c\0" + bytes(rng.randrange(256) for _ in range(5)).replace(b"\n", b"") + b"\n"
    if kind == 9:
        return text.lower().encode() + b":c\r\n"
    return f"{text}:{rng.choice(TOKENS)}{rng.choice(['', 'junk', str(rng.randrange(-10, 30000))])}\r\n".encode()


async def _hostile_agent(port: int, game: Game, hostile: Hostile, rng: random.Random) -> None:
    stream = await trio.open_tcp_stream("127.0.0.1", port)

    async def send(data: bytes) -> None:
        hostile.sent += data
        await stream.send_all(data)

    async with stream:
        await send(VERSION)
        reader = LineReader(stream)
        silent = False
        while True:
            try:
                line = await reader.receive_line()
            except trio.BrokenResourceError:
                return
            if line is None:
                return
            text = line.decode("ascii")
            view, _ = parse_match_state(text, game)
            if silent:
                continue
            mine = view.is_my_turn()
            if mine and hostile.lines >= hostile.budget and hostile.ending != "complete":
                if hostile.ending != "disconnect":
                    await send(text[: rng.randrange(len(text))].encode())
                if hostile.ending == "silence":
                    silent = True
                    continue
                hostile.closed = True
                return
            burst: list[bytes] = []
            if mine:
                burst = [_noise(rng, text, game) for _ in range(rng.randrange(0, 25))]
                if rng.random() < 0.3:
                    burst.append(text.encode()[: rng.randrange(len(text))])  # half a line...
                burst.append(b"\n" + f"{text}:{rng.choice(TOKENS)}\r\n".encode())  # ...then an answer
            elif rng.random() < 0.2:
                burst = [_noise(rng, text, game) for _ in range(rng.randrange(1, 4))]
            hostile.lines += len(burst)
            try:
                await send(b"".join(burst))
            except trio.BrokenResourceError:
                return


@dataclass
class Prediction:
    warnings: list[str]
    states: list[str]
    aborted: str | None
    hands: int


def _frames(stream: bytes, closed: bool) -> list[bytes]:
    """The lines ``getLine`` returns from a whole byte stream; an unfinished last
    line counts only if the peer closed (else the dealer is still waiting)."""
    lines: list[bytes] = []
    pos = 0
    while pos < len(stream):
        end = stream.find(b"\n", pos, pos + MAX_LINE)
        if end >= 0:
            end += 1
        elif len(stream) - pos >= MAX_LINE:
            end = pos + MAX_LINE
        elif closed:
            end = len(stream)
        else:
            break
        lines.append(stream[pos:end])
        pos = end
    return lines


def _model(config: MatchConfig, streams: list[bytes], closed: list[bool]) -> Prediction:
    """What the reference dealer does with these bytes (docs/protocol.md, Messages and The
    dealer's rules)."""
    game, n = config.game, config.game.num_players
    queues = [iter(_frames(stream, shut)[1:]) for stream, shut in zip(streams, closed)]  # [0] is VERSION
    dealer = Dealer(game, seed=config.seed)
    warnings: list[str] = []
    states: list[str] = []
    for hand in range(config.num_hands):
        deal, state = dealer.next_hand(), State(game)
        while not state.finished:
            position = state.current_player()
            seat = (position + hand) % n
            expected = view_of(state, deal, hand_id=hand, viewer=position)
            while True:
                line = next(queues[seat], None)
                if line is None:
                    return Prediction(warnings, states, f"ERROR: could not get action from seat {seat + 1}", hand)
                text = line.split(b"\0")[0].decode("latin-1")
                if text[:1] in ("#", ";"):
                    continue
                try:
                    seen, end = parse_match_state(text, game)
                except ProtocolError:
                    warnings.append("WARNING: bad state format in response")
                    continue
                if not seen.same_as(expected):
                    warnings.append("WARNING: ignoring un-requested response")
                    continue
                try:
                    if text[end : end + 1] != ":":
                        raise ProtocolError("no action")
                    action, _ = parse_action(text, game, end + 1)
                except ProtocolError:
                    warnings.append("WARNING: bad action format in response, changed to call")
                    action = CALL
                else:
                    action, warning = state.repair(action)
                    if warning:
                        warnings.append(warning)
                break
            state = state.apply(action)
        board = deal.board[: game.total_board_cards(state.round)]
        values = state.values([rank_hand(hole + board) for hole in deal.hole] if state.is_showdown() else None)
        names = [config.names[(p + hand) % n] for p in range(n)]
        states.append(format_state_line(state, deal, hand_id=hand, values=values, names=names))
    return Prediction(warnings, states, None, config.num_hands)


async def _fuzz_match(tmp_path: Path, index: int, game: Game, hostile: Hostile, num_hands: int, quiet: bool) -> int:
    config = MatchConfig(
        f"fuzz{index}", game, "fuzz", num_hands, index, tuple(f"S{i}" for i in range(game.num_players)),
        log_dir=tmp_path, quiet=quiet, t_response_ms=1500,
    )
    rng = random.Random(index)
    err = io.StringIO()
    calm = [bytearray() for _ in range(game.num_players)]
    results: list[MatchResult] = []

    async def dealer(task_status: trio.TaskStatus[tuple[int, ...]] = trio.TASK_STATUS_IGNORED) -> None:
        results.append(await serve_match(config, stdout=io.StringIO(), stderr=err, task_status=task_status))

    received: list[list[str]] = [[] for _ in range(game.num_players)]
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            ports = await nursery.start(dealer)
            for seat, port in enumerate(ports):
                if seat == hostile.seat:
                    nursery.start_soon(_hostile_agent, port, game, hostile, rng)
                else:
                    nursery.start_soon(scripted_agent, port, game, Script(default="c"), received[seat])
    (result,) = results

    # The calm seats send VERSION and "<state>:c\r\n" for every turn they were shown.
    for seat in range(game.num_players):
        if seat != hostile.seat:
            calm[seat] += VERSION
            for text in received[seat]:
                view, _ = parse_match_state(text, game)
                if view.is_my_turn():
                    calm[seat] += f"{text}:c\r\n".encode()
    streams = [bytes(hostile.sent) if s == hostile.seat else bytes(calm[s]) for s in range(game.num_players)]
    closed = [hostile.closed and s == hostile.seat for s in range(game.num_players)]
    predicted = _model(config, streams, closed)

    log = (tmp_path / f"fuzz{index}.log").read_text().splitlines()
    assert [line for line in log if line.startswith("STATE:")] == predicted.states
    assert result.hands_played == predicted.hands
    assert (result.aborted or "").split("\n")[0] == (predicted.aborted or "")
    if quiet:
        assert [line for line in err.getvalue().splitlines() if line.startswith("WARNING")] == predicted.warnings
    if predicted.aborted is None:
        assert log[-1].startswith("SCORE:") and result.exit_status == 0
    return hostile.lines


@pytest.mark.slow
async def test_hostile_agent_never_breaks_the_dealer(tmp_path: Path) -> None:
    games = [load_game("hunl"), load_game("holdem.limit.3p"), load_game("hulhe")]
    endings = ["disconnect", "half-disconnect", "complete", "disconnect", "half-disconnect", "complete", "silence"]
    total = 0
    index = 0
    while total < 10_000:
        game = games[index % len(games)]
        ending = endings[index % len(endings)] if index < 14 else "disconnect"
        hostile = Hostile(seat=index % game.num_players, budget=700, ending=ending)
        num_hands = 40 if ending == "complete" else 10_000
        total += await _fuzz_match(tmp_path, index, game, hostile, num_hands, quiet=index % 5 != 4)
        index += 1
    assert total >= 10_000
