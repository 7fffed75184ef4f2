"""The agent client against a scripted fake dealer on 127.0.0.1: framing, exact bytes, errors."""

from __future__ import annotations

import socket
import struct
import sys
from dataclasses import dataclass

import pytest
import trio
import trio.testing

from agent.client import AgentError, ConnectionLost, LineReader, PlaySummary, SeatRefused, Session, play, refused_line
from poker import protocol
from poker.deal import Dealer
from poker.gamedef import Game, load_game
from poker.protocol import READBUF_LEN, MatchState, view_of
from poker.state import CALL, FOLD, Action, State
from strategies import Strategy, make_strategy

KUHN = load_game("kuhn")
HUNL = load_game("hunl")
VERSION = b"VERSION:2.0.0\r\n"


@dataclass(frozen=True)
class Expect:
    """The fake dealer waits until the agent has sent these bytes next."""

    data: bytes


@dataclass(frozen=True)
class Pause:
    """The fake dealer sleeps, so the next bytes go out in a separate segment."""

    seconds: float = 0.02


@dataclass(frozen=True)
class Reset:
    """The fake dealer resets the connection (SO_LINGER 0) instead of closing it."""


Step = bytes | Expect | Pause | Reset


async def fake_dealer(script: list[Step], *, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED) -> bytes:
    """Accept one agent, play ``script``, half-close, and return every byte the
    agent sent until it closed its side."""
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    task_status.started(listeners[0].socket.getsockname()[1])
    stream = await listeners[0].accept()
    await listeners[0].aclose()
    received = bytearray()
    async with stream:
        for step in script:
            if isinstance(step, bytes):
                await stream.send_all(step)
            elif isinstance(step, Pause):
                await trio.sleep(step.seconds)
            elif isinstance(step, Reset):
                stream.socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                return bytes(received)
            else:
                wanted = len(received) + len(step.data)
                while len(received) < wanted:
                    data = await stream.receive_some()
                    assert data, f"agent closed before sending {step.data!r}; got {bytes(received)!r}"
                    received += data
        await stream.send_eof()
        while data := await stream.receive_some():
            received += data
    return bytes(received)


async def run(script: list[Step], spec: str = "always-raise", game_name: str = "kuhn") -> tuple[bytes, PlaySummary]:
    game = load_game(game_name)
    result: dict[str, bytes] = {}

    async def dealer(task_status: trio.TaskStatus[int]) -> None:
        result["sent"] = await fake_dealer(script, task_status=task_status)

    failure: AgentError | None = None
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(dealer)
            try:
                summary = await play("127.0.0.1", port, game, make_strategy(spec, game, seed=1))
            except AgentError as error:  # raised outside the nursery, not in an ExceptionGroup
                failure = error
                nursery.cancel_scope.cancel()
    if failure is not None:
        raise failure
    return result["sent"], summary


async def test_plays_two_kuhn_hands_with_exact_bytes() -> None:
    # Hand 0: we are position 0 (first to act) and bet; the opponent calls; showdown.
    # Hand 1: we are position 1; the opponent checks, we bet, it folds.
    script: list[Step] = [
        Expect(VERSION),
        b"MATCHSTATE:0:0::Ks|\r\n",
        Expect(b"MATCHSTATE:0:0::Ks|:r\r\n"),
        b"MATCHSTATE:0:0:r:Ks|\r\nMATCHSTATE:0:0:rc:Ks|Qs\r\n",  # two messages in one packet
        b"MATCHSTATE:1:1::|As\r\nMATCHSTATE:1:1:c:|As\r\n",
        Expect(b"MATCHSTATE:1:1:c:|As:r\r\n"),
        b"MATCHSTATE:1:1:cr:|As\r\nMATCHSTATE:1:1:crf:|As\r\n",
    ]
    sent, summary = await run(script)
    assert sent == VERSION + b"MATCHSTATE:0:0::Ks|:r\r\n" + b"MATCHSTATE:1:1:c:|As:r\r\n"
    assert summary == PlaySummary(hands=2, actions=2, finished=2, chips=3.0)  # +2 at showdown, +1 on the fold


