"""The name of a hand as a player says it: "pair of queens", "king high".

The name is read off the hand's rank value (:func:`poker.hand_rank.rank_hand`,
laid out in :mod:`poker.evaluate`), so it always agrees with how the dealer
ranks the hand: the class is the block the value falls in, and the ranks that
name it are decoded from the value (pair rank ``p`` from ``1287 + 286·p + …``,
the flush's top card from its colex5 sum, and so on). Kickers are not named,
except that a high-card hand names its two top cards ("ace-queen high"), which
is what tells two of them apart most of the time.

The best hand of the cards given is named, whatever the game: in hold'em the best
five of seven ("two pair, kings and fives"), in Leduc the hole card with the
board card ("pair of queens", else "king-jack high"), and in Kuhn, where a
hand is one card and no board, every hand is its card: "king high".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

from poker import rank_tables as _t
from poker.cards import rank_of
from poker.hand_rank import rank_hand

__all__ = ["hand_name"]

_RANKS: Final = ("two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "jack", "queen", "king", "ace")
_PLURAL: Final = tuple("sixes" if rank == "six" else rank + "s" for rank in _RANKS)


def hand_name(cards: Sequence[int]) -> str:
    """The name of the best hand in 1 to 7 distinct card ids.

    >>> from poker.cards import cards_from_text
    >>> hand_name(cards_from_text("QsQh")), hand_name(cards_from_text("Kh")), hand_name(cards_from_text("5c4d3h2sAs"))
    ('pair of queens', 'king high', 'straight, five high')

    Raises:
        ValueError: not 1 to 7 distinct cards of the deck (as :func:`rank_hand`).
    """
    value = rank_hand(cards)
    if value >= _t.STRAIGHT_FLUSH:
        top = value - _t.STRAIGHT_FLUSH
        return "royal flush" if top == len(_RANKS) - 1 else f"straight flush, {_RANKS[top]} high"
    if value >= _t.QUADS:
        return f"four {_PLURAL[(value - _t.QUADS) // 13]}"
    if value >= _t.FULL_HOUSE:
        trips, pair = divmod(value - _t.FULL_HOUSE, 78)
        return f"full house, {_PLURAL[trips]} full of {_PLURAL[pair]}"
    if value >= _t.FLUSH:
        return f"flush, {_RANKS[_colex_top(value - _t.FLUSH, 5)]} high"
    if value >= _t.STRAIGHT:
        return f"straight, {_RANKS[value - _t.STRAIGHT]} high"
    if value >= _t.TRIPS:
        return f"three {_PLURAL[(value - _t.TRIPS) // 78]}"
    if value >= _t.TWO_PAIR:
        high, rest = divmod(value - _t.TWO_PAIR, 286)
        return f"two pair, {_PLURAL[high]} and {_PLURAL[rest // 13]}"
    if value >= _t.PAIR:
        return f"pair of {_PLURAL[(value - _t.PAIR) // 286]}"
    highest = sorted((rank_of(card) for card in cards), reverse=True)[:2]  # no pair: distinct ranks
    return "-".join(_RANKS[rank] for rank in highest) + " high"


def _colex_top(colex: int, k: int) -> int:
    """The highest of the ``k`` ranks whose colex sum is ``colex``: the largest
    ``b`` with ``C(b, k) <= colex`` (the combinatorial number system)."""
    top = k - 1
    while math.comb(top + 1, k) <= colex:
        top += 1
    return top
