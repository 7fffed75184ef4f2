"""Class values and rank-mask lookup tables of the hand evaluator (numpy only).

The values are those of ``rankCardset`` in the ACPC reference dealer (``game.c``
with its generated ``evalHandTables``). The tables are not copied from the
reference: numpy rebuilds them at import (about a millisecond) from the rules
they encode, and the tests pin the values the rules give.

They live apart from the numba kernels (:mod:`poker._eval_kernels`) so that a
process ranking a few hands in plain Python (the dealer, through
:mod:`poker.hand_rank`) does not import numba.

Each table is indexed by a 13-bit rank mask (bit r is rank r, 0 = "2" … 12 = "A"):

* ``ONE_SUIT_VAL`` reads the mask as the cards of one suit. It gives 12103 + the top
  rank of the mask's best straight (a straight flush), else 9633 + colex5 when the
  mask has 5 or more ranks (a flush), else 0.
* ``ANY_SUIT_VAL`` reads the mask as the distinct ranks held. It gives 9620 + the top
  rank of the best straight, else colex5 (high card).
* ``PAIR_OTHER_VAL`` and ``TRIPS_OTHER_VAL`` give colex3 and colex2 of the kickers.

``colexK(mask)`` takes the top min(K, popcount) ranks ``b_1 < … < b_j`` of the mask
and returns ``C(b_1, 1) + C(b_2, 2) + … + C(b_j, j)``. For a fixed j this follows
the order of the ranks read from the highest down, and a single rank is worth its
rank index. A straight is a run of five ranks; A-2-3-4-5 is the lowest, with top 3.
"""

from __future__ import annotations

import numpy as np

HIGH_CARD = 0
PAIR = 1287
TWO_PAIR = 5005
TRIPS = 8606
STRAIGHT = 9620
FLUSH = 9633
FULL_HOUSE = 10920
QUADS = 11934
STRAIGHT_FLUSH = 12103

NUM_MASKS = 1 << 13
RANK_MASK = NUM_MASKS - 1
WHEEL = (1 << 12) | 0b1111  # A, 2, 3, 4, 5


def _comb(n: int, k: int) -> int:
    out = 1
    for i in range(k):
        out = out * (n - i) // (i + 1)
    return out


def _popcount(masks: np.ndarray) -> np.ndarray:
    count = np.zeros_like(masks)
    for bit in range(13):
        count += (masks >> bit) & 1
    return count


def _colex_top(masks: np.ndarray, cap: int) -> np.ndarray:
    """colex rank of the top min(cap, popcount) bits of every mask."""
    binom = np.array([[_comb(n, k) for k in range(cap + 1)] for n in range(13)], dtype=np.int64)
    wanted = np.minimum(_popcount(masks), cap)
    taken = np.zeros_like(masks)
    value = np.zeros_like(masks)
    for bit in range(12, -1, -1):
        take = ((masks >> bit) & 1).astype(bool) & (taken < wanted)
        # Walking down from the top, this bit is the (wanted - taken)-th smallest taken.
        value += np.where(take, binom[bit, np.where(take, wanted - taken, 0)], 0)
        taken += take
    return value


def _straight_top(masks: np.ndarray) -> np.ndarray:
    """Top rank of the highest five-rank run in every mask, -1 where there is none."""
    top = np.full_like(masks, -1)
    for high in range(12, 3, -1):  # from the top down, so the highest run wins
        run = 0b11111 << (high - 4)
        top = np.where((top < 0) & ((masks & run) == run), high, top)
    return np.where((top < 0) & ((masks & WHEEL) == WHEEL), 3, top)


def _build_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    masks = np.arange(NUM_MASKS, dtype=np.int64)
    straight = _straight_top(masks)
    colex5 = _colex_top(masks, 5)
    one_suit = np.where(
        straight >= 0,
        STRAIGHT_FLUSH + straight,
        np.where(_popcount(masks) >= 5, FLUSH + colex5, 0),
    )
    any_suit = np.where(straight >= 0, STRAIGHT + straight, HIGH_CARD + colex5)
    return (
        one_suit.astype(np.uint16),
        any_suit.astype(np.uint16),
        _colex_top(masks, 3).astype(np.uint16),
        _colex_top(masks, 2).astype(np.uint16),
    )


ONE_SUIT_VAL, ANY_SUIT_VAL, PAIR_OTHER_VAL, TRIPS_OTHER_VAL = _build_tables()
