"""The agent side of the ACPC protocol: connect, handshake, read states, answer (trio).

What the reference ``example_player`` does, and what the ACPC protocol asks of an agent
(docs/protocol.md, Messages):

1. connect to the seat's port and send ``VERSION:2.0.0\\r\\n`` (after a
   ``#KEY:<key>`` line when the seat has a secret key: our extension,
   :func:`poker.protocol.key_line`);
2. read the dealer's lines: several may arrive in one read and one may span
   several reads; a line ends at ``\\n`` with an optional ``\\r`` before it and
   is at most :data:`poker.protocol.READBUF_LEN` bytes with its terminator; lines
   that start with ``#`` or ``;`` are comments and blank lines are skipped;
3. parse each line as a MATCHSTATE (the reference exits on a parse error; we
   stop with an :class:`AgentError` that quotes the line);
4. answer only when the hand is live and the viewer is to act, with the
   state text exactly as received, ``:``, the action and ``\\r\\n``;
5. stop cleanly at end of file: there is no end-of-match message. A reset or
   failed connection is not an end of match: it raises :class:`ConnectionLost`.

One comment line is read, not skipped: a seat that turns the agent away says
why in a ``#REFUSED:`` line before any match state and closes
(:func:`refused_line`; the hosted arena's port of a seating not yet open names
the port to use), and the agent stops with :class:`SeatRefused` quoting it. An
agent written to the protocol alone skips the comment and sees the connection
end before any hand, as it would a dealer that closed.

The cost of a message does not grow with the hand: a :class:`~poker.protocol.MatchStateReader`
applies only the actions that are new since the previous message.

Decisions come from ``strategy.act`` or, when given, from an async ``decide``
callback (a person at a web table, a remote solver): the read loop simply
awaits it. The action is checked against the rules before it is sent, so a
faulty strategy stops the agent with a message instead of drawing dealer
WARNINGs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final

import trio

from poker.excerpt import quote
from poker.gamedef import Game
from poker.hand_rank import hand_values
from poker.protocol import READBUF_LEN, VERSION_LINE, MatchState, MatchStateReader, ProtocolError, key_line
from poker.state import Action, IllegalActionError
from strategies.base import Strategy

__all__ = [
    "AgentError",
    "ConnectionLost",
    "Decide",
    "ParseMatchState",
    "PlaySummary",
    "LineReader",
    "REFUSED_PREFIX",
    "SeatRefused",
    "Session",
    "play",
    "play_stream",
    "refused_line",
]


_RECEIVE_BYTES: Final = 65536
#: The comment a seat sends before closing a connection it turns away, then why (our extension).
REFUSED_PREFIX: Final = "#REFUSED:"

#: An async decision source used instead of ``Strategy.act``.
Decide = Callable[[MatchState], Awaitable[Action]]
#: Reads the view at the start of a line and how many characters it used.
ParseMatchState = Callable[[str], tuple[MatchState, int]]


class AgentError(Exception):
    """The match cannot go on from our side: the dealer sent something that is not
    a valid line for this game, or the strategy chose an illegal action."""


class ConnectionLost(AgentError):
    """The connection to the dealer was reset or failed in the middle of the match
    (an end of file is the normal end, not this)."""


class SeatRefused(AgentError):
    """The seat turned the connection away before any hand, saying why
    (:func:`refused_line`); ``str()`` is its reason."""


def refused_line(reason: str) -> bytes:
    """The line a seat sends to a connection it turns away (then it closes):
    a comment, which the protocol lets a dealer send and every agent skip, so
    only an agent that knows it (ours) reads the reason. One line: a line end
    or a character outside printable ASCII in ``reason`` becomes a space, and
    it is cut to fit :data:`poker.protocol.READBUF_LEN`."""
    text = "".join(char if " " <= char <= "~" else " " for char in reason)
    return f"{REFUSED_PREFIX} {text}"[: READBUF_LEN - 2].encode("ascii") + b"\r\n"


@dataclass(frozen=True)
class PlaySummary:
    """What one connection saw: hands started and actions sent, and the hands
    seen to their end (``finished``) with this seat's chips won over them."""

    hands: int
    actions: int
    finished: int
    chips: float


class LineReader:
    """Splits a byte stream into lines ending at ``\\n`` (a ``\\r`` before it is
    dropped). Keeps at most ``max_line_bytes`` of an unfinished line."""

    def __init__(self, stream: trio.abc.ReceiveStream, *, max_line_bytes: int = READBUF_LEN) -> None:
        self._stream = stream
        self._max = max_line_bytes
        self._buffer = bytearray()
        self._searched = 0  # bytes of the buffer known to hold no b"\n"

    async def receive_line(self) -> bytes | None:
        """The next line without its terminator, or ``None`` at end of stream (an
        unterminated fragment before the end is dropped: nobody will read a reply).

        Raises:
            AgentError: more than ``max_line_bytes`` without a line end.
        """
        while True:
            end = self._buffer.find(b"\n", self._searched)
            if end >= self._max:
                self._searched = self._max
            elif end >= 0:
                line = bytes(self._buffer[:end])
                del self._buffer[: end + 1]
                self._searched = 0
                return line[:-1] if line.endswith(b"\r") else line
            else:
                self._searched = len(self._buffer)
            if self._searched >= self._max:
                raise AgentError(
                    f"the dealer sent a line longer than {self._max} bytes, the limit with its"
                    f" terminator: {bytes(self._buffer[:80])!r}..."
                )
            data = await self._stream.receive_some(_RECEIVE_BYTES)
            if not data:
                return None
            self._buffer += data


