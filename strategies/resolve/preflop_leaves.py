"""Continuation values at hold'em's pre-flop depth limits, each hand's own,
averaged over every flop.

Why: a pre-flop re-solve stops where the flop is dealt, and what a hand is
worth there decides how wide it calls. Check-down equity (the ``equity``
evaluator) pays every hand its showdown share of the pot, as if no bet were made
after the flop: a weak hand is overpaid (it will be bet off its equity), so the
big blind calls too wide and then folds on the flop more than a bluffer can
exploit (``hunl-modicum`` against local best response: 86 % of hands called a
pot-size raise, 51 % of them folded to a flop pot bet). The blueprint's own
pre-flop values (:meth:`~strategies.resolve.continuations.ContinuationValues.at`)
see the later betting, but only by its few pre-flop buckets (HUNL's: 3, AA and
77 alike).

Here a hand's value is the blueprint continuation's value on the flop
(:meth:`~strategies.resolve.continuations.ContinuationValues.after_deal`, over
flop bucket sequences), with the hand's **own** flop sequence on each flop,
averaged over every flop: for opponent hands of class ``B`` with reach ``r[B]``
each, a hand of class ``A`` gets ``sum_B r[B] * M[A, B]`` with

    M[A, B] = sum_{s, t} Q[A, s, B, t] * V[s, t] / (|A| * C(48, 3)),

``Q[A, s, B, t]`` the number of (flop, hand of A in sequence s, hand of B in
sequence t) with no card shared, counted once per blueprint over the 1,755
suit-isomorphic flops, each weighted by how many flops it stands for. The count
is an integer sum (exact in float64) and the value exactly what averaging the
flop values over all 22,100 flops would give, for a range that is the same on
every hand of a class (the re-solver's pre-flop ranges are; others keep the
pre-flop bucket values). The suit-isomorphic flops stand for their classes
because the blueprint's buckets treat suits alike (tested).
"""

from __future__ import annotations

import math
from typing import Final

import numpy as np
import numpy.typing as npt
from numba import njit

from strategies.cfr.abstraction.card_abstraction import Abstraction
from strategies.resolve.preflop_equity import CLASSES, HandClasses, canonical_boards, hand_classes, sharing

__all__ = ["FlopAveraged", "sequence_pair_counts"]

#: Flops that share no card with two given hands.
FLOPS_PER_PAIR: Final = math.comb(48, 3)


@njit(cache=True)
def _sharing_counts(rows: npt.NDArray[np.int64], weights: npt.NDArray[np.float64], sharing: npt.NDArray[np.int64], width: int) -> npt.NDArray[np.float64]:
    """``sum_f w_f * #{(h, o) on flop f: o is h or shares a card with it}`` by
    (row of h, row of o); ``rows[f, h]`` is -1 where h meets the flop. One
    thread: it runs when an agent is made, and a process that has run numba's
    OpenMP threads cannot fork (process pools of matches and benchmarks do)."""
    counts = np.zeros((width, width))
    for f in range(rows.shape[0]):
        w = weights[f]
        for h in range(rows.shape[1]):
            x = rows[f, h]
            if x < 0:
                continue
            counts[x, x] += w
            for j in range(sharing.shape[1]):
                y = rows[f, sharing[h, j]]
                if y >= 0:
                    counts[x, y] += w
    return counts


def sequence_pair_counts(sequences: Abstraction, cards: npt.NDArray[np.int64], width: int) -> npt.NDArray[np.float64]:
    """``Q`` of the module docstring as ``float64[169 * S, 169 * S]``, row and
    column ``class * S + sequence`` (``S = width`` flop sequences; hands are the
    rows of ``cards``, in the order ``sequences.buckets`` answers)."""
    flops, orbits = canonical_boards(3)
    classes = hand_classes(cards)
    rows = np.empty((len(flops), len(cards)), dtype=np.int64)
    for f, flop in enumerate(flops):
        seq = sequences.buckets(1, [int(c) for c in flop]).astype(np.int64)
        rows[f] = np.where(seq >= 0, classes * width + seq, -1)
    n = CLASSES * width
    present = np.zeros((len(flops), n))  # hands per row on each flop: all pairs are one product
    valid = rows >= 0
    np.add.at(present, (np.nonzero(valid)[0], rows[valid]), 1.0)
    weights = orbits.astype(np.float64)
    counts: npt.NDArray[np.float64] = present.T @ (weights[:, None] * present)
    counts -= _sharing_counts(rows, weights, sharing(cards), n)
    return counts


class FlopAveraged:
    """Pre-flop leaf values from flop values (module docstring) for the hands
    ``cards`` of hold'em and a blueprint's flop ``sequences`` (``width`` of them)."""

    def __init__(self, sequences: Abstraction, cards: npt.NDArray[np.int64], width: int) -> None:
        self.hand_classes = HandClasses(cards)
        self.width = width
        counts = sequence_pair_counts(sequences, cards, width)
        #: ``Q`` as ``[169 * 169, S * S]``: a leaf's class matrix is one product with its ``V``.
        self._pairs = np.ascontiguousarray(
            counts.reshape(CLASSES, width, CLASSES, width).transpose(0, 2, 1, 3).reshape(CLASSES * CLASSES, width * width)
        )
        self._norm = self.hand_classes.sizes[:, None] * FLOPS_PER_PAIR

    def matrix(self, values: npt.NDArray[np.float64], position: int) -> npt.NDArray[np.float64]:
        """``M`` (``[169, 169]``) of ``position`` for the flop values ``values``
        (position 0's chips over flop sequence pairs, ``[S, S]``): position 1's
        hand of class A against B is position 0's B against A, negated."""
        sums = (self._pairs @ np.ascontiguousarray(values, dtype=np.float64).ravel()).reshape(CLASSES, CLASSES)
        if position == 1:
            sums = -sums.T
        out: npt.NDArray[np.float64] = sums / self._norm
        return out

    def values(self, class_reach: npt.NDArray[np.float64], matrices: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """Each hand's value ``[L, H]`` at ``L`` leaves with the opponent's class
        reach ``[L, 169]`` (:meth:`HandClasses.reach`) and the leaves' matrices ``[L, 169, 169]``."""
        out: npt.NDArray[np.float64] = np.einsum("lab,lb->la", matrices, class_reach)[:, self.hand_classes.classes]
        return out
