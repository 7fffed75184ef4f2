"""Hand ranking with the ACPC reference dealer's values, plus showdown equity helpers.

A hand of 1 to 7 cards (card id ``rank * 4 + suit``, rank 0 = "2" … 12 = "A") gets
the integer that ``rankCardset`` in the reference's ``game.c`` gives it (docs/protocol.md,
The betting rules). Higher is better and equal values split the pot. The value is exactly:

=================  ==========================================  ==============
class              value                                       reserved block
=================  ==========================================  ==============
high card          colex5(ranks)                               0..1286
pair (rank p)      1287 + 286·p + colex3(other ranks)          1287..5004
two pair (p > q)   5005 + 286·p + 13·q + top(other ranks)      5005..8605
trips (rank t)     8606 + 78·t + colex2(other ranks)           8606..9619
straight           9620 + top rank (A-2-3-4-5 has top 3)       9620..9632
flush              9633 + colex5(ranks of the flush suit)      9633..10919
full house         10920 + 78·t + p                            10920..11933
quads (rank q)     11934 + 13·q + top(other ranks)             11934..12102
straight flush     12103 + top rank                            12103..12115
=================  ==========================================  ==============

Not every value in a block occurs. For example, the wheel is 9623, the lowest
straight a hand can make, and a royal flush is 12115. The reference's header
comment in ``evalHandTables`` gives these blocks.

``colexK`` takes the K highest ranks (all of them if there are fewer), ascending
``b_1 < … < b_j``, and sums ``C(b_i, i)``. ``top`` is the highest rank, or 0 when
none is left. The best five cards count, so kickers beyond five are ignored. In
two pair, a third pair can be the kicker. In a full house, t is the highest trips
and p the highest other rank held at least twice.

With fewer than five cards, straights and flushes cannot happen and the kickers
present are used. So a single card is worth its rank index (Kuhn: J < Q < K < A
are 9 < 10 < 11 < 12), and Leduc's two cards compare as pair first (1287 + 286·p),
then high card then low card (``C(low, 1) + C(high, 2)``). Suits never rank.
Compare values only between hands with the same number of cards: that is how
the reference uses them. The values of all 5-card hands take 7462 distinct levels.

The kernels (numba, single thread, no Python per hand) live in ``_eval_kernels``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum

import numpy as np
import numpy.typing as npt

from poker import _eval_kernels as _k
from poker import rank_tables as _t
from poker.hand_rank import MAX_HAND_CARDS, NUM_CARDS, bad_hand_message, integer_array, rank_hand

# numba-callable building blocks, for other packages' kernels: a hand is a bitset of
# ``card_bit(card)`` values and ``rank_cardset(bits)`` is its value as documented above.
card_bit = _k.card_bit
rank_cardset = _k.rank_cardset

__all__ = [
    "card_bit",
    "rank_cardset",
    "HandClass",
    "hand_class",
    "rank_hand",
    "rank_hands",
    "private_hands",
    "showdown_values",
    "Equity",
    "hand_vs_range_equity",
]

_SAMPLE_CHUNK = 65536  # run-outs drawn per batch, so memory stays flat for any `samples`


class HandClass(IntEnum):
    """Hand class, valued at the lowest rank value of that class."""

    HIGH_CARD = _t.HIGH_CARD
    PAIR = _t.PAIR
    TWO_PAIR = _t.TWO_PAIR
    TRIPS = _t.TRIPS
    STRAIGHT = _t.STRAIGHT
    FLUSH = _t.FLUSH
    FULL_HOUSE = _t.FULL_HOUSE
    QUADS = _t.QUADS
    STRAIGHT_FLUSH = _t.STRAIGHT_FLUSH


_CLASS_BASES = np.array([int(c) for c in HandClass])


def hand_class(value: int) -> HandClass:
    """The class of a rank value from :func:`rank_hand` or :func:`rank_hands`."""
    if not 0 <= value <= _t.STRAIGHT_FLUSH + 12:
        raise ValueError(f"rank value {value!r} is outside 0..{_t.STRAIGHT_FLUSH + 12}")
    return HandClass(int(_CLASS_BASES[np.searchsorted(_CLASS_BASES, value, side="right") - 1]))


def rank_hands(cards: npt.ArrayLike) -> np.ndarray:
    """Rank values (int32, shape (n,)) of n hands given as card ids of shape (n, k).

    All hands have the same number k of cards, 1 to 7. int8 and int64 arrays are
    read without a copy. Other integer types are copied to int64 first, so numba
    compiles two variants per hand size and no more.

    Raises:
        TypeError: the cards are not integers.
        ValueError: the shape is not (n, 1..7), or a hand has a card outside 0..51
            or the same card twice (the message names the hand and the card).
    """
    hands = integer_array(cards, "cards")
    if hands.ndim != 2 or not 1 <= hands.shape[1] <= MAX_HAND_CARDS:
        raise ValueError(
            f"cards must have shape (n_hands, 1..{MAX_HAND_CARDS}) with one hand per row; "
            f"got shape {hands.shape}"
        )
    out = np.empty(hands.shape[0], dtype=np.int32)
    bad = _k.RANK_HANDS_INTO[hands.shape[1]](_kernel_ready(hands), out)
    if bad != _k.ALL_VALID:
        raise ValueError(bad_hand_message(hands[bad], f"hand {bad}"))
    return out


def private_hands(deck_cards: Sequence[int] | np.ndarray, num_hole_cards: int) -> np.ndarray:
    """Every private hand the deck can deal, in canonical order (int8, (n_hands, h)).

    The rows are the ``num_hole_cards``-subsets of the deck, each listed in
    ascending order, in lexicographic order. The deck's own order does not matter.
    For hold'em this gives the 1326 hands (0, 1), (0, 2), …, (50, 51). Range
    vectors such as ``opp_range`` in :func:`hand_vs_range_equity` are indexed by
    these rows.
    """
    deck = np.sort(_distinct_cards(deck_cards, "deck"))
    if not 1 <= num_hole_cards <= deck.size:
        raise ValueError(
            f"num_hole_cards {num_hole_cards!r} is outside 1..{deck.size} for a deck of {deck.size} cards"
        )
    hands: np.ndarray = deck[_k.combination_indices(deck.size, num_hole_cards)].astype(np.int8)
    return hands


def showdown_values(hands: npt.ArrayLike, board: Sequence[int]) -> np.ndarray:
    """Rank value (int32) of every private hand together with a fixed board.

    ``hands`` has shape (n_hands, h), for example from :func:`private_hands`. A
    hand that shares a card with the board cannot be dealt and gets -1, which is
    below every real value. Best-response code can sort by this value and then
    sweep.
    """
    rows = integer_array(hands, "hands")
    board_cards = _distinct_cards(board, "board")
    if rows.ndim != 2 or not 1 <= rows.shape[1] <= MAX_HAND_CARDS - board_cards.size:
        raise ValueError(
            f"hands must have shape (n_hands, h) with 1 <= h and h + {board_cards.size} board cards "
            f"at most {MAX_HAND_CARDS}; got shape {rows.shape}"
        )
    if rows.size:
        # Ranking the hands alone checks every row: card ids in range, no repeats.
        rank_hands(rows)
    return _k.showdown_values_kernel(_k.cardsets(_kernel_ready(rows)), _cardset(board_cards))


@dataclass(frozen=True, slots=True)
class Equity:
    """Showdown outcome of a hand against a range: the probabilities of a win and of a tie."""

    win: float
    tie: float

    @property
    def value(self) -> float:
        """Expected share of the pot heads-up: a win counts 1, a tie 1/2."""
        return self.win + self.tie / 2


def hand_vs_range_equity(
    hole: Sequence[int],
    opp_range: npt.ArrayLike,
    board: Sequence[int],
    *,
    deck: Sequence[int],
    final_board_size: int,
    samples: int | None = None,
    seed: int | None = None,
) -> Equity:
    """Equity of our hole cards against one opponent's range at showdown.

    The opponent's hand is drawn from ``opp_range``, a vector of non-negative
    weights over ``private_hands(deck, len(hole))``. Hands that share a card with
    ours or with the board get no weight, and the rest are renormalised. The board
    is then dealt out to ``final_board_size`` cards from what is left of the deck.
    By default every run-out is enumerated, so the result is exact. A hold'em flop
    has C(47, 2) = 1081 run-outs, each scored against the whole range, which takes
    milliseconds. Preflop there are C(50, 5), about 2.1 M, which takes about 35 s
    against a full range. ``samples=N`` instead
    draws N run-outs uniformly with ``numpy.random.default_rng(seed)``. Each drawn
    run-out is still scored exactly against the whole range, so the estimate is
    the ratio of the weighted sums. With no board cards left to deal, ``samples``
    changes nothing.

    Raises:
        ValueError: cards outside 0..51, repeated, or not in ``deck``; a range of
            the wrong length or with negative or non-finite weights; a range with
            no weight on hands that avoid our cards and the board; a
            ``final_board_size`` below the current board, or more than 7 cards per
            player, or more than the deck can deal.
    """
    deck_cards = _distinct_cards(deck, "deck")
    hole_cards = _distinct_cards(hole, "hole")
    board_cards = _distinct_cards(board, "board")
    _require_in_deck(hole_cards, deck_cards, "hole")
    _require_in_deck(board_cards, deck_cards, "board")
    shared = np.intersect1d(hole_cards, board_cards)
    if shared.size:
        raise ValueError(f"card {int(shared[0])} is both in the hole and on the board")
    num_hole = hole_cards.size
    if num_hole == 0:
        raise ValueError("hole must hold at least one card")
    if not board_cards.size <= final_board_size <= MAX_HAND_CARDS - num_hole:
        most = MAX_HAND_CARDS - num_hole
        raise ValueError(
            f"final_board_size {final_board_size!r} is outside {board_cards.size}..{most} "
            f"(at least the {board_cards.size} board cards dealt, at most {MAX_HAND_CARDS} cards "
            f"with {num_hole} hole cards)"
        )
    if samples is not None and not (isinstance(samples, (int, np.integer)) and samples >= 1):
        raise ValueError(f"samples {samples!r} must be a positive whole number of run-outs")
    hands = private_hands(deck_cards, num_hole)
    weights = np.asarray(opp_range, dtype=np.float64)
    if weights.shape != (hands.shape[0],):
        raise ValueError(
            f"opp_range must have one weight per private hand, shape ({hands.shape[0]},); "
            f"got shape {weights.shape}"
        )
    invalid = ~np.isfinite(weights) | (weights < 0)
    if invalid.any():
        index = int(np.flatnonzero(invalid)[0])
        weight = float(weights[index])
        raise ValueError(f"opp_range[{index}] = {weight!r} is not a finite non-negative weight")

    opp_sets = _k.cardsets(hands)
    hero_set = _cardset(hole_cards)
    board_set = _cardset(board_cards)
    live = (opp_sets & (hero_set | board_set)) == 0
    live &= weights > 0
    if not live.any():
        raise ValueError("opp_range has no weight on hands that avoid our hole cards and the board")

    undealt = np.setdiff1d(deck_cards, np.concatenate([hole_cards, board_cards]))
    to_deal = final_board_size - board_cards.size
    if undealt.size - num_hole < to_deal:
        raise ValueError(
            f"the deck cannot deal {to_deal} more board cards: {undealt.size} cards are left "
            f"and the opponent holds {num_hole}"
        )

    def totals(completions: np.ndarray) -> np.ndarray:
        return np.array(
            _k.range_showdown_totals(hero_set, board_set, completions, opp_sets[live], weights[live])
        )

    if samples is None or to_deal == 0:
        win, tie, total = totals(undealt[_k.combination_indices(undealt.size, to_deal)])
    else:
        rng = np.random.default_rng(seed)
        win = tie = total = 0.0
        for start in range(0, samples, _SAMPLE_CHUNK):
            count = min(_SAMPLE_CHUNK, samples - start)
            # The to_deal smallest of uniform keys pick a uniform subset of the undealt cards.
            keys = rng.random((count, undealt.size))
            picks = np.argpartition(keys, to_deal - 1, axis=1)[:, :to_deal]
            chunk = totals(undealt[picks])
            win, tie, total = win + chunk[0], tie + chunk[1], total + chunk[2]
        if total == 0:
            raise ValueError(
                f"none of the {samples} sampled run-outs left the opponent a hand in range; "
                "draw more samples"
            )
    return Equity(win=float(win / total), tie=float(tie / total))


def _kernel_ready(hands: np.ndarray) -> np.ndarray:
    """C-contiguous int8 or int64, the two dtypes the kernels are compiled for."""
    dtype = np.int8 if hands.dtype == np.int8 else np.int64
    return np.ascontiguousarray(hands, dtype=dtype)


def _distinct_cards(cards: Sequence[int] | np.ndarray, name: str) -> np.ndarray:
    """A 1-D int64 array of valid, distinct card ids, or a ValueError naming the bad one."""
    array = integer_array(cards, name)
    if array.ndim != 1:
        raise ValueError(f"{name} must be a flat sequence of card ids; got shape {array.shape}")
    cards_list = [int(c) for c in array]
    if len(set(cards_list)) != len(cards_list) or not all(0 <= c < NUM_CARDS for c in cards_list):
        raise ValueError(bad_hand_message(array, name))
    return array.astype(np.int64)


def _cardset(cards: np.ndarray) -> int:
    return int(_k.cardsets(cards[None, :])[0])


def _require_in_deck(cards: np.ndarray, deck: np.ndarray, name: str) -> None:
    missing = np.setdiff1d(cards, deck)
    if missing.size:
        raise ValueError(f"card {int(missing[0])} in {name} is not in the deck {deck.tolist()}")