async def test_message_split_across_packets() -> None:
    script: list[Step] = [
        Expect(VERSION),
        b"MATCHSTATE:0:0:",
        Pause(),
        b":K",
        Pause(),
        b"s|\r",
        Pause(),
        b"\n",
        Expect(b"MATCHSTATE:0:0::Ks|:r\r\n"),
    ]
    sent, _ = await run(script)
    assert sent == VERSION + b"MATCHSTATE:0:0::Ks|:r\r\n"


async def test_comments_blank_lines_and_bare_newlines() -> None:
    script: list[Step] = [
        Expect(VERSION),
        b"# a comment\r\n;GUI command\n\r\nMATCHSTATE:0:0::Ks|\n",
        Expect(b"MATCHSTATE:0:0::Ks|:c\r\n"),
    ]
    sent, _ = await run(script, spec="always-call")
    assert sent == VERSION + b"MATCHSTATE:0:0::Ks|:c\r\n"


async def test_a_refused_line_before_any_state_stops_with_its_reason() -> None:
    """A seat that turns the agent away says why in a #REFUSED: comment and
    closes: the agent stops with that reason, not a quiet end of a match of no hands."""
    line = refused_line("port 9001 is seating 2's\r\nof match m; seating 1 plays on port 9000")
    assert line == b"#REFUSED: port 9001 is seating 2's  of match m; seating 1 plays on port 9000\r\n"  # one line
    with pytest.raises(SeatRefused) as refused:
        await run([Expect(VERSION), b"# a comment first\r\n", line, Pause(1)])
    assert str(refused.value) == "port 9001 is seating 2's  of match m; seating 1 plays on port 9000"
    assert len(refused_line("x" * 5000)) == READBUF_LEN  # cut to the longest line, its terminator included


async def test_a_refused_line_once_a_hand_is_dealt_is_a_comment() -> None:
    """Only before the first state: afterwards the line is skipped as the protocol's comments are."""
    script: list[Step] = [Expect(VERSION), b"MATCHSTATE:1:0::|Qs\r\n", refused_line("late"), b"MATCHSTATE:1:0:rf:|Qs\r\n"]
    sent, summary = await run(script, spec="always-fold")
    assert (sent, summary) == (VERSION, PlaySummary(hands=1, actions=0, finished=1, chips=-1.0))


async def test_answers_only_on_its_turn() -> None:
    # Position 1 sees the opponent's turn, then a finished hand: neither needs an answer.
    script: list[Step] = [
        Expect(VERSION),
        b"MATCHSTATE:1:0::|Qs\r\n",
        Pause(),
        b"MATCHSTATE:1:0:rf:|Qs\r\n",
    ]
    sent, summary = await run(script, spec="always-fold")
    assert sent == VERSION
    assert summary == PlaySummary(hands=1, actions=0, finished=1, chips=-1.0)  # our ante, folded


async def test_echoes_the_state_text_verbatim() -> None:
    # Lower-case ranks and legacy 'k'/'b' letters parse; the reply repeats them as received.
    script: list[Step] = [
        Expect(VERSION),
        b"MATCHSTATE:0:0:b:ks|\r\n",  # not our turn (position 1 acts)
        b"MATCHSTATE:1:3:b:|ks\r\n",
        Expect(b"MATCHSTATE:1:3:b:|ks:f\r\n"),
    ]
    sent, _ = await run(script, spec="always-fold")
    assert sent.endswith(b"MATCHSTATE:1:3:b:|ks:f\r\n")


