"""The rank value of one hand, in plain Python (no numba).

:func:`rank_hand` gives the value :mod:`poker.evaluate` documents, from the same
tables as its kernels (:mod:`poker.rank_tables`). Ranking one hand costs about
as much as a kernel call, and a process that ranks only a few hands (the dealer:
two a showdown) then never imports numba, which costs a fifth of a second of
start-up, the price of a hundred heads-up hands.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from poker import rank_tables as _t

if TYPE_CHECKING:
    from poker.state import State

__all__ = ["MAX_HAND_CARDS", "NUM_CARDS", "rank_hand", "hand_values", "integer_array", "bad_hand_message"]

MAX_HAND_CARDS = 7
NUM_CARDS = 52


def hand_values(state: State, hole: Sequence[Sequence[int]], board: Sequence[int]) -> tuple[Fraction, ...]:
    """Chips won or lost per position in the finished hand ``state``, with each
    position's ``hole`` cards and the dealt ``board`` (the cards of rounds not
    reached are ignored): at a showdown the unfolded hands are ranked here, the
    one place that turns a deal into a result for the dealer, logs and agents."""
    if not state.is_showdown():
        return state.values()
    shown = tuple(board[: state.game.total_board_cards(state.round)])
    return state.values([0 if state.folded[p] else rank_hand(tuple(cards) + shown) for p, cards in enumerate(hole)])


def rank_hand(cards: Sequence[int]) -> int:
    """Rank value of one hand of 1 to 7 card ids (see :mod:`poker.evaluate`),
    in plain Python (:func:`_rank_one`; the module docstring says why)."""
    hand = integer_array(cards, "cards")
    if hand.ndim != 1 or not 1 <= hand.shape[0] <= MAX_HAND_CARDS:
        raise ValueError(
            f"a hand is a sequence of 1 to {MAX_HAND_CARDS} card ids; got shape {hand.shape}"
        )
    ids: list[int] = hand.tolist()
    if not all(0 <= card < NUM_CARDS for card in ids) or len(set(ids)) != len(ids):
        raise ValueError(bad_hand_message(hand, "the hand"))
    return _rank_one(ids)


# The kernels' tables as lists, indexed by a 13-bit rank mask (see ``rank_tables``).
_ONE_SUIT_VAL: list[int] = _t.ONE_SUIT_VAL.tolist()
_ANY_SUIT_VAL: list[int] = _t.ANY_SUIT_VAL.tolist()
_PAIR_OTHER_VAL: list[int] = _t.PAIR_OTHER_VAL.tolist()
_TRIPS_OTHER_VAL: list[int] = _t.TRIPS_OTHER_VAL.tolist()


def _top_rank(mask: int) -> int:
    """The highest rank in a rank mask, 0 for none (the reference's ``topBit``)."""
    return max(mask.bit_length() - 1, 0)


def _rank_one(cards: list[int]) -> int:
    """The value of valid, distinct card ids, testing the classes from the top
    down as the reference's ``rankCardset`` does (the kernel takes the maximum
    over all classes instead; the values are the same)."""
    suits = [0, 0, 0, 0]  # rank mask of each suit
    for card in cards:
        suits[card & 3] |= 1 << (card >> 2)
    a, b, c, d = suits
    flush = max(_ONE_SUIT_VAL[a], _ONE_SUIT_VAL[b], _ONE_SUIT_VAL[c], _ONE_SUIT_VAL[d])  # straight flush, flush or 0
    if flush >= _t.STRAIGHT_FLUSH:
        return flush
    # The ranks held in at least one, two, three and four suits.
    once = a | b | c | d
    twice = (a & b) | (a & c) | (a & d) | (b & c) | (b & d) | (c & d)
    thrice = (a & b & c) | (a & b & d) | (a & c & d) | (b & c & d)
    four = a & b & c & d
    if four:
        quad_rank = _top_rank(four)
        return _t.QUADS + 13 * quad_rank + _top_rank(once ^ (1 << quad_rank))
    trip_rank = _top_rank(thrice)
    if thrice and twice ^ (1 << trip_rank):
        return _t.FULL_HOUSE + 78 * trip_rank + _top_rank(twice ^ (1 << trip_rank))
    if flush:
        return flush
    straight_or_high: int = _ANY_SUIT_VAL[once]
    if straight_or_high >= _t.STRAIGHT:
        return straight_or_high
    if thrice:
        return _t.TRIPS + 78 * trip_rank + _TRIPS_OTHER_VAL[once ^ (1 << trip_rank)]
    if not twice:
        return straight_or_high
    pair_rank = _top_rank(twice)
    kickers = once ^ (1 << pair_rank)
    lower_pairs = twice ^ (1 << pair_rank)
    if not lower_pairs:
        return _t.PAIR + 286 * pair_rank + _PAIR_OTHER_VAL[kickers]
    low_rank = _top_rank(lower_pairs)
    return _t.TWO_PAIR + 286 * pair_rank + 13 * low_rank + _top_rank(kickers ^ (1 << low_rank))


def integer_array(cards: npt.ArrayLike, name: str) -> np.ndarray:
    """``cards`` as an integer numpy array (``[]`` included); TypeError for other dtypes."""
    array = np.asarray(cards)
    if array.size == 0 and array.dtype == np.float64:
        array = array.astype(np.int64)  # numpy reads [] as float64
    if array.dtype.kind not in "iu":
        raise TypeError(f"{name} must be integer card ids; got dtype {array.dtype}")
    return array


def bad_hand_message(hand: np.ndarray, where: str) -> str:
    """Why ``hand`` is not a hand: its first card outside the deck, or a repeated card."""
    cards = [int(c) for c in hand]
    for card in cards:
        if not 0 <= card < NUM_CARDS:
            return f"card {card} in {where} {cards} is outside 0..{NUM_CARDS - 1}"
    repeated = next(card for card in cards if cards.count(card) > 1)
    return f"card {repeated} appears more than once in {where} {cards}"
