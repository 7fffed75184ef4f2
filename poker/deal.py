"""Card dealing identical to the reference dealer for a given seed (docs/protocol.md, The
dealer's rules: Cards).

The reference seeds MT19937 with ``init_genrand(seed)`` (not Python's
``init_by_array``), then deals every hand up front: hole cards position by
position, then the board round by round, each card drawn as
``deck[genrand_int32() % remaining]`` with the last card moved into the hole.
Each hand uses a fixed number of draws, so hand *h*'s cards depend only on the
seed, *h* and the game, never on the betting; that is what makes duplicate
matches (same seed, seats permuted) deal every agent its opponent's cards.

We build the 624-word state with the ``init_genrand`` recurrence and hand it to
Python's own Mersenne Twister, whose ``getrandbits(32)`` is ``genrand_int32``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cache

import numpy as np
import numpy.typing as npt

from poker.gamedef import Game

__all__ = ["Deal", "Dealer", "init_genrand_state", "private_hands"]

_N = 624


def init_genrand_state(seed: int) -> tuple[int, ...]:
    """The MT19937 state words after ``init_genrand(seed)`` (2002 reference)."""
    if not 0 <= seed < 2**32:
        raise ValueError(f"seed {seed!r} is not a 32-bit unsigned integer")
    mt = [seed]
    for i in range(1, _N):
        prev = mt[-1]
        mt.append((1812433253 * (prev ^ (prev >> 30)) + i) & 0xFFFFFFFF)
    return tuple(mt)


@dataclass(frozen=True)
class Deal:
    """The cards of one hand: ``hole[p]`` for position p, and the whole board."""

    hole: tuple[tuple[int, ...], ...]
    board: tuple[int, ...]


class Dealer:
    """Deals successive hands of one match from one seeded generator.

    >>> from poker.gamedef import load_game
    >>> from poker.cards import cards_to_text
    >>> d = Dealer(load_game("holdem.limit.2p.reverse_blinds"), seed=11).next_hand()
    >>> [cards_to_text(h) for h in d.hole], cards_to_text(d.board)
    (['3c4d', '9d6c'], '6d7hAsKsTd')
    """

    def __init__(self, game: Game, *, seed: int) -> None:
        self._game = game
        self._deck = game.deck()
        self._rng = random.Random()
        self._rng.setstate((3, init_genrand_state(seed) + (_N,), None))

    def genrand_int32(self) -> int:
        """The next raw 32-bit output, as the reference's ``genrand_int32``."""
        return self._rng.getrandbits(32)

    def next_hand(self) -> Deal:
        """Deal the next hand's cards to positions, then the board."""
        game = self._game
        deck = list(self._deck)

        def draw() -> int:
            index = self._rng.getrandbits(32) % len(deck)
            card = deck[index]
            deck[index] = deck[-1]
            deck.pop()
            return card

        hole = tuple(tuple(draw() for _ in range(game.num_hole_cards)) for _ in range(game.num_players))
        board = tuple(draw() for _ in range(sum(game.num_board_cards)))
        return Deal(hole=hole, board=board)


@cache
def private_hands(game: Game) -> npt.NDArray[np.int8]:
    """Every private hand of one player, ``int8[n_private_hands, num_hole_cards]``:
    :func:`poker.evaluate.private_hands` of the game's deck (the
    ``num_hole_cards``-subsets, each ascending, in lexicographic order). Kuhn has
    3 rows (Qs, Ks, As), Leduc 6, hold'em 1326.

    The rows are the hand axis that every policy, range, solver and estimator
    shares, and which hands a deal can give is a rule of the game: so it lives
    here, in the bottom layer, where the CFR engine and the analysis reach it
    without importing the agents' interface (:mod:`strategies.base`)."""
    from poker.evaluate import private_hands as hands_of_deck  # numba: import only when asked

    hands: npt.NDArray[np.int8] = hands_of_deck(game.deck(), game.num_hole_cards)
    return hands