class Session:
    """The agent's side of one connection without the I/O: parse each dealer line,
    call the strategy's hooks, and write the answer. :func:`play_stream` drives
    it; a benchmark or a test can feed it lines directly."""

    def __init__(self, game: Game, strategy: Strategy, *, parse: ParseMatchState | None = None) -> None:
        """``parse`` reads one line's view (default: a :class:`MatchStateReader`
        of ``game``, whose cost does not grow with the hand; the benchmark
        passes a full :func:`~poker.protocol.parse_match_state` to compare)."""
        self.strategy = strategy
        self.hands = 0
        self.actions = 0
        self.finished = 0
        self.chips = 0.0
        self._parse = MatchStateReader(game).parse if parse is None else parse
        self._last_hand: int | None = None

    def receive(self, text: str) -> tuple[MatchState, int] | None:
        """Take one dealer line (decoded, without its terminator). Returns the view
        and the length of its state text when the agent must answer, else
        ``None`` (a comment, a blank line, another player's turn, a finished hand).

        Raises:
            SeatRefused: a :data:`REFUSED_PREFIX` line before any match state.
            AgentError: the line is not a match state of this game.
        """
        if not text or text[0] in "#;":
            if self.hands == 0 and text.startswith(REFUSED_PREFIX):
                raise SeatRefused(text.removeprefix(REFUSED_PREFIX).strip())
            return None
        try:
            view, consumed = self._parse(text)
        except ProtocolError as error:
            raise AgentError(f"the dealer sent a line that is not a match state of this game: {error}") from None
        if view.hand_id != self._last_hand:
            self._last_hand = view.hand_id
            self.hands += 1
            self.strategy.new_hand(view)
        self.strategy.observe(view)
        if view.state.finished:  # the dealer shows each seat each hand's end once
            self.finished += 1
            self.chips += float(hand_values(view.state, view.hole, view.board)[view.viewer])
        return (view, consumed) if view.is_my_turn() else None

    def answer(self, text: str, consumed: int, view: MatchState, action: Action) -> str:
        """The response line to ``text`` (its state part echoed verbatim).

        Raises:
            AgentError: ``action`` is not legal in ``view``.
        """
        try:
            view.state.verify(action)
        except IllegalActionError as error:
            raise AgentError(f"strategy {self.strategy.name!r} chose {action} in {quote(text)}: {error}") from None
        return f"{text[:consumed]}:{action}\r\n"

    def summary(self) -> PlaySummary:
        return PlaySummary(self.hands, self.actions, self.finished, self.chips)


async def play(
    host: str, port: int, game: Game, strategy: Strategy, *, decide: Decide | None = None, key: str | None = None
) -> PlaySummary:
    """Connect to the dealer's seat at ``host:port`` and play the whole match.

    Returns when the dealer closes the connection. ``decide`` replaces
    ``strategy.act`` when given; ``key`` is the seat's secret, sent in its
    line before the version. ``strategy.close()`` is called at the end.

    Raises:
        OSError: the connection cannot be opened.
        ConnectionLost: the connection was reset or failed during the match.
        AgentError: a malformed dealer line, or an illegal strategy action.
        ValueError: ``key`` is not a key (:func:`poker.protocol.key_line`).
    """
    handshake = (b"" if key is None else key_line(key)) + f"{VERSION_LINE}\r\n".encode()
    stream = await trio.open_tcp_stream(host, port)
    async with stream:
        return await play_stream(stream, game, strategy, decide=decide, handshake=handshake)


async def play_stream(
    stream: trio.abc.Stream, game: Game, strategy: Strategy, *, decide: Decide | None = None,
    handshake: bytes = f"{VERSION_LINE}\r\n".encode(),
) -> PlaySummary:
    """:func:`play` over an already open stream (TCP, or in-memory in tests),
    starting with ``handshake`` (the version line, a key line before it for a keyed seat)."""
    session = Session(game, strategy)
    reader = LineReader(stream)
    try:
        await _send(stream, handshake, session)
        while (raw := await _receive(reader, session)) is not None:
            text = _decode(raw)
            turn = session.receive(text)
            if turn is None:
                continue
            view, consumed = turn
            action = await decide(view) if decide is not None else strategy.act(view)
            await _send(stream, session.answer(text, consumed, view, action), session)
            session.actions += 1
    finally:
        strategy.close()
    return session.summary()


def _decode(raw: bytes) -> str:
    try:
        return raw.decode("ascii")
    except UnicodeDecodeError:
        raise AgentError(f"the dealer sent a line that is not ASCII: {raw[:200]!r}") from None


def _lost(error: Exception, session: Session) -> ConnectionLost:
    cause = error.__cause__ if isinstance(error.__cause__, OSError) else error
    return ConnectionLost(
        f"the connection to the dealer was lost (hands started: {session.hands},"
        f" actions sent: {session.actions}): {cause}"
    )


async def _receive(reader: LineReader, session: Session) -> bytes | None:
    try:
        return await reader.receive_line()
    except (trio.BrokenResourceError, OSError) as error:
        raise _lost(error, session) from error


async def _send(stream: trio.abc.SendStream, text: str | bytes, session: Session) -> None:
    try:
        await stream.send_all(text if isinstance(text, bytes) else text.encode("ascii"))
    except (trio.BrokenResourceError, OSError) as error:
        raise _lost(error, session) from error
