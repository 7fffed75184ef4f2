"""Hands in the Poker Hand History format (PHH): written from any hands
:mod:`analysis.hand_files` reads, and read back into the same columns.

PHH (Kim, "Poker Hand History File Format Specification"; read and written by
PokerKit) is TOML: a ``.phh`` file holds one hand, a ``.phhs`` file many, each
under a ``[N]`` table. A hand names its ``variant`` (``FT`` fixed-limit or ``NT``
no-limit Texas hold'em), ``antes``, ``blinds_or_straddles``, the bet sizes
(``small_bet``/``big_bet``, or ``min_bet``), ``starting_stacks`` and its
``actions``: ``d dh p1 AsKd`` deals hole cards, ``d db 7h8h9h`` the board,
``p2 f``/``p2 cc`` fold and check-or-call, ``p2 cbr 300`` bets or raises **to**
300 on this street (ACPC's ``r300`` is to 300 for the whole hand, so the writer
subtracts what earlier streets took), and ``p1 sm AsKd`` shows at the end.
Players are numbered from the first to act after the flop (heads-up: the big
blind first, whose blind is listed second; :mod:`analysis.holdem`). We add
``players``, ``finishing_stacks`` and, in ``_``-prefixed fields the
specification leaves to users, the dealer's ``_hand_id``, the run's ``_seed``
for limit games ``_max_raises`` (raises allowed per street, ACPC's
``maxRaises``), which PHH does not carry, and where a portfolio agent played
``_components`` (the component that played each seat's hand, ``''`` for none:
:func:`analysis.hand_files.read_components`), so that its tables survive the trip.

:func:`read_phh` turns a file back into :class:`analysis.hands.Hands`: every
hand is replayed with :mod:`poker`'s rules (each action legal, the cards dealt
where the rounds say), its values are those of the betting and the cards, and
``finishing_stacks``, when given, must agree (to the odd chip of a split pot,
which ACPC splits exactly and PHH's writers give to one winner). The game is built from the first
hand's fields and every hand must be of it: ACPC logs and our tables have one
game per file. A file that breaks the rules raises one
:class:`analysis.hands.HandsError` line naming the file, the hand and the field,
quoting the damage with :func:`poker.excerpt.quote`.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any, Final

import numpy as np

from analysis.hands import NO_SEED, Hands, HandsError
from analysis.holdem import HOLDEM_BOARD, HoldemError, big_blind_seat, holdem_problem, seat_order, steps
from poker.cards import cards_from_text, cards_to_text
from poker.excerpt import quote
from poker.gamedef import UNLIMITED_RAISES, UNLIMITED_STACK, Betting, Game
from poker.hand_rank import hand_values
from poker.protocol import format_value
from poker.state import Action, ActionType, IllegalActionError, State

__all__ = ["write_phh", "phh_text", "phh_problem", "read_phh", "is_phh", "PHH_SUFFIXES"]

#: File names :func:`read_phh` reads: one hand, or many.
PHH_SUFFIXES: Final = (".phh", ".phhs")
#: PHH's codes for the two ACPC hold'em bettings.
_VARIANT: Final = {Betting.LIMIT: "FT", Betting.NOLIMIT: "NT"}
_BETTING: Final = {code: betting for betting, code in _VARIANT.items()}


def is_phh(path: Path | str) -> bool:
    """Whether ``path`` names a PHH file (``.phh`` or ``.phhs``)."""
    return str(path).endswith(PHH_SUFFIXES)


def _list(values: Iterable[object]) -> str:
    return "[" + ", ".join(map(str, values)) + "]"


def _string(text: str) -> str:
    """A TOML string: literal when it can be (no ``'`` nor control characters), else basic with escapes."""
    if "'" not in text and text.isprintable():
        return f"'{text}'"
    escaped = "".join(c if c.isprintable() and c not in '"\\' else f"\\U{ord(c):08x}" for c in text)
    return f'"{escaped}"'


def _game_fields(game: Game) -> list[str]:
    """The fields of a hand that the game fixes, in the specification's order."""
    order = seat_order(game)
    blinds = [game.blind[p] for p in order]
    if game.num_players == 2:
        blinds.reverse()  # heads-up lists the small blind first though p1 is the big blind
    lines = [f"variant = '{_VARIANT[game.betting]}'", f"antes = {_list([0] * game.num_players)}"]
    lines.append(f"blinds_or_straddles = {_list(blinds)}")
    if game.is_limit:
        lines += [f"small_bet = {game.raise_size[0]}", f"big_bet = {game.raise_size[2]}"]
    else:
        lines.append(f"min_bet = {game.big_blind}")
    lines.append(f"starting_stacks = {_list(game.stack[p] for p in order)}")
    return lines


def phh_problem(game: Game) -> str | None:
    """Why PHH cannot hold ``game``'s hands; None when it can (whoever offers
    a PHH download asks first: the hosted arena, ``arena play``)."""
    problem = holdem_problem(game)
    if problem is None and game.is_limit and (game.raise_size[0] != game.raise_size[1] or game.raise_size[2] != game.raise_size[3]):
        problem = "PHH's limit hold'em has one bet size before the turn and one from the turn on"
    return problem


def _check_game(game: Game) -> None:
    problem = phh_problem(game)
    if problem is not None:
        raise HoldemError(f"PHH: {problem}")


def phh_text(hands: Hands, row: int) -> str:
    """Hand ``row`` of ``hands`` as the text of a ``.phh`` file."""
    game = hands.game
    order = seat_order(game)
    seat_of = {p: k + 1 for k, p in enumerate(order)}
    actions = [f"d dh p{k + 1} {cards_to_text(int(c) for c in hands.hole[row][p])}" for k, p in enumerate(order)]
    walk, final, values = steps(hands, row)
    for step in walk:
        if step.action is None:
            actions.append(f"d db {cards_to_text(step.board)}")
        elif step.action.type is ActionType.FOLD:
            actions.append(f"p{step.seat + 1} f")
        elif step.action.type is ActionType.CALL:
            actions.append(f"p{step.seat + 1} cc")
        else:
            actions.append(f"p{step.seat + 1} cbr {step.street}")
    if final.is_showdown():
        actions += [f"p{seat_of[p]} sm {cards_to_text(int(c) for c in hands.hole[row][p])}" for p in order if not final.folded[p]]
    names = hands.names_at(row)
    lines = _game_fields(game)
    lines.append("actions = [" + ", ".join(f"'{a}'" for a in actions) + "]")
    lines.append(f"players = {_list(_string(names[p]) for p in order)}")
    lines.append(f"finishing_stacks = {_list(format_value(game.stack[p] + values[p]) for p in order)}")
    lines.append(f"_hand_id = {int(hands.hand_id[row])}")
    if int(hands.seed[row]) != NO_SEED:
        lines.append(f"_seed = {int(hands.seed[row])}")
    if game.is_limit:
        lines.append(f"_max_raises = {_list(game.max_raises)}")
    components = [hands.components[names[p]][row] if names[p] in hands.components else "" for p in order]
    if any(components):
        lines.append(f"_components = {_list(map(_string, components))}")
    return "\n".join(lines) + "\n"


def write_phh(hands: Hands) -> Iterator[str]:
    """``hands`` as a ``.phhs`` file, a hand at a time (``[1]``, ``[2]`` …).

    Raises:
        HoldemError: the game is not Texas hold'em as PHH has it.
    """
    _check_game(hands.game)
    for row in range(len(hands)):
        yield f"[{row + 1}]\n{phh_text(hands, row)}\n"


# -- reading ------------------------------------------------------------------------


class _Bad(Exception):
    """What is wrong with one action of a hand (:func:`_hand` names the action: only then is it quoted)."""


class _Broken(Exception):
    """A field that breaks the rules: ``field`` and what is wrong (raised inside one hand)."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")


def _ints(hand: dict[str, Any], name: str, count: int | None = None, *, low: int = 0) -> list[int]:
    """Field ``name`` as a list of whole numbers of at least ``low`` (``count`` of them, if given)."""
    value = hand.get(name)
    if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise _Broken(name, f"not a list of whole numbers: {quote(value)}")
    if count is not None and len(value) != count:
        raise _Broken(name, f"{len(value)} entries, not {count}: {quote(value)}")
    if any(v < low for v in value):
        raise _Broken(name, f"a number below {low}: {quote(value)}")
    return value


def _int(hand: dict[str, Any], name: str, default: int | None = None) -> int:
    value = hand.get(name, default)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise _Broken(name, f"not a whole number of at least 0: {quote(value)}")
    return value


def game_of_phh(hand: dict[str, Any]) -> Game:
    """The ACPC game a PHH hand's fields describe (players numbered as
    :func:`analysis.holdem.seat_order` numbers the shipped hold'em games: the
    first to act after the flop is position 0)."""
    variant = hand.get("variant")
    if variant not in _BETTING:
        raise _Broken("variant", f"{quote(variant)} is not 'FT' or 'NT' (Texas hold'em, the games ACPC plays)")
    stacks = _ints(hand, "starting_stacks", low=1)
    if max(stacks, default=0) > UNLIMITED_STACK:
        raise _Broken("starting_stacks", f"a stack above ACPC's largest, {UNLIMITED_STACK}: {quote(stacks)}")
    players = len(stacks)
    if not 2 <= players <= 10:
        raise _Broken("starting_stacks", f"{players} players; hold'em here seats 2 to 10")
    if any(_ints(hand, "antes", players)):
        raise _Broken("antes", "ACPC games have no antes")
    blinds = _ints(hand, "blinds_or_straddles", players)
    if any(b > s for b, s in zip(blinds, stacks)):
        raise _Broken("blinds_or_straddles", f"a blind above its player's stack: {quote(blinds)}")
    if players == 2:
        blinds = blinds[::-1]
    betting = _BETTING[variant]
    if betting is Betting.LIMIT:
        small, big = _int(hand, "small_bet"), _int(hand, "big_bet")
        raise_size = (small, small, big, big)
        max_raises = tuple(_ints(hand, "_max_raises", 4)) if "_max_raises" in hand else (UNLIMITED_RAISES,) * 4
        if max(max_raises) > UNLIMITED_RAISES:
            raise _Broken("_max_raises", f"above ACPC's largest, {UNLIMITED_RAISES}: {quote(list(max_raises))}")
    else:
        if _int(hand, "min_bet") != max(blinds):
            raise _Broken("min_bet", f"{hand['min_bet']} is not the big blind {max(blinds)}, as ACPC's no-limit has it")
        raise_size, max_raises = (0,) * 4, (UNLIMITED_RAISES,) * 4
    game = Game(
        betting=betting,
        num_players=players,
        num_rounds=4,
        stack=tuple(stacks),
        blind=tuple(blinds),
        raise_size=raise_size,
        first_player=((big_blind_seat(blinds) + 1) % players, 0, 0, 0),
        max_raises=max_raises,
        num_suits=4,
        num_ranks=13,
        num_hole_cards=2,
        num_board_cards=HOLDEM_BOARD,
    )
    problem = holdem_problem(game)
    if problem is not None:
        raise _Broken("blinds_or_straddles", f"{quote(hand['blinds_or_straddles'])}: {problem}")
    return game


@dataclass
class _Hand:
    """One hand read: by position, as :class:`analysis.hands.Hands` holds them."""

    hand_id: int
    seed: int
    names: tuple[str, ...]
    hole: list[list[int]]
    board: list[int]
    betting: str
    values: tuple[Fraction, ...]
    components: dict[str, str]


def _cards(text: str, count: int | None) -> list[int]:
    try:
        cards = list(cards_from_text(text))
    except ValueError:
        cards = []
    if not cards or (count is not None and len(cards) != count):
        raise _Bad(f"not {count or 'some'} known cards: {quote(text)}")
    return cards


class _Replay:
    """A hand's actions replayed with the rules, turned into ACPC's betting and deal."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.order = seat_order(game)
        self.state = State(game)
        self.hole: list[list[int] | None] = [None] * game.num_players
        self.board: list[int] = []
        self.shown: dict[int, list[int]] = {}
        self.base = 0  # the street's highest bet when it began (0 before the flop: blinds count)
        self.round = 0

    def position(self, label: str) -> int:
        """The position of player ``p<k>``."""
        number = label[1:]
        if not (label.startswith("p") and number.isascii() and number.isdigit() and 1 <= int(number) <= self.game.num_players):
            raise _Bad(f"no player {quote(label)} at this table of {self.game.num_players}")
        return self.order[int(number) - 1]

    def act(self, words: list[str]) -> None:
        match words:
            case ["d", "dh", label, cards]:
                self.hole[self.position(label)] = _cards(cards, self.game.num_hole_cards)
            case ["d", "db", cards]:
                self.deal_board(_cards(cards, None))
            case [label, "sm", *cards] if len(cards) <= 1:
                position = self.position(label)
                if cards and cards[0] != "-":
                    self.shown[position] = _cards(cards[0], self.game.num_hole_cards)
            case [label, ("f" | "cc") as verb]:
                self.bet(label, Action(ActionType.FOLD if verb == "f" else ActionType.CALL))
            case [label, "cbr", amount] if amount.isascii() and amount.isdigit() and len(amount) <= len(str(UNLIMITED_STACK)):
                self.bet(label, self.raise_to(int(amount)))
            case _:
                raise _Bad("not an action of PHH hold'em")

    def raise_to(self, street: int) -> Action:
        """``cbr`` to ``street`` chips on this street as ACPC's raise; a limit raise
        must go where :meth:`poker.state.State.raise_bounds` puts it (short stacks
        included), and a raise no rule allows is left to ``apply`` to refuse."""
        if not self.game.is_limit:
            return Action.raise_to(self.base + street)
        bounds = self.state.raise_bounds()
        if bounds is not None and self.base + street != bounds[0]:
            raise _Bad(f"a limit raise to {street} on this street; the limit is to {bounds[0] - self.base}")
        return Action(ActionType.RAISE)

    def bet(self, label: str, action: Action) -> None:
        if self.state.finished:
            raise _Bad("the betting is over")
        if any(h is None for h in self.hole):
            raise _Bad("a bet before every player's hole cards are dealt")
        if self.position(label) != self.state.current_player():
            raise _Bad(f"not {label}'s turn")
        if self.state.round != self.round:
            raise _Bad(f"a bet before the board of round {self.state.round} is dealt")
        try:
            self.state = self.state.apply(action)
        except IllegalActionError as error:
            raise _Bad(str(error)) from None

    def deal_board(self, cards: list[int]) -> None:
        self.round += 1
        if self.round >= self.game.num_rounds or len(cards) != self.game.num_board_cards[self.round]:
            raise _Bad(f"{len(cards)} board cards where hold'em deals {self.game.num_board_cards[min(self.round, 3)]}")
        if not self.state.finished and self.state.round != self.round:
            raise _Bad(f"the board of round {self.round} before its betting begins")
        self.base = self.state.max_spent
        self.board += cards

    def finish(self) -> tuple[list[list[int]], tuple[Fraction, ...]]:
        if not self.state.finished:
            raise _Broken("actions", f"the hand does not finish (betting {quote(self.state.betting_string())})")
        if self.state.is_showdown() and self.round != self.game.num_rounds - 1:
            raise _Broken("actions", "a showdown before the river is dealt")
        hole = self.hole
        if any(h is None for h in hole):
            raise _Broken("actions", "a player is dealt no hole cards")
        known = [c for h in hole if h is not None for c in h] + self.board
        if len(set(known)) != len(known):
            raise _Broken("actions", "a card dealt twice")
        for position, cards in self.shown.items():
            if sorted(cards) != sorted(hole[position] or []):
                raise _Broken("actions", f"p{self.order.index(position) + 1} shows cards it was not dealt")
        full = [h for h in hole if h is not None]
        return full, hand_values(self.state, full, self.board)


