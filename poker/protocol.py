"""ACPC protocol text: MATCHSTATE views, agent responses and log STATE lines.

Grammar and tolerances are the ACPC protocol's (docs/protocol.md, Messages). The readers
accept what the reference readers accept: case-insensitive cards, the legacy ``k``/``b``
and upper-case action letters, ``/`` anywhere in the betting (round boundaries come from
the rules, not the slashes), optional ``|`` between hole sections, ``%d`` raise sizes
(leading blanks and a sign). Every action read is checked against
:class:`poker.state.State`, so a MATCHSTATE with illegal betting does not parse. Writers
emit only the canonical forms.

Example (the reference dealer's heads-up limit transcript in
``tests/fixtures/acpc/spec_section5.md``, §5.1: its first message to seat 1)::

    MATCHSTATE:0:0::3c4d|
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from poker.cards import card_from_text, cards_to_text
from poker.deal import Deal
from poker.excerpt import quote
from poker.gamedef import MAX_NUM_ACTIONS, Game
from poker.state import CALL, Action, ActionType, IllegalActionError, State

__all__ = [
    "ProtocolError",
    "MatchState",
    "MatchStateReader",
    "Response",
    "StateLine",
    "VERSION_LINE",
    "KEY_PREFIX",
    "key_line",
    "READBUF_LEN",
    "parse_action",
    "parse_betting",
    "parse_match_state",
    "parse_response",
    "view_of",
    "format_value",
    "format_state_line",
    "parse_state_line",
]

VERSION_LINE = "VERSION:2.0.0"
#: Our extension (docs/protocol.md, Seat keys): an agent sends ``#KEY:<key>`` before its
#: version line to take a seat that has a secret key (our dealer skips it at a seat without
#: one; the reference dealer would take it for a bad version string).
KEY_PREFIX = b"#KEY:"
_KEY = re.compile(r"[!-~]{1,256}")


def key_line(key: str) -> bytes:
    """The line an agent sends before its version line to take a seat that has ``key``.

    Raises:
        ValueError: ``key`` is not 1 to 256 printable ASCII characters without spaces.
    """
    if not _KEY.fullmatch(key):
        raise ValueError(f"a seat key is 1 to 256 printable ASCII characters without spaces, not {key[:40]!r}")
    return KEY_PREFIX + key.encode("ascii") + b"\r\n"


#: The reference's line buffer (``net.h`` ``READBUF_LEN``): the longest
#: protocol line, terminator included. The reference reads with ``fgets``, so it keeps at
#: most ``READBUF_LEN - 1`` bytes of a line (room for C's NUL) and splits longer input;
#: the dealer (``dealer.seats``) and the agent (``agent.client``) both frame lines by it.
READBUF_LEN = 4096
_ACTION_LETTERS = {"f": ActionType.FOLD, "c": ActionType.CALL, "k": ActionType.CALL, "r": ActionType.RAISE, "b": ActionType.RAISE}
_SIZE = re.compile(r"[ \t\n\v\f\r]*([+-]?\d+)")
# scanf's %u: leading blanks and a sign are accepted and the value wraps.
_HEADER = re.compile(r"MATCHSTATE:[ \t\n\v\f\r]*([+-]?\d+):[ \t\n\v\f\r]*([+-]?\d+):")


class ProtocolError(ValueError):
    """Text that is not a valid protocol message; the message quotes it."""


def parse_action(text: str, game: Game, start: int = 0) -> tuple[Action | None, int]:
    """Read one action token at ``text[start:]`` like the reference ``readAction``.

    Returns the action and the index after it. An unknown letter gives ``None``
    (the dealer turns it into a call as an *invalid action*); a no-limit raise
    without a readable size raises :class:`ProtocolError` (*bad action format*).
    In limit games a raise never has a size, so ``r17218`` reads as ``r``."""
    kind = _ACTION_LETTERS.get(text[start : start + 1].lower())
    if kind is None:
        return None, start
    end = start + 1
    if kind is ActionType.RAISE and not game.is_limit:
        match = _SIZE.match(text, end)
        if match is None:
            raise ProtocolError(f"no-limit raise without a size in {quote(text)}")
        digits = match.group(1)
        # Padding zeros are allowed ("r000200" is 200); more than ten other digits
        # cannot fit, and int() refuses over 4300 digits with a plain ValueError.
        magnitude = digits.lstrip("+-").lstrip("0") or "0"
        size = (-1 if digits[0] == "-" else 1) * int(magnitude) if len(magnitude) <= 10 else 2**31
        if not -(2**31) <= size < 2**31:
            shown = digits if len(digits) <= 24 else f"{digits[:24]}..."
            raise ProtocolError(f"raise size {shown} in {quote(text)} does not fit a 32-bit integer")
        return Action(kind, size), match.end()
    return Action(kind), end


class _PrefixCache:
    """States reached by betting prefixes, so that the messages of one hand (each
    the previous betting plus an action or two) cost a few ``apply()`` calls
    instead of a replay. States are immutable, so sharing them is safe.

    The keys are text an agent sent (the dealer parses responses), so the cache
    is bounded by an estimate of its memory, not by its number of entries:
    ``nbytes`` charges each entry its key's length, :data:`_ENTRY_BYTES` and
    :data:`_ACTION_BYTES` per action of its state (an upper estimate of the
    dict entry, key tuple, ``State`` and its action tuples, as measured with
    tracemalloc), and the whole cache is cleared when a new entry would take it
    over ``max_bytes``. Clearing only costs one replay per hand in flight."""

    __slots__ = ("entries", "nbytes", "max_bytes")

    def __init__(self, max_bytes: int) -> None:
        self.entries: dict[tuple[Game, str], State] = {}
        self.nbytes = 0
        self.max_bytes = max_bytes

    def get(self, game: Game, betting: str) -> State | None:
        return self.entries.get((game, betting))

    def put(self, game: Game, betting: str, state: State, num_actions: int) -> None:
        cost = len(betting) + _ENTRY_BYTES + _ACTION_BYTES * num_actions
        if cost > self.max_bytes:
            return
        if self.nbytes + cost > self.max_bytes:
            self.clear()
        key = (game, betting)
        if key not in self.entries:
            self.nbytes += cost
        self.entries[key] = state

    def clear(self) -> None:
        self.entries.clear()
        self.nbytes = 0


_ENTRY_BYTES = 768
_ACTION_BYTES = 32
#: Memory the prefix cache may hold (estimated as described in :class:`_PrefixCache`).
PREFIX_CACHE_MAX_BYTES = 8 * 2**20
_PREFIX_CACHE = _PrefixCache(PREFIX_CACHE_MAX_BYTES)
# How many of the longest prefixes of a betting string are looked up: enough for
# the actions of a whole orbit since the previous message of a seat (ACPC games
# have at most 10 players), few enough that a hostile string of thousands of
# tokens costs one replay, not thousands of slices and hashes.
_PREFIX_LOOKUPS = 16


def parse_betting(text: str, game: Game) -> State:
    """The state reached by a betting string such as ``rrc/cr``; every action must
    be legal. ``/`` characters are skipped wherever they appear."""
    state, end = _read_betting(text, 0, game)
    if end != len(text):
        raise ProtocolError(f"unreadable betting {quote(text[end:])} in {quote(text)}")
    return state


_Token = tuple[int, int, Action]  # start, end, action


def _read_tokens(text: str, pos: int, game: Game) -> tuple[list[_Token], int]:
    """The action tokens from ``text[pos:]`` until a non-action (``/`` skipped),
    and the index after the betting. No more than one past the most a hand can
    hold (:data:`~poker.gamedef.MAX_NUM_ACTIONS` a round): that one is illegal
    whatever came before, so a damaged line of millions of actions is refused
    after a few hundred instead of read whole first."""
    tokens: list[_Token] = []
    end = len(text)
    most = game.num_rounds * MAX_NUM_ACTIONS + 1
    while pos < end and len(tokens) < most:
        if text[pos] == "/":
            pos += 1
            continue
        try:
            action, after = parse_action(text, game, pos)
        except ProtocolError:
            break
        if action is None:
            break
        tokens.append((pos, after, action))
        pos = after
    return tokens, pos


def _apply_tokens(text: str, state: State, tokens: Sequence[_Token]) -> State:
    """``state`` after the actions of ``tokens``; each must be legal."""
    for token_start, after, action in tokens:
        try:
            state = state.apply(action)
        except IllegalActionError as error:
            raise ProtocolError(
                f"illegal action {quote(text[token_start:after])} in betting of {quote(text)}: {error}"
            ) from None
    return state


def _read_betting(text: str, pos: int, game: Game) -> tuple[State, int]:
    """Read actions from ``text[pos:]`` until a non-action; the state reached and
    the index after the betting. Every action must be legal."""
    start = pos
    tokens, pos = _read_tokens(text, pos, game)
    # Resume from the longest prefix already seen (keys end at an action, so the
    # canonical "rrc/" of one message is the prefix "rrc" of the next, "rrc/c").
    state, first = State(game), 0
    for k in range(len(tokens), max(0, len(tokens) - _PREFIX_LOOKUPS), -1):
        cached = _PREFIX_CACHE.get(game, text[start : tokens[k - 1][1]])
        if cached is not None:
            state, first = cached, k
            break
    state = _apply_tokens(text, state, tokens[first:])
    if tokens and first < len(tokens):
        _PREFIX_CACHE.put(game, text[start : tokens[-1][1]], state, len(tokens))
    return state, pos


def _read_cards(text: str, pos: int, count: int) -> tuple[tuple[int, ...], int]:
    """Read up to ``count`` cards; stops at the first non-card."""
    cards: list[int] = []
    while len(cards) < count:
        try:
            cards.append(card_from_text(text[pos : pos + 2]))
        except ValueError:
            break
        pos += 2
    return tuple(cards), pos


@dataclass(frozen=True)
class MatchState:
    """One player's view of a hand: ``hole[p]`` is empty where p's cards are
    hidden; ``board`` holds the cards of every round reached. ``viewer`` is a
    position (relative to the button), not a seat."""

    viewer: int
    hand_id: int
    state: State
    hole: tuple[tuple[int, ...], ...]
    board: tuple[int, ...]

    @property
    def game(self) -> Game:
        return self.state.game

    def is_my_turn(self) -> bool:
        """True when the hand is live and the viewer is to act: the only time to answer."""
        return not self.state.finished and self.state.current_player() == self.viewer

    def same_as(self, other: MatchState) -> bool:
        """The reference ``matchStatesEqual``: viewer, hand, betting, board through
        the current round, and the viewer's own cards (others' cards not compared)."""
        return (
            self.viewer == other.viewer
            and self.hand_id == other.hand_id
            and self.state.round == other.state.round
            and self.state.actions == other.state.actions
            and self.board == other.board
            and self.hole[self.viewer] == other.hole[other.viewer]
        )

    def __str__(self) -> str:
        cards = _cards_text(self.state, self.hole, self.board)
        return f"MATCHSTATE:{self.viewer}:{self.hand_id}:{self.state.betting_string()}:{cards}"


def _cards_text(state: State, hole: Sequence[Sequence[int]], board: Sequence[int]) -> str:
    """Hole sections joined by '|', then the board of each round reached, '/'-led
    from round 1 on (round 0's board, empty in standard games, follows directly)."""
    game = state.game
    text = "|".join(cards_to_text(h) for h in hole) + cards_to_text(board[: game.num_board_cards[0]])
    for round_ in range(1, state.round + 1):
        start = game.board_start(round_)
        text += "/" + cards_to_text(board[start : start + game.num_board_cards[round_]])
    return text


def parse_match_state(text: str, game: Game) -> tuple[MatchState, int]:
    """Read a MATCHSTATE at the start of ``text`` (``readMatchState``); returns the
    view and how many characters it used, which is where a response puts ``:``."""
    return _parse_match_state(text, game, None)


class MatchStateReader:
    """:func:`parse_match_state` for the successive messages of one connection, at
    a cost that does not grow with the hand.

    Within a hand each message's betting extends the previous one's (``rrc/``,
    then ``rrc/c``), so the reader keeps the last betting text and its state and,
    when the next betting starts with that text, applies only the new actions.
    Anything else (a new hand, a reconnection, text that does not extend the
    last) is parsed in full. The views and errors are exactly those of
    :func:`parse_match_state`: the betting state depends on the betting text
    alone, and the old text ends at a token boundary of the new one (checked:
    a no-limit size such as ``r200`` must not go on as ``r2000``)."""

    __slots__ = ("game", "_betting", "_state")

    def __init__(self, game: Game) -> None:
        self.game = game
        self._betting = ""  # the betting text of the last message read ...
        self._state = State(game)  # ... and the state it reaches

    def parse(self, text: str) -> tuple[MatchState, int]:
        """The view in ``text`` and how many characters it used, as
        :func:`parse_match_state`."""
        return _parse_match_state(text, self.game, self)

    def read_betting(self, text: str, start: int) -> tuple[State, int]:
        """:func:`_read_betting` from ``text[start:]``, resuming from the last
        betting read when ``text`` extends it."""
        known = self._betting
        resume = start + len(known)
        if text.startswith(known, start) and text[resume : resume + 1] not in _DIGITS:
            tokens, end = _read_tokens(text, resume, self.game)
            state = _apply_tokens(text, self._state, tokens)
        else:
            state, end = _read_betting(text, start, self.game)
        self._betting, self._state = text[start:end], state
        return state, end


_DIGITS = frozenset("0123456789")


def _parse_match_state(text: str, game: Game, reader: MatchStateReader | None) -> tuple[MatchState, int]:
    header = _HEADER.match(text)
    if header is None:
        raise ProtocolError(f"not a MATCHSTATE message: {quote(text)}")
    # The reference reads the position as a uint8 and the hand as a uint32, wrapping.
    viewer, hand_id = int(header.group(1)) % 2**8, int(header.group(2)) % 2**32
    if viewer >= game.num_players:
        raise ProtocolError(f"position {viewer} in {quote(text)} is not below numPlayers {game.num_players}")
    if reader is None:
        state, pos = _read_betting(text, header.end(), game)
    else:
        state, pos = reader.read_betting(text, header.end())
    if text[pos : pos + 1] != ":":
        raise ProtocolError(f"betting in {quote(text)} is not followed by ':' at column {pos}")
    pos += 1
    hole: list[tuple[int, ...]] = []
    for p in range(game.num_players):
        if p and text[pos : pos + 1] == "|":
            pos += 1
        cards, pos = _read_cards(text, pos, game.num_hole_cards)
        if len(cards) not in (0, game.num_hole_cards):
            raise ProtocolError(f"position {p} has {len(cards)} hole cards in {quote(text)}, expected {game.num_hole_cards}")
        hole.append(cards)
    board: list[int] = []
    for round_ in range(state.round + 1):
        if round_ and text[pos : pos + 1] == "/":
            pos += 1
        cards, pos = _read_cards(text, pos, game.num_board_cards[round_])
        if len(cards) != game.num_board_cards[round_]:
            raise ProtocolError(f"round {round_} needs {game.num_board_cards[round_]} board cards in {quote(text)}")
        board.extend(cards)
    # Like the reference reader, repeated cards are not rejected here: a view only
    # has to be compared with the dealer's own (MatchState.same_as).
    return MatchState(viewer, hand_id, state, tuple(hole), tuple(board)), pos


@dataclass(frozen=True)
class Response:
    """An agent's reply: the state it answers and its action. ``action`` is
    ``None`` for an unknown action letter; ``bad_format`` is set when no action
    could be read at all (no ``:`` or a no-limit raise without size), in which case
    the reference substitutes a call."""

    match_state: MatchState
    action: Action | None
    bad_format: bool = False


def parse_response(line: str, game: Game) -> Response:
    """Read an agent's ``<matchstate>:<action>`` line as the dealer does. Raises
    :class:`ProtocolError` when the state part does not parse; characters after
    the action token are ignored."""
    match_state, pos = parse_match_state(line, game)
    if line[pos : pos + 1] != ":":
        return Response(match_state, CALL, bad_format=True)
    try:
        action, _ = parse_action(line, game, pos + 1)
    except ProtocolError:
        return Response(match_state, CALL, bad_format=True)
    return Response(match_state, action)


def view_of(state: State, deal: Deal, *, hand_id: int, viewer: int) -> MatchState:
    """What position ``viewer`` is shown: its own cards, others' only at a
    showdown and only if they did not fold, and the board through the round."""
    showdown = state.is_showdown()
    hole = tuple(
        cards if p == viewer or (showdown and not state.folded[p]) else ()
        for p, cards in enumerate(deal.hole)
    )
    board = deal.board[: state.game.total_board_cards(state.round)]
    return MatchState(viewer, hand_id, state, hole, board)


def format_value(value: Fraction | float) -> str:
    """A value as the reference prints it: six decimals, trailing zeros and point
    removed (``10``, ``2.5``, ``3.333333``, ``-20000``)."""
    text = f"{float(value):.6f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


@dataclass(frozen=True)
class StateLine:
    """One ``STATE:`` line of a ``.log``: everything about a finished hand, in
    position order (names follow the seat rotation)."""

    hand_id: int
    state: State
    deal: Deal
    values: tuple[float, ...]
    names: tuple[str, ...]


def format_state_line(
    state: State, deal: Deal, *, hand_id: int, values: Sequence[Fraction | float], names: Sequence[str]
) -> str:
    """``STATE:<hand>:<betting>:<all cards>:<values>:<names>``, all cards shown."""
    cards = _cards_text(state, deal.hole, deal.board)
    return (
        f"STATE:{hand_id}:{state.betting_string()}:{cards}:"
        f"{'|'.join(format_value(v) for v in values)}:{'|'.join(names)}"
    )


def parse_state_line(line: str, game: Game) -> StateLine:
    """Read a ``.log`` STATE line. All hole cards must be present; the deal's
    board holds the cards through the final round reached (a pre-flop fold-out
    has none). Values are floats as printed, and finite."""
    text = line.rstrip("\r\n")
    if not text.startswith("STATE:"):
        raise ProtocolError(f"not a STATE line: {quote(line)}")
    try:
        head, values_text, names_text = text.rsplit(":", 2)
        as_view = "MATCHSTATE:0:" + head.removeprefix("STATE:")
        ms, end = parse_match_state(as_view, game)
        values = tuple(float(v) for v in values_text.split("|"))
    except (ValueError, ProtocolError) as error:
        raise ProtocolError(f"unreadable STATE line {quote(line)}: {error}") from None
    if end != len(as_view):
        raise ProtocolError(f"unreadable cards in STATE line {quote(line)}")
    if any(len(h) != game.num_hole_cards for h in ms.hole):
        raise ProtocolError(f"STATE line {quote(line)} does not show every hole card")
    names = tuple(names_text.split("|"))
    if len(values) != game.num_players or len(names) != game.num_players:
        raise ProtocolError(f"STATE line {quote(line)} needs {game.num_players} values and names")
    if not all(map(math.isfinite, values)):  # "nan", "inf" and "1e999" read as floats; no hand is worth them
        raise ProtocolError(f"STATE line {quote(line)} has a value that is not a finite number")
    return StateLine(ms.hand_id, ms.state, Deal(hole=ms.hole, board=ms.board), values, names)
