"""A game's cards in the arrays the card-abstraction kernels take, and the
enumeration helpers the feature, bucketing and joint-table builds share.

Suit isomorphism (Johanson thesis ch2 §2.4): boards are enumerated once per
class of suit permutations (hold'em: 1755 flops, 16432 turns, 134459 rivers),
each weighted by its class size; :class:`CardTables` holds the permutations as
card maps and the hands they map onto each other, and the canonical boards of
every board size a round uses. Boards list the cards in the order dealt (flop,
turn, river), which perfect recall needs: :func:`deal_orders` lists the ways a
board's cards could have been dealt over the rounds.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import math
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from poker.deal import private_hands
from poker.gamedef import Game, format_game
from strategies.cfr.abstraction import _kernels as _k

__all__ = [
    "AbstractionError",
    "CardTables",
    "Progress",
    "card_tables",
    "combinations_table",
    "deal_orders",
    "run_chunks",
]

#: ``progress(stage, done, total)`` is called from the calling thread as chunks finish.
Progress = Callable[[str, int, int], None]

_MAX_HANDS = 2048  # strength-count sort keys hold the hand index in 11 bits


class AbstractionError(ValueError):
    """A card abstraction spec, file, board or game the card-abstraction modules cannot use."""


class CardTables:
    """The game's cards as the kernels want them (hands in :func:`private_hands` order).

    ``perm_maps`` (``int64[P, 52]``) maps cards under each suit permutation,
    ``hand_map[p, h]`` is the hand permutation p makes of hand h, ``hand_sets``
    the card bit set of each hand, ``total_cards[r]`` the board size of round r
    and ``digest`` a short hash of the game definition (cache file names)."""

    def __init__(self, game: Game) -> None:
        if game.num_hole_cards not in (1, 2):
            raise AbstractionError(f"card abstraction handles 1 or 2 hole cards; the game deals {game.num_hole_cards}")
        self.game = game
        self.last = game.num_rounds - 1
        self.total_cards = np.array([game.total_board_cards(r) for r in range(game.num_rounds)], np.int64)
        if self.total_cards[-1] + game.num_hole_cards > 7:
            raise AbstractionError("hands are ranked from at most 7 cards: hole cards plus the final board")
        self.deck = np.array(sorted(game.deck()), dtype=np.int64)
        self.deck_bits = sum(1 << int(c) for c in self.deck)
        self.hands = private_hands(game).astype(np.int64)
        if len(self.hands) > _MAX_HANDS:
            raise AbstractionError(f"the game has {len(self.hands)} private hands; at most {_MAX_HANDS} are supported")
        self.hand_sets = np.array([_k.cardset_of(h) for h in self.hands], dtype=np.int64)
        suits = sorted({int(c) % 4 for c in self.deck})
        maps = []
        for image in itertools.permutations(suits):
            card_map = np.arange(52, dtype=np.int64)
            for s, t in zip(suits, image):
                card_map[self.deck[self.deck % 4 == s]] = self.deck[self.deck % 4 == s] - s + t
            maps.append(card_map)
        self.perm_maps = np.array(maps, dtype=np.int64)
        index = {tuple(h): i for i, h in enumerate(self.hands.tolist())}
        self.hand_map = np.array(
            [[index[tuple(sorted(card_map[h].tolist()))] for h in self.hands] for card_map in self.perm_maps],
            dtype=np.int32,
        )
        self.digest = hashlib.sha256(format_game(game).encode()).hexdigest()[:16]

    def opponents(self, board_size: int) -> int:
        """Opponent hands that avoid one hand and a board of ``board_size`` cards."""
        h = self.game.num_hole_cards
        return math.comb(len(self.deck) - board_size - h, h)

    def completions(self, board_size: int) -> int:
        """Run-outs to the final board that one hand can see from a board of ``board_size`` cards."""
        left = len(self.deck) - board_size - self.game.num_hole_cards
        return math.comb(left, int(self.total_cards[-1]) - board_size)

    def valid_per_board(self, board_size: int) -> int:
        """Private hands that avoid a board of ``board_size`` cards."""
        return math.comb(len(self.deck) - board_size, self.game.num_hole_cards)

    @cached_property
    def canonical(self) -> dict[int, tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]]:
        """Canonical boards of each board size used by a round: (cards, class sizes),
        ascending by board mask (the order the kernels' look-ups search)."""
        out = {}
        for size in sorted({int(t) for t in self.total_cards}):
            cards, orbit = _k.canonical_boards(self.deck, size, self.perm_maps)
            order = np.argsort(self.masks(cards), kind="stable")
            out[size] = (cards[order], orbit[order])
        return out

    @staticmethod
    def masks(boards: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """Board mask (bit = card id) of each row."""
        masks: npt.NDArray[np.int64] = np.zeros(len(boards), dtype=np.int64)
        for column in boards.T:
            masks |= np.int64(1) << column
        return masks

    def check_board(self, round: int, board: npt.ArrayLike) -> npt.NDArray[np.int64]:
        """``board`` as int64 card ids, or an error unless it holds round ``round``'s cards."""
        if not 0 <= round <= self.last:
            raise AbstractionError(f"round {round!r} is outside 0..{self.last}")
        cards = np.asarray(board, dtype=np.int64).reshape(-1)
        wanted = int(self.total_cards[round])
        if cards.size != wanted:
            raise AbstractionError(f"round {round} needs {wanted} board cards, got {cards.size}: {cards.tolist()}")
        seen = 0
        for card in cards.tolist():
            bit = 1 << card if 0 <= card < 64 else 0
            if not bit & self.deck_bits or bit & seen:
                raise AbstractionError(f"board {cards.tolist()} repeats a card or holds a card outside the deck")
            seen |= bit
        return cards

    def strength_counts(self, board: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """``2 * wins + ties`` of every hand with ``board`` (-1 for clashes)."""
        out = np.empty((1, len(self.hands)), dtype=np.int64)
        _k.board_strengths(board.reshape(1, -1), self.hand_sets, self.hands, out)
        counts: npt.NDArray[np.int64] = out[0]
        return counts


@functools.lru_cache(maxsize=8)
def card_tables(game: Game) -> CardTables:
    """The (immutable) :class:`CardTables` of a game, built once: building them takes milliseconds."""
    return CardTables(game)


def deal_orders(game: Game, round: int | None = None) -> npt.NDArray[np.int64]:
    """Every way to deal a round-``round`` board's cards (default: the final
    board) over rounds 0..round, ``int64[O, c]``: row o lists positions of the
    (sorted) board cards in deal order, each round's positions ascending
    (a hold'em river: 20 = 10 flops x 2 turns)."""
    last = game.num_rounds - 1 if round is None else round
    size = game.total_board_cards(last)
    orders: list[list[int]] = [[]]
    for r in range(last + 1):
        orders = [
            order + list(chosen)
            for order in orders
            for chosen in itertools.combinations([p for p in range(size) if p not in order], game.num_board_cards[r])
        ]
    return np.array(orders, dtype=np.int64).reshape(len(orders), size)


def combinations_table(n: int, m: int) -> npt.NDArray[np.int64]:
    """``int64[C(n, m), m]``: every m-subset of ``range(n)``, ascending (run-outs by deck position)."""
    return np.array(list(itertools.combinations(range(n), m)), dtype=np.int64).reshape(-1, m)


def run_chunks(
    count: int, chunk: int, work: Callable[[int, int], Any], workers: int, stage: str, progress: Progress | None
) -> list[Any]:
    """``work(start, stop)`` over ``range(count)`` in chunks on ``workers`` threads
    (the kernels release the GIL); the results in chunk order."""
    bounds = [(s, min(s + chunk, count)) for s in range(0, count, chunk)]
    results: list[Any] = []
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        for done, result in enumerate(pool.map(lambda b: work(*b), bounds), start=1):
            results.append(result)
            if progress is not None:
                progress(stage, done, len(bounds))
    return results