def _agree(finishing: list[Any], expected: list[float]) -> bool:
    """Whether a hand's ``finishing_stacks`` are the ``expected`` ones: to the chip
    where ACPC splits a pot exactly and PHH's writers (PokerKit among them) give
    the odd chip to one winner, the total exactly."""
    if not all(isinstance(f, (int, float, Decimal)) and not isinstance(f, bool) for f in finishing):
        return False
    close = all(abs(float(f) - e) < 1 for f, e in zip(finishing, expected))
    return close and math.isclose(sum(map(float, finishing)), sum(expected), abs_tol=1e-6)


def _hand(game: Game, hand: dict[str, Any], number: int) -> _Hand:
    """One hand of a file: replayed, checked, by position."""
    here = game_of_phh(hand)
    if here != game:
        raise _Broken("variant", "not the game named or that of the file's first hand (one game per file, as in an ACPC log)")
    actions = hand.get("actions")
    if not isinstance(actions, list) or not all(isinstance(a, str) for a in actions):
        raise _Broken("actions", f"not a list of strings: {quote(actions)}")
    replay = _Replay(game)
    for index, action in enumerate(actions):
        try:
            replay.act(action.partition("#")[0].split())
        except _Bad as error:
            raise _Broken(f"actions[{index}] {quote(action)}", str(error)) from None
    hole, values = replay.finish()
    order = seat_order(game)
    names: tuple[str, ...] = tuple(f"p{order.index(p) + 1}" for p in range(game.num_players))
    if "players" in hand:
        listed = hand["players"]
        if not isinstance(listed, list) or len(listed) != game.num_players or not all(isinstance(n, str) and n for n in listed):
            raise _Broken("players", f"not {game.num_players} names: {quote(listed)}")
        names = tuple(listed[order.index(p)] for p in range(game.num_players))
    if "finishing_stacks" in hand:
        finishing = hand["finishing_stacks"]
        if not isinstance(finishing, list) or len(finishing) != game.num_players:
            raise _Broken("finishing_stacks", f"not {game.num_players} numbers: {quote(finishing)}")
        expected = [float(game.stack[p] + values[p]) for p in order]
        if not _agree(finishing, expected):
            shown = ", ".join(format_value(e) for e in expected)
            raise _Broken("finishing_stacks", f"{quote(finishing)} are not those of the betting and cards ([{shown}])")
    if "_hand_id" in hand:
        hand_id = _int(hand, "_hand_id")
    else:
        hand_id = hand["hand"] if isinstance(hand.get("hand"), int) and hand["hand"] >= 0 else number
    seed = _int(hand, "_seed") if "_seed" in hand else NO_SEED
    components: dict[str, str] = {}
    if "_components" in hand:
        labels = hand["_components"]
        if not isinstance(labels, list) or len(labels) != game.num_players or not all(isinstance(c, str) for c in labels):
            raise _Broken("_components", f"not {game.num_players} component names: {quote(labels)}")
        components = {names[p]: labels[order.index(p)] for p in range(game.num_players) if labels[order.index(p)]}
    return _Hand(hand_id, seed, names, hole, replay.board, replay.state.betting_string(), values, components)