async def test_nolimit_raise_carries_the_size() -> None:
    script: list[Step] = [
        Expect(VERSION),
        b"MATCHSTATE:1:0::|9d6c\r\n",
        Expect(b"MATCHSTATE:1:0::|9d6c:r300\r\n"),
    ]
    sent, _ = await run(script, spec="always-raise:size=pot", game_name="hunl")
    assert sent == VERSION + b"MATCHSTATE:1:0::|9d6c:r300\r\n"


async def test_eof_in_the_middle_of_a_line_ends_quietly() -> None:
    sent, summary = await run([Expect(VERSION), b"MATCHSTATE:0:0::K"])
    assert sent == VERSION
    assert summary == PlaySummary(hands=0, actions=0, finished=0, chips=0.0)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (b"GARBAGE\r\n", r"not a match state of this game: not a MATCHSTATE message: 'GARBAGE'"),
        (b"MATCHSTATE:2:0::Ks|\r\n", r"position 2 in 'MATCHSTATE:2:0::Ks\|' is not below numPlayers 2"),
        (b"MATCHSTATE:0:0:rr:Ks|\r\n", r"illegal action 'r' in betting of 'MATCHSTATE:0:0:rr:Ks\|'"),
        (b"MATCHSTATE:0:0::K\xe9|\r\n", r"not ASCII: b'MATCHSTATE:0:0::K\\xe9\|'"),
        (b"#" + b"x" * 4200 + b"\r\n", r"a line longer than 4096 bytes, the limit with its terminator: b'#xxx"),
    ],
)
async def test_malformed_dealer_lines_stop_with_a_clear_error(line: bytes, message: str) -> None:
    with pytest.raises(AgentError, match=message):
        await run([Expect(VERSION), line, Pause(1)])


async def test_line_limit_is_the_reference_buffer() -> None:
    assert READBUF_LEN == 4096
    too_long = b"#" + b"x" * (READBUF_LEN - 2) + b"\r\n"  # one byte over, terminator included
    with pytest.raises(AgentError, match="longer than 4096 bytes"):
        await run([Expect(VERSION), too_long, Pause(1)])


@pytest.mark.parametrize("last", [b"MATCHSTATE:1:0::|Ks\r\n", b"MATCHSTATE:0:0::Ks|\r\n"], ids=["waiting", "to-act"])
async def test_a_reset_connection_is_not_the_end_of_the_match(last: bytes) -> None:
    with pytest.raises(ConnectionLost, match="the connection to the dealer was lost"):
        await run([Expect(VERSION), last, Pause(0.1), Reset()])


async def test_longest_line_is_accepted() -> None:
    comment = b"#" + b"x" * (4096 - 3) + b"\r\n"  # 4096 bytes with the terminator
    script: list[Step] = [Expect(VERSION), comment, b"MATCHSTATE:0:0::Ks|\r\n", Expect(b"MATCHSTATE:0:0::Ks|:r\r\n")]
    sent, _ = await run(script)
    assert sent.endswith(b":r\r\n")


class Scripted(Strategy):
    """Plays a fixed action and records the hooks it saw."""

    def __init__(self, action: Action) -> None:
        self.action = action
        self.calls: list[str] = []

    def new_hand(self, view: MatchState) -> None:
        self.calls.append(f"new_hand {view.hand_id}")

    def observe(self, view: MatchState) -> None:
        self.calls.append(f"observe {view.state.betting_string()}")

    def act(self, view: MatchState) -> Action:
        self.calls.append("act")
        return self.action

    def close(self) -> None:
        self.calls.append("close")


