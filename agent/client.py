"""The agent side of the ACPC protocol: connect, handshake, read states, answer (trio).

What the reference ``example_player`` does, and what SPEC.md §6 asks of an agent:

1. connect to the seat's port and send ``VERSION:2.0.0\\r\\n`` (§2.2);
2. read the dealer's lines: several may arrive in one read and one may span
   several reads; a line ends at ``\\n`` with an optional ``\\r`` before it and
   is at most 4096 bytes with its terminator (READBUF_LEN, §2.1); lines that
   start with ``#`` or ``;`` are comments and blank lines are skipped;
3. parse each line as a MATCHSTATE (the reference exits on a parse error; we
   stop with an :class:`AgentError` that quotes the line);
4. answer only when the hand is live and the viewer is to act (§2.4), with the
   state text exactly as received, ``:``, the action and ``\\r\\n`` (§2.5);
5. stop cleanly at end of file: there is no end-of-match message.

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

from poker.gamedef import Game
from poker.protocol import VERSION_LINE, MatchState, ProtocolError, parse_match_state
from poker.state import Action, IllegalActionError
from strategies.base import Strategy

__all__ = ["AgentError", "Decide", "PlaySummary", "MAX_LINE_BYTES", "LineReader", "play", "play_stream"]

#: Longest dealer line, terminator included (the reference READBUF_LEN).
MAX_LINE_BYTES: Final = 4096
_RECEIVE_BYTES: Final = 65536

#: An async decision source used instead of ``Strategy.act``.
Decide = Callable[[MatchState], Awaitable[Action]]


class AgentError(Exception):
    """The match cannot go on from our side: the dealer sent something that is not
    a valid line for this game, or the strategy chose an illegal action."""


@dataclass(frozen=True)
class PlaySummary:
    """What one connection saw: hands started and actions sent."""

    hands: int
    actions: int


class LineReader:
    """Splits a byte stream into lines ending at ``\\n`` (a ``\\r`` before it is
    dropped). Keeps at most ``max_line_bytes`` of an unfinished line."""

    def __init__(self, stream: trio.abc.ReceiveStream, *, max_line_bytes: int = MAX_LINE_BYTES) -> None:
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


async def play(
    host: str, port: int, game: Game, strategy: Strategy, *, decide: Decide | None = None
) -> PlaySummary:
    """Connect to the dealer's seat at ``host:port`` and play the whole match.

    Returns when the dealer closes the connection. ``decide`` replaces
    ``strategy.act`` when given. ``strategy.close()`` is called at the end.

    Raises:
        OSError: the connection cannot be opened.
        AgentError: a malformed dealer line, or an illegal strategy action.
    """
    stream = await trio.open_tcp_stream(host, port)
    async with stream:
        return await play_stream(stream, game, strategy, decide=decide)


async def play_stream(
    stream: trio.abc.Stream, game: Game, strategy: Strategy, *, decide: Decide | None = None
) -> PlaySummary:
    """:func:`play` over an already open stream (TCP, or in-memory in tests)."""
    hands = actions = 0
    last_hand: int | None = None
    reader = LineReader(stream)
    try:
        if not await _send(stream, f"{VERSION_LINE}\r\n"):
            return PlaySummary(hands, actions)
        while (raw := await reader.receive_line()) is not None:
            text = _decode(raw)
            if not text or text[0] in "#;":
                continue
            try:
                view, consumed = parse_match_state(text, game)
            except ProtocolError as error:
                raise AgentError(f"the dealer sent a line that is not a match state of this game: {error}") from None
            if view.hand_id != last_hand:
                last_hand = view.hand_id
                hands += 1
                strategy.new_hand(view)
            strategy.observe(view)
            if not view.is_my_turn():
                continue
            action = await decide(view) if decide is not None else strategy.act(view)
            try:
                view.state.verify(action)
            except IllegalActionError as error:
                raise AgentError(f"strategy {strategy.name!r} chose {action} in {text!r}: {error}") from None
            if not await _send(stream, f"{text[:consumed]}:{action}\r\n"):
                break
            actions += 1
    finally:
        strategy.close()
    return PlaySummary(hands, actions)


def _decode(raw: bytes) -> str:
    try:
        return raw.decode("ascii")
    except UnicodeDecodeError:
        raise AgentError(f"the dealer sent a line that is not ASCII: {raw[:200]!r}") from None


async def _send(stream: trio.abc.SendStream, text: str) -> bool:
    """Send ``text``; False if the dealer has already closed the connection (the
    match is over for us, as at end of file)."""
    try:
        await stream.send_all(text.encode("ascii"))
    except trio.BrokenResourceError:
        return False
    return True
