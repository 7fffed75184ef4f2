"""Numba kernels behind :mod:`poker.evaluate`.

The values are those of ``rankCardset`` in the ACPC reference dealer (``game.c``),
through the class values and rank-mask tables of :mod:`poker.rank_tables`.

A hand is held as a 64-bit *cardset*, with bit ``16 * suit + rank`` set for each
card. Then ``(cardset >> 16 * suit) & 0x1FFF`` is the 13-bit rank mask of one
suit, which is the reference's ``Cardset.bySuit``. Everything is ``int64`` (bit 63
is never used) because numba turns mixed ``uint64``/``int64`` arithmetic into
floats.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numba import config, njit

from poker.rank_tables import (
    ANY_SUIT_VAL,
    FULL_HOUSE,
    ONE_SUIT_VAL,
    PAIR,
    PAIR_OTHER_VAL,
    QUADS,
    RANK_MASK,
    TRIPS,
    TRIPS_OTHER_VAL,
    TWO_PAIR,
)

if config.DISABLE_JIT:  # plain-Python run of the kernels (NUMBA_DISABLE_JIT=1)

    def leading_zeros(value: int) -> int:
        return 64 - int(value).bit_length()

else:
    # numba has no public count-leading-zeros; this intrinsic is LLVM's ctlz.
    from numba.cpython.unsafe.numbers import leading_zeros

ALL_VALID = -1  # rank_hands_into status when no hand has a bad card


@njit(cache=True, nogil=True, inline="always")
def card_bit(card: int) -> int:
    """Cardset bit of a card id ``rank * 4 + suit``; any int gives a shift in 0..63."""
    c = np.int64(card)
    return np.int64(1) << (((c & 3) << 4) + ((c >> 2) & 15))


@njit(cache=True, nogil=True, inline="always")
def _top(mask: int) -> int:
    """Index of the highest set bit, and 0 for the empty mask (the reference's topBit)."""
    return 63 - leading_zeros(np.int64(mask) | 1)


@njit(cache=True, nogil=True, inline="always")
def _keep(condition: int, value: int) -> int:
    """``value`` if ``condition`` is nonzero else 0, without a branch."""
    return value & -np.int64(condition != 0)


@njit(cache=True, nogil=True, inline="always")
def rank_cardset(cardset: int) -> int:
    """Reference value of a cardset of 1..7 cards.

    The reference tests the categories from straight flush down and returns the
    first that applies. The categories' value ranges are disjoint and in the same
    order, so that is the maximum over every category present; computing all of
    them with masks instead of branches doubles the speed on random hands (the
    category branches mispredict). It gave the same value as a port of the
    reference's control flow on every 1- to 7-card hand when it was written; the
    tests keep exact-value checks against a plain-Python reference.
    """
    c0 = cardset & RANK_MASK
    c1 = (cardset >> 16) & RANK_MASK
    c2 = (cardset >> 32) & RANK_MASK
    c3 = (cardset >> 48) & RANK_MASK
    best = max(
        max(np.int64(ONE_SUIT_VAL[c0]), np.int64(ONE_SUIT_VAL[c1])),
        max(np.int64(ONE_SUIT_VAL[c2]), np.int64(ONE_SUIT_VAL[c3])),
    )
    # Ranks held at least once / twice / three times / four times.
    once = c0 | c1
    twice = c0 & c1
    thrice = twice & c2
    twice |= once & c2
    once |= c2
    four = thrice & c3
    thrice |= twice & c3
    twice |= once & c3
    once |= c3
    best = max(best, np.int64(ANY_SUIT_VAL[once]))
    quad_rank = _top(four)
    best = max(best, _keep(four, QUADS + 13 * quad_rank + _top(once ^ (1 << quad_rank))))
    trip_rank = _top(thrice)
    paired = twice ^ (1 << trip_rank)
    full_house = FULL_HOUSE + 78 * trip_rank + _top(paired)
    best = max(best, _keep((thrice != 0) & (paired != 0), full_house))
    trips = TRIPS + 78 * trip_rank + np.int64(TRIPS_OTHER_VAL[once ^ (1 << trip_rank)])
    best = max(best, _keep(thrice, trips))
    pair_rank = _top(twice)
    kickers = once ^ (1 << pair_rank)
    lower_pairs = twice ^ (1 << pair_rank)
    low_rank = _top(lower_pairs)
    two_pair = TWO_PAIR + 286 * pair_rank + 13 * low_rank + _top(kickers ^ (1 << low_rank))
    best = max(best, _keep((twice != 0) & (lower_pairs != 0), two_pair))
    pair = PAIR + 286 * pair_rank + np.int64(PAIR_OTHER_VAL[kickers])
    return max(best, _keep(twice, pair))


def _make_rank_hands_into(cards_per_hand: int) -> Callable[[np.ndarray, np.ndarray], int]:
    """Batch ranking kernel for hands of exactly ``cards_per_hand`` cards.

    A constant card count lets LLVM unroll the card loop. With a runtime count it
    vectorises that short loop instead, and the vector prologue and remainder cost
    about 10%. Building every cardset first and ranking them in a second loop runs
    twice as fast as one fused loop, which LLVM schedules badly (both measured on
    7-card hands).
    """

    @njit(cache=True, nogil=True)
    def rank_hands_into(cards: np.ndarray, out: np.ndarray) -> int:
        """Rank every row of ``cards`` (n, cards_per_hand) into ``out`` (n,) int32.

        Returns the index of the first row with a card outside 0..51 or a repeated
        card (``out`` is then left unwritten), else ``ALL_VALID``.
        """
        n = cards.shape[0]
        sets = np.empty(n, dtype=np.int64)
        for i in range(n):
            union = np.int64(0)
            total = np.int64(0)
            bad = False
            for j in range(cards_per_hand):
                card = np.int64(cards[i, j])
                bad |= (card < 0) | (card > 51)
                bit = card_bit(card)
                union |= bit
                total += bit
            # A repeated bit carries in the sum, so the sum differs from the union.
            if bad or total != union:
                return i
            sets[i] = union
        for i in range(n):
            out[i] = rank_cardset(sets[i])
        return ALL_VALID

    return rank_hands_into


# RANK_HANDS_INTO[k] ranks hands of k cards.
RANK_HANDS_INTO = {k: _make_rank_hands_into(k) for k in range(1, 8)}


@njit(cache=True, nogil=True)
def cardsets(hands: np.ndarray) -> np.ndarray:
    """Cardset of every row of ``hands`` (n, k) of valid, distinct card ids."""
    n, k = hands.shape
    out = np.zeros(n, dtype=np.int64)
    for i in range(n):
        for j in range(k):
            out[i] |= card_bit(hands[i, j])
    return out


@njit(cache=True, nogil=True)
def showdown_values_kernel(hand_sets: np.ndarray, board_set: int) -> np.ndarray:
    """Value of every private hand (as cardsets) with the board; -1 if they share a card."""
    out = np.empty(hand_sets.shape[0], dtype=np.int32)
    for i in range(hand_sets.shape[0]):
        if hand_sets[i] & board_set:
            out[i] = -1
        else:
            out[i] = rank_cardset(hand_sets[i] | board_set)
    return out


@njit(cache=True, nogil=True)
def runout_outcomes(
    hero_set: int, board_set: int, completions: np.ndarray, opp_sets: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per opponent hand, the hero's wins (ties 1/2) and the run-outs counted.

    ``completions`` (n_runouts, m) holds the card ids each run-out adds to the
    board; a run-out counts an opponent hand only if they share no card. A range
    over the opponent hands weighs these (``range @ wins / range @ counts``), so
    one pass serves every range the hand later narrows to."""
    n = opp_sets.shape[0]
    wins = np.zeros(n)
    counts = np.zeros(n)
    for b in range(completions.shape[0]):
        full = np.int64(board_set)
        for j in range(completions.shape[1]):
            full |= card_bit(completions[b, j])
        hero = rank_cardset(hero_set | full)
        for o in range(n):
            if opp_sets[o] & full:
                continue
            opp = rank_cardset(opp_sets[o] | full)
            counts[o] += 1.0
            if hero > opp:
                wins[o] += 1.0
            elif hero == opp:
                wins[o] += 0.5
    return wins, counts


@njit(cache=True, nogil=True)
def combination_indices(n: int, m: int) -> np.ndarray:
    """All m-subsets of range(n) as ascending rows, in lexicographic order."""
    total = np.int64(1)
    for i in range(m):
        total = total * (n - i) // (i + 1)
    out = np.empty((total, m), dtype=np.int64)
    row = np.arange(m)
    for t in range(total):
        out[t, :] = row
        # Bump the rightmost index that still has room and restart those after it.
        i = m - 1
        while i >= 0 and row[i] == n - m + i:
            i -= 1
        if i < 0:
            break
        row[i] += 1
        for j in range(i + 1, m):
            row[j] = row[j - 1] + 1
    return out


@njit(cache=True, nogil=True)
def range_showdown_totals(
    hero_set: int,
    board_set: int,
    completions: np.ndarray,
    opp_sets: np.ndarray,
    opp_weights: np.ndarray,
) -> tuple[float, float, float]:
    """Weighted (win, tie, total) of the hero against the opponent hands over run-outs.

    ``completions`` (n_runouts, m) holds the card ids that each run-out adds to the
    board. ``opp_sets`` and ``opp_weights`` are the opponent hands (as cardsets) that
    avoid the hero and the current board. A run-out counts an opponent hand only if
    they share no card. This is exact card removal, because every such hand meets
    the same number of run-outs.
    """
    win = 0.0
    tie = 0.0
    total = 0.0
    for b in range(completions.shape[0]):
        full = np.int64(board_set)
        for j in range(completions.shape[1]):
            full |= card_bit(completions[b, j])
        hero = rank_cardset(hero_set | full)
        for o in range(opp_sets.shape[0]):
            if opp_sets[o] & full:
                continue
            weight = opp_weights[o]
            opp = rank_cardset(opp_sets[o] | full)
            total += weight
            if hero > opp:
                win += weight
            elif hero == opp:
                tie += weight
    return win, tie, total