def _tables(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """The hands of a file, each with how an error line names it."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise HandsError(f"{path}: {error.strerror or error}") from None
    except UnicodeDecodeError as error:
        raise HandsError(f"{path}: not UTF-8 text (byte {error.start})") from None
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise HandsError(f"{path}: not TOML: {error}") from None
    if str(path).endswith(".phh"):
        return [("hand 1", document)]
    tables = [(f"hand {number} [{quote(key)}]", value) for number, (key, value) in enumerate(document.items(), 1)]
    for place, value in tables:
        if not isinstance(value, dict):
            raise HandsError(f"{path}: {place}: not a table of fields")
    return tables


def read_phh(path: Path, game: Game | None = None, *, skip_damaged: bool = False) -> Hands:
    """Every hand of a ``.phh`` or ``.phhs`` file. :attr:`Hands.line` is each
    hand's number in the file (from 1), :attr:`Hands.hand_id` its ``_hand_id``
    (or its ``hand``, or that number).

    Raises:
        HandsError: ``file: hand N: field: what is wrong`` (unless
            ``skip_damaged``, which leaves such hands out and lists their
            numbers), an unreadable file, or hands of another game than ``game``.
    """
    path = Path(path)
    read: list[tuple[int, _Hand]] = []
    skipped: list[int] = []
    for number, (place, hand) in enumerate(_tables(path), 1):
        try:
            if game is None:
                game = game_of_phh(hand)
            read.append((number, _hand(game, hand, number)))
        except _Broken as error:
            if not skip_damaged:
                raise HandsError(f"{path}: {place}: {error}") from None
            skipped.append(number)
    if game is None:
        raise HandsError(f"{path}: no hand to read")
    names = list(dict.fromkeys(n for _, h in read for n in h.names))
    players = game.num_players
    count = len(read)
    return Hands(
        game=game,
        source=str(path),
        hand_id=np.array([h.hand_id for _, h in read], dtype=np.int64),
        values=np.array([[float(v) for v in h.values] for _, h in read], dtype=np.float64).reshape(count, players),
        names=tuple(names),
        name_index=np.array([[names.index(n) for n in h.names] for _, h in read], dtype=np.int32).reshape(count, players),
        hole=np.array([h.hole for _, h in read], dtype=np.int8).reshape(count, players, game.num_hole_cards),
        board=np.array([h.board + [-1] * (sum(game.num_board_cards) - len(h.board)) for _, h in read], dtype=np.int8).reshape(
            count, sum(game.num_board_cards)
        ),
        betting=tuple(h.betting for _, h in read),
        line=np.array([n for n, _ in read], dtype=np.int64),
        seed=np.array([h.seed for _, h in read], dtype=np.int64),
        skipped=tuple(skipped),
        components={
            name: tuple(h.components.get(name, "") for _, h in read)
            for name in dict.fromkeys(name for _, h in read for name in h.components)
        },
    )
