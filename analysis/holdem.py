"""What the hand-history formats of the wider poker world share: hold'em only,
and a seating order of their own.

PHH (:mod:`analysis.phh`) and PokerStars text (:mod:`analysis.pokerstars`) know
Texas hold'em, not Kuhn or Leduc poker, and both number the players from the
first to act after the flop, the button last. An ACPC game numbers positions
from its own ``blind`` and ``firstPlayer`` lines, so the writers map a position
to its place in that order (:func:`seat_order`), and a game whose pre-flop
order no hold'em table has is refused here, once, in one line.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction

from analysis.hands import Hands
from poker.gamedef import Game
from poker.hand_rank import hand_values
from poker.protocol import parse_betting
from poker.state import Action, ActionType, State

__all__ = ["HoldemError", "holdem_problem", "big_blind_seat", "seat_order", "Step", "steps"]

#: Board cards dealt in each round of Texas hold'em.
HOLDEM_BOARD = (0, 3, 1, 1)


class HoldemError(ValueError):
    """A game or hand these formats cannot hold; the message is one line."""


def holdem_problem(game: Game) -> str | None:
    """Why ``game`` is not Texas hold'em as PHH and PokerStars write it; None when it is."""
    if (game.num_suits, game.num_ranks, game.num_hole_cards, game.num_board_cards) != (4, 13, 2, HOLDEM_BOARD):
        return "only Texas hold'em has this format (not Kuhn, Leduc or other decks and boards)"
    order = seat_order(game)
    players = game.num_players
    blinds = [game.blind[p] for p in order]
    big = big_blind_seat(blinds)
    if any(first != game.first_player[1] for first in game.first_player[1:]):
        return "hold'em acts first after the flop with the same player every round"
    if order.index(game.first_player[0]) != (big + 1) % players:
        return "hold'em acts first before the flop with the player after the big blind"
    if players == 2 and blinds[0] < blinds[1]:
        return "heads-up hold'em has the big blind act first after the flop"
    return None


def big_blind_seat(blinds: Sequence[int]) -> int:
    """The place of the big blind among ``blinds`` listed in :func:`seat_order`'s
    order: the largest (the last of equals), and heads-up the first seat, who
    posts it and acts first after the flop. PHH's reader seats its first actor
    after it; :func:`holdem_problem` checks a game does."""
    if len(blinds) == 2:
        return 0
    return max(range(len(blinds)), key=lambda k: (blinds[k], k))


def seat_order(game: Game) -> list[int]:
    """Positions in the order PHH and PokerStars seat them: the first to act
    after the flop first, the button last."""
    first = game.first_player[1] if game.num_rounds > 1 else 0
    return [(first + k) % game.num_players for k in range(game.num_players)]


@dataclass(frozen=True)
class Step:
    """One event of a hand in the order a history tells it: ``board`` cards
    dealt (``seat`` -1), or the action of the player in ``seat`` (place in
    :func:`seat_order`) with ``street`` chips its bet on this street comes to
    (blinds included before the flop), ``called`` what a call added and
    ``raised_by`` what a bet or raise added over the street's highest bet;
    ``all_in`` whether the action put the player's last chip in."""

    seat: int
    action: Action | None
    board: tuple[int, ...] = ()
    street: int = 0
    called: int = 0
    raised_by: int = 0
    round: int = 0
    all_in: bool = False


def steps(hands: Hands, row: int) -> tuple[Iterator[Step], State, tuple[Fraction, ...]]:
    """The steps of hand ``row``, its final state and its values by position (in
    :func:`seat_order`'s order the caller maps them itself)."""
    game = hands.game
    final = parse_betting(hands.betting[row], game)
    board = [int(c) for c in hands.board[row] if c >= 0]
    values = hand_values(final, [list(map(int, h)) for h in hands.hole[row]], board)
    return _walk(game, final, board), final, values


def _walk(game: Game, final: State, board: list[int]) -> Iterator[Step]:
    place = {p: k for k, p in enumerate(seat_order(game))}
    state = State(game)
    dealt_rounds = max(r for r in range(game.num_rounds) if game.total_board_cards(r) <= len(board))
    for round_, (actions, actors) in enumerate(zip(final.actions, final.actors)):
        if round_:
            yield Step(-1, None, tuple(board[game.board_start(round_) : game.total_board_cards(round_)]), round=round_)
        base = state.max_spent if round_ else 0
        for action, actor in zip(actions, actors):
            before_max, before_mine = state.max_spent, state.spent[actor]
            state = state.apply(action)
            spent = state.spent[actor]
            raised = spent - before_max if action.type is ActionType.RAISE else 0
            called = spent - before_mine if action.type is ActionType.CALL else 0
            all_in = action.type is not ActionType.FOLD and spent >= game.stack[actor]
            yield Step(place[actor], action, street=spent - base, called=called, raised_by=raised, round=round_, all_in=all_in)
    for round_ in range(len(final.actions), dealt_rounds + 1):
        yield Step(-1, None, tuple(board[game.board_start(round_) : game.total_board_cards(round_)]), round=round_)