async def test_strategy_hooks_and_async_decide() -> None:
    strategy = Scripted(FOLD)
    decided: list[str] = []

    async def decide(view: MatchState) -> Action:
        await trio.sleep(0)  # e.g. waiting for a person's click
        decided.append(str(view))
        return CALL

    script: list[Step] = [Expect(VERSION), b"MATCHSTATE:0:0::Ks|\r\n", Expect(b"MATCHSTATE:0:0::Ks|:c\r\n"),
                          b"MATCHSTATE:0:0:c:Ks|\r\n"]
    async with trio.open_nursery() as nursery:
        port = await nursery.start(fake_dealer, script)
        summary = await play("127.0.0.1", port, KUHN, strategy, decide=decide)
    assert summary == PlaySummary(hands=1, actions=1, finished=0, chips=0.0)  # the hand never ended
    assert decided == ["MATCHSTATE:0:0::Ks|"]
    assert strategy.calls == ["new_hand 0", "observe ", "observe c", "close"]


async def test_illegal_strategy_action_is_not_sent() -> None:
    strategy = Scripted(FOLD)  # folding with a free check is illegal
    async with trio.open_nursery() as nursery:
        port = await nursery.start(fake_dealer, [Expect(VERSION), b"MATCHSTATE:0:0::Ks|\r\n", Pause(1)])
        with pytest.raises(AgentError, match=r"chose f in 'MATCHSTATE:0:0::Ks\|': fold is not legal when a check"):
            await play("127.0.0.1", port, KUHN, strategy)
        nursery.cancel_scope.cancel()
    assert strategy.calls[-1] == "close"


async def test_line_reader_exact_chunks() -> None:
    stream = trio.testing.MemoryReceiveStream()
    chunks = [b"ab", b"c\r", b"\nd\n\ne", b"f\r\n", b"tail"]
    for chunk in chunks:
        stream.put_data(chunk)
    stream.put_eof()
    reader = LineReader(stream, max_line_bytes=8)
    lines = [await reader.receive_line() for _ in range(5)]
    assert lines == [b"abc", b"d", b"", b"ef", None]


async def test_cli_plays_and_reports_errors(tmp_path: object) -> None:
    script: list[Step] = [Expect(VERSION), b"MATCHSTATE:0:0::Ks|\r\n", Expect(b"MATCHSTATE:0:0::Ks|:c\r\n")]
    bad: list[Step] = [Expect(VERSION), b"HELLO\r\n", Pause(1)]
    for steps, status in ((script, 0), (bad, 1)):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(fake_dealer, steps)
            done = await trio.run_process(
                [sys.executable, "-m", "agent", "kuhn", "127.0.0.1", str(port), "--strategy", "always-call"],
                capture_stderr=True,
                check=False,
            )
            nursery.cancel_scope.cancel()
        assert done.returncode == status
        if status:
            assert done.stderr.decode() == (
                "arena agent: error: the dealer sent a line that is not a match state of this game:"
                " not a MATCHSTATE message: 'HELLO'\n"
            )
        else:  # the normal end: its summary, one line
            assert done.stderr.decode() == "arena agent: the match is over: 0 hands, +0 chips\n"


def test_session_reads_each_action_once_however_long_the_hand(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every message repeats the hand's betting; re-reading it all made the cost of
    # a message grow with the hand (1 ms at 199 actions). Count the tokens read.
    deal, state = Dealer(HUNL, seed=3).next_hand(), State(HUNL)
    texts = [str(view_of(state, deal, hand_id=0, viewer=0))]
    while (bounds := state.raise_bounds()) is not None and len(state.actions[state.round]) < 60:
        state = state.apply(Action.raise_to(bounds[0]))
        texts.append(str(view_of(state, deal, hand_id=0, viewer=0)))
    read: list[int] = []
    real = protocol.parse_action

    def counted(text: str, game: Game, start: int = 0) -> tuple[Action | None, int]:
        read.append(start)
        return real(text, game, start)

    monkeypatch.setattr(protocol, "parse_action", counted)
    session = Session(HUNL, make_strategy("always-call", HUNL))
    for text in texts:
        if (turn := session.receive(text)) is not None:
            session.answer(text, turn[1], turn[0], CALL)
    assert len(texts) == 61
    assert len(read) <= 3 * len(texts)  # one new token and the stop per message; re-reading all: 1891
